"""A rewrite of a file by the model: the plan, its stages and what the program does to an answer.

``request`` (the request read once), ``rewrite`` (the plan of every stage and the entry point,
warm-up), ``stages`` (one generation read into a result), ``result`` (``RewriteResult``, its
status and edit mode), ``rounds`` (repair rounds sent back to the model), ``edits`` and ``edit_readings``
(search/replace blocks: format, reading, placing), ``search_guard`` (search sides that can only
copy), ``repair`` (fidelity repairs of copies), ``review`` (the model as reviewer), ``live`` (the
live diff of a rewrite being written).
"""
