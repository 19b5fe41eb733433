"""Model backends (llama.cpp, torch) implementing ``engine.backend``'s protocols, the
catalog of pinned GGUF models pulled from PyPI wheels, and GGUF metadata reading.

Nothing here imports the app.
"""
