"""What the program reads in source code without a model.

``syntax`` (tree-sitter and the one language map), ``source`` (a text read and parsed once,
``Change``: one answer diffed once), ``names`` (where a name is used, renamed),
``diff`` (line hunks), ``outline`` (a long file's outline and windows), ``rename_scan`` and
``refactor`` (``specedit rename``: a Python rename by rope's analysis).
"""
