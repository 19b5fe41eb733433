"""The product: what users run. Each folder is a room with one job; arrows run downward.

``cli/`` the ``specedit`` command; ``tui/`` the terminal app; ``server/`` the socket and the
HTTP API (the front ends); ``edit/`` a rewrite: the plan, the model's answer read, placed,
repaired and sent back for another round; ``answer/`` questions answered from files, with
checked quotes; ``check/`` verdicts on a finished change (no answer key); ``runtime/`` a
loaded model and running one prompt on it (locally or on a remote engine); ``code/`` what
the program reads in source code without a model (syntax, names, diffs, outlines, renames);
``store/`` the user's files, backups, undo and private state; ``options`` one set of
defaults for every front end.
"""
