"""Screens of the terminal app: editor (main), file picker, settings, help, confirm."""
