"""Messages between the terminal app's thread workers and its screens.

Contract: background threads (the rewrite and answer workers, the model loader, a model
pull, the file watcher) never touch widgets; they post one of these messages (``post_message`` is
thread safe) and the screen or app handles it on the UI thread. Streaming text is *not*
sent as messages: the rewrite worker appends it to a :class:`~.live.LiveRun` buffer that
the UI polls a few times a second, so the engine never waits on the UI.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from ..answer.answer import AnswerResult
from ..edit.rewrite import RewriteResult
from ..runtime.loaded_model import LoadedModel


@dataclass
class RewriteFinished(Message):
    """The rewrite worker returned (ok, cancelled or no output)."""

    result: RewriteResult


@dataclass
class RewriteFailed(Message):
    """The rewrite worker raised; ``error`` is one user-facing line."""

    error: str
    does_not_fit: bool = False
    """The text did not fit the model's context (``app.store.files.DoesNotFit``): a region may."""


@dataclass
class AnswerFinished(Message):
    """The answer worker returned (ok, cancelled or cut at the token limit)."""

    question: str
    result: AnswerResult


@dataclass
class AnswerFailed(Message):
    """The answer worker raised; ``error`` is one user-facing line."""

    error: str


@dataclass
class ModelLoaded(Message):
    """A model finished loading and is ready."""

    loaded: LoadedModel
    number: int = 0
    """Which load (``SpecEditApp.start_load``) this ends."""


@dataclass
class ModelStage(Message):
    """Where a model load is (``app.runtime.loaded_model.load_model``'s ``on_stage``)."""

    model: str
    stage: str
    """``weights``, ``draft``, ``exactness`` (a first load) or ``calibration``."""
    detail: str
    """The backend, then ``"<backend> on <device>"`` once the weights are in."""
    number: int = 0


@dataclass
class ModelFailed(Message):
    """Loading a model failed; ``error`` is one user-facing line."""

    model: str
    error: str
    missing: bool = False
    """True when the model is a catalog model that is not pulled yet."""
    number: int = 0


@dataclass
class PullProgress(Message):
    """Progress of a model pull (bytes done of total)."""

    label: str
    done: int
    total: int


@dataclass
class PullFinished(Message):
    """A pull ended; ``error`` is empty on success."""

    model: str
    error: str = ""


@dataclass
class FileChanged(Message):
    """The watched file was created, modified, moved over or deleted on disk."""

    path: str
