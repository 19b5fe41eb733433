"""Widgets of the terminal app: the live diff view and the metrics status bar."""
