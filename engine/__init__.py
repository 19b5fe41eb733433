"""The engine: speculative decoding over token ids, knowing nothing of text or files.

``backend`` (the protocols a model backend implements, and the user-facing errors),
``decode`` (the loop: prefill, then draft -> verify in one target call -> accept),
``prefill`` (the prompt read in canonical batches), ``exactness`` (the load-time check
of batched against 1-token logits),
``draft`` (the proposer protocol), ``lookup`` (prompt lookup with a copy cursor),
``draft_model`` and ``combined`` (a small model as proposer, alone or with lookup),
``verifier`` (where logits are judged: on the host or the device), ``rejection`` and
``sampling`` (the reference verification and the target distribution),
``policy`` (adaptive k from measured cost and acceptance), ``specmath`` (the maths those
decisions share) and ``metrics`` (every figure any display shows).
"""
