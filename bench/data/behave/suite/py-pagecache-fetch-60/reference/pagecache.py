"""A small in-process cache of fetched web pages for the link checker.

``PageCache.fetch`` serves a page from memory while it is fresh and asks the
loader otherwise; ``stale_urls`` lists what the background refresher should
reload.  Times are seconds of a monotonic clock.
"""

import time
from dataclasses import dataclass

STALE_AFTER = 30
MAX_ENTRIES = 30
LOAD_TIMEOUT = 10


@dataclass
class Entry:
    body: str
    stamp: float
    status: int = 200


class PageCache:
    def __init__(self, loader, clock=time.monotonic):
        """``loader(url, timeout)`` returns (status, body)."""
        self.loader = loader
        self.clock = clock
        self._entries = {}
        self.loads = 0

    def __len__(self):
        return len(self._entries)

    def fetch(self, url):
        """The body of ``url``, from the cache when it is younger than 60 seconds."""
        now = self.clock()
        entry = self._entries.get(url)
        if entry is not None and now - entry.stamp < 60:
            return entry.body
        status, body = self.loader(url, LOAD_TIMEOUT)
        self.loads += 1
        self._entries[url] = Entry(body, now, status)
        self._shrink()
        return body

    def fetch_many(self, urls):
        return {url: self.fetch(url) for url in urls}

    def _shrink(self):
        """Forget the oldest entries beyond MAX_ENTRIES."""
        if len(self._entries) <= MAX_ENTRIES:
            return
        by_age = sorted(self._entries.items(), key=lambda kv: kv[1].stamp)
        for url, _entry in by_age[: len(self._entries) - MAX_ENTRIES]:
            del self._entries[url]

    def stale_urls(self):
        """URLs whose entry is older than STALE_AFTER seconds, oldest first."""
        now = self.clock()
        old = [(e.stamp, url) for url, e in self._entries.items() if now - e.stamp >= STALE_AFTER]
        return [url for _stamp, url in sorted(old)]

    def failed_urls(self):
        return sorted(url for url, e in self._entries.items() if e.status >= 400)

    def invalidate(self, url=None):
        if url is None:
            self._entries.clear()
        else:
            self._entries.pop(url, None)
