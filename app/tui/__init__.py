"""The specedit terminal app (Textual): ``run_tui(args, config)`` is what ``specedit [PATH]``
runs.

Contract: ``run_tui(args, config)`` (``args.path``: file to open or None for a file picker;
``config``: the ``LoadConfig`` of the command line's model flags, None in the fields not
given) runs the app full screen and returns the exit status. Its settings come from the
config file, then ``$SPECEDIT_MODEL``, then those flags (``app.tui.config.load_settings``).
While it runs, log records go to ``<state>/tui.log`` instead of the terminal, so they
cannot corrupt the display. A missing ``textual`` raises ``FileError`` with the
install hint (the CLI prints it as one line).
"""

from __future__ import annotations

import logging
from typing import Any

from ..options import LoadConfig
from ..store.files import FileError
from ..store.state import PrivateRotatingFileHandler, state_subdir

log = logging.getLogger(__name__)

__all__ = ["run_tui"]


def _log_to_file() -> list[logging.Handler]:
    """Swap terminal log handlers for a file in the state dir; return the removed ones."""
    root = logging.getLogger()
    removed = [h for h in root.handlers if isinstance(h, logging.StreamHandler)]
    removed = [h for h in removed if not isinstance(h, logging.FileHandler)]
    for h in removed:
        root.removeHandler(h)
    try:
        path = state_subdir() / "tui.log"  # private: folder 0700, file 0600
        handler = PrivateRotatingFileHandler(path, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    except OSError:
        root.addHandler(logging.NullHandler())
    return removed


def run_tui(args: Any, config: LoadConfig) -> int:
    """Run the terminal app on ``args.path`` with the model ``config`` names; return the
    exit status."""
    try:
        from .app import SpecEditApp
        from .config import load_history, load_settings
    except ImportError as exc:
        raise FileError(
            f"the terminal app needs the 'tui' extra ({exc.name} is missing): "
            "pip install 'specedit[tui]'"
        ) from None
    removed = _log_to_file()
    try:
        settings, problems = load_settings(config)
        app = SpecEditApp(
            getattr(args, "path", None),
            settings=settings,
            history=load_history(),
            problems=problems,
        )
        code = app.run()
    finally:
        root = logging.getLogger()
        for h in removed:
            root.addHandler(h)
    return int(code or 0)
