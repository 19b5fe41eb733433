"""The product: what users run.

``cli`` (the ``specedit`` command), ``tui/`` (the terminal app), ``server/`` (the socket
for editor plugins), ``options`` (what to load and how to rewrite: one set of defaults),
``loaded_model`` (a loaded model), ``prompt`` (prompts and their spans), ``stream`` (the
output as text: the fenced block), ``generation`` (run one prompt: the one door every
front end and the benchmarks use), ``rewrite`` (rewrite, warm-up, answer), ``checks``
(results that drop lines), ``diff`` (hunks), ``files`` (safe reads and writes, state),
``prompt_cache`` (prompt prefixes on disk), ``syntax`` (tree-sitter, the language map).
"""
