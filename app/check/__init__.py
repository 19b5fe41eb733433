"""Verdicts on a finished change that need no answer key; they flag, never rewrite.

``checks`` (every verdict on a result), ``intent`` (what the instruction asks, read without a
model), ``bindings`` (names read and bound), ``compilers`` (a language's own tools),
``config_keys`` (keys a change removes from JSON, TOML, YAML); ``data/`` their data files.
"""
