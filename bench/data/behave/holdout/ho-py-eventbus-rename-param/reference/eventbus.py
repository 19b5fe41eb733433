"""An in-process publish/subscribe bus for the desktop client's UI components.

Topics are dotted strings (``"sync.done"``); a subscription to ``"sync.*"`` also gets
every topic one level below ``sync``. Handlers run synchronously in the publisher's
thread, in subscription order; an exception in one handler is logged and does not stop
the others.
"""

from __future__ import annotations

import fnmatch
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

Handler = Callable[[str, Any], None]


@dataclass(eq=False)
class Subscription:
    pattern: str
    handler: Handler
    once: bool = False
    active: bool = True

    def matches(self, topic: str) -> bool:
        if "*" not in self.pattern:
            return self.pattern == topic
        return fnmatch.fnmatchcase(topic, self.pattern) and topic.count(".") == self.pattern.count(".")


class EventBus:
    def __init__(self) -> None:
        self._subs: list[Subscription] = []
        self._lock = threading.RLock()

    def subscribe(self, topic: str, callback: Handler, *, once: bool = False) -> Subscription:
        """Call ``callback(topic, payload)`` for every event published on a matching topic."""
        if not callable(callback):
            raise TypeError(f"handler must be callable, got {callback!r}")
        sub = Subscription(topic, callback, once)
        with self._lock:
            self._subs.append(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            sub.active = False
            if sub in self._subs:
                self._subs.remove(sub)

    def on(self, topic: str, *, once: bool = False) -> Callable[[Handler], Handler]:
        """Decorator form of ``subscribe``."""

        def register(fn: Handler) -> Handler:
            self.subscribe(topic, callback=fn, once=once)
            return fn

        return register

    def publish(self, topic: str, payload: Any = None) -> int:
        """Deliver ``payload`` to the matching handlers; return how many ran."""
        with self._lock:
            targets = [s for s in self._subs if s.active and s.matches(topic)]
        ran = 0
        for sub in targets:
            if sub.once:
                self.unsubscribe(sub)
            try:
                sub.handler(topic, payload)
            except Exception:
                log.exception("handler for %r failed on %r", sub.pattern, topic)
            ran += 1
        return ran

    def clear(self) -> None:
        with self._lock:
            for sub in self._subs:
                sub.active = False
            self._subs.clear()

    def topics(self) -> list[str]:
        with self._lock:
            return sorted({s.pattern for s in self._subs})
