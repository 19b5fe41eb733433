"""A loaded model and one prompt run on it: the app's only door to the engine.

``loaded_model`` (``load_model``, ``LoadedModel``), ``generation`` (``run_prompt``, the one
door), ``runner`` (the ``Runner`` protocol, ``RunResult``, ``TextSink``), ``local_runner`` (the
engine in this process), ``remote_engine`` (the target on an OpenAI-compatible server),
``prompt`` (the ``Prompt``: ids, spans, fence; the builders), ``stream`` (the output as text),
``prompt_cache`` (prompt prefixes on disk), ``copy_guard`` (each token's bytes, for the guards
that only let the decoder copy).
"""
