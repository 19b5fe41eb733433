"""What specedit keeps on disk: the user's files, written safely, and its own state.

``files`` (reads, atomic permission-aware writes), ``backups`` (the bytes each write replaced),
``undo`` (undo and redo from them), ``state`` (private state folders, durable writes).
"""
