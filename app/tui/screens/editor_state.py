"""What the editor screen's parts share: one explicit state object.

Contract: ``EditorScreen`` holds one :class:`EditorState` as ``state``; its mixins
(``InstructionOps``, ``AskOps``, ``ReviewOps``, ``FileOps``) read and change the run and the file
through it, never through attributes of each other. Widgets, timers and the watcher stay
on the screen; ``mode`` is the screen's reactive. ``spec_app(screen)`` is the app, typed.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ...edit.rewrite import WarmResult
from ...store.files import SourceFile
from ..live import LiveRun
from ..review import Review

if TYPE_CHECKING:
    from ..app import SpecEditApp


@dataclass
class EditorState:
    """The file, the run, the result under review and what the next run asks for."""

    src: SourceFile
    """The file as last read or written."""
    path: Path
    """Where it lives."""
    shown_path: str
    """``path`` as the title shows it."""
    lang: str | None
    """Its tree-sitter language, if any."""
    live: LiveRun | None = None
    """The rewrite or answer streaming now, or the last one (the status bar's figures)."""
    review: Review | None = None
    """Hunk-by-hunk review of the last result."""
    result: Any = None
    """The last finished ``RewriteResult`` (what feedback is about)."""
    last_instruction: str = ""
    last_region: tuple[int, int] | None = None
    region_mode: bool = False
    """F3: rewrites cover the definition at the cursor, or the selection."""
    context_files: list[tuple[str, str]] = field(default_factory=list)
    """(name, text) of the context files (F4)."""
    asking: bool = False
    """F6: Enter in the instruction line asks a question about the files (``AskOps``)."""
    question: str = ""
    """The question asked last."""
    answer: Any = None
    """The last finished ``AnswerResult``."""
    conflict: SourceFile | None = None
    """The file as changed on disk while a result was pending."""
    conflict_gone: bool = False
    rerun_pending: bool = False
    queued: str | None = None
    """An instruction given while the model loads: it runs when the model is ready."""
    warm_result: WarmResult | None = None
    warm_key: tuple | None = None
    warm_stop: threading.Event | None = None
    shown: object = None
    """The preview last rendered (the tick redraws only when it changes)."""
    hinted: bool = False
    run_started: float = 0.0
    last_calls: int = -1
    last_tick: float = 0.0

    @classmethod
    def for_file(cls, src: SourceFile, shown_path: str, lang: str | None) -> EditorState:
        assert src.path is not None
        return cls(src=src, path=src.path, shown_path=shown_path, lang=lang)


def spec_app(screen: Any) -> SpecEditApp:
    """``screen.app``, typed as the terminal app (its settings, history and actions)."""
    return cast("SpecEditApp", screen.app)
