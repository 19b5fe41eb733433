"""Questions answered from context files, with quotes the program checks.

``quotes`` (citations found and checked), ``quote_guard`` (quoted passages that can only copy
their file), ``quote_insert`` (passages the program writes), ``passage_rank`` (the lines likely
to state an answer).
"""
