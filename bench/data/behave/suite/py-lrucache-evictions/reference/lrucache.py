"""A size-bounded LRU cache for rendered thumbnails.

The cache keeps at most ``capacity`` entries; when a new key comes in and the
cache is full, the least recently used entry goes.  Both ``get`` and ``put``
count as a use.
"""

from collections import OrderedDict
from threading import RLock

_MISSING = object()


class LRUCache:
    def __init__(self, capacity=128, on_evict=None):
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.on_evict = on_evict
        self.hits = 0
        self.misses = 0
        self.evictions = 0
        self._data = OrderedDict()
        self._lock = RLock()

    def __len__(self):
        return len(self._data)

    def __contains__(self, key):
        return key in self._data

    def get(self, key, default=None):
        """The value of ``key`` (marking it as recently used), else ``default``."""
        with self._lock:
            value = self._data.get(key, _MISSING)
            if value is _MISSING:
                self.misses += 1
                return default
            self._data.move_to_end(key)
            self.hits += 1
            return value

    def put(self, key, value):
        """Store ``value`` under ``key``, evicting the least recently used entry
        if the cache is full."""
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                self._data[key] = value
                return
            if len(self._data) >= self.capacity:
                old_key, old_value = self._data.popitem(last=False)
                self.evictions += 1
                if self.on_evict is not None:
                    self.on_evict(old_key, old_value)
            self._data[key] = value

    def pop(self, key, default=None):
        with self._lock:
            return self._data.pop(key, default)

    def clear(self):
        with self._lock:
            self._data.clear()

    def hit_rate(self):
        total = self.hits + self.misses
        return self.hits / total if total else 0.0

    def keys(self):
        """The keys from least to most recently used."""
        with self._lock:
            return list(self._data)


def cached(cache):
    """Decorator memoising a one-argument function in ``cache``."""

    def wrap(func):
        def inner(arg):
            value = cache.get(arg, _MISSING)
            if value is _MISSING:
                value = func(arg)
                cache.put(arg, value)
            return value

        return inner

    return wrap
