"""A value the change writes that nothing reads (app.check.unread): a private attribute, a
function's local; and the sites "`f()` and `g()`" joins (app.check.intent)."""

from specedit.app.check.checks import vouch
from specedit.app.check.intent import read_intent
from specedit.app.check.unread import set_unread
from specedit.app.code.source import Change, Source

PY = """class Cache:
    def __init__(self, capacity):
        self.capacity = capacity
        self._data = {}

    def put(self, key, value):
        if len(self._data) >= self.capacity:
            self._data.pop(next(iter(self._data)))
        self._data[key] = value

    def get(self, key, default=None):
        return self._data.get(key, default)
"""


def _judge(instruction: str, new: str):
    intent = read_intent(instruction, Source(PY, "cache.py"))
    return set_unread(Change.of(PY, new, "cache.py"), intent)


def test_a_private_attribute_set_and_read_nowhere_is_said():
    init = "        self._data = {}\n"
    counted = PY.replace(init, init + "        self._evicted = 0\n")
    v = _judge("Count the evictions.", counted)
    assert v.reason == "unread"
    assert v.message == (
        "the result sets the attribute _evicted (line 5) and nothing in the file reads it"
    )
    # counted where a key goes out: an augmented assignment uses it
    pop = "            self._data.pop(next(iter(self._data)))\n"
    used = counted.replace(pop, pop + "            self._evicted += 1\n")
    assert _judge("Count the evictions.", used) is None
    # named by the instruction, or public (callers outside the file may read it): let be
    assert _judge("Add a _evicted field set to 0.", counted) is None
    public = PY.replace(init, init + "        self.evicted = 0\n")
    assert _judge("Count the evictions.", public) is None


def test_a_new_local_never_read_is_said_with_its_function():
    body = "        return self._data.get(key, default)\n"
    stale = PY.replace(body, "        found = key in self._data\n" + body)
    v = _judge("get: say when the key is missing.", stale)
    assert v.reason == "unread"
    assert v.message == "Cache.get sets found (line 12) and never reads it"
    read = PY.replace(body, "        found = key in self._data\n        return found\n")
    assert _judge("get: say when the key is missing.", read) is None
    # one the original already left unread, or one kept unread on purpose, is not new
    old = PY.replace(body, "        found = 1\n" + body)
    assert set_unread(Change.of(old, old + "\n", "cache.py"), read_intent("x", Source(old))) is None
    quiet = PY.replace(body, "        _found = key in self._data\n" + body)
    assert _judge("get: say when the key is missing.", quiet) is None


def test_code_names_joined_by_and_are_each_a_site():
    text = (
        "class Headers:\n    def set(self, name, value):\n        self._f[name] = value\n\n"
        "    def get(self, name):\n        return self._f.get(name)\n"
    )
    one = text.replace("self._f[name] =", "self._f[name.lower()] =")
    for instruction in (
        "Headers: case-insensitive names in set() and get()",
        "Make `Headers.set` and `Headers.get` ignore the case of names.",
        "In `set()` and `get()`, ignore the case.",
    ):
        intent = read_intent(instruction, Source(text, "h.py"))
        assert [[d.name for d in g] for g in intent.each] == [["Headers.set"], ["Headers.get"]]
        verdicts = vouch(Change.of(text, one, "h.py"), intent)
        assert [v.reason for v in verdicts] == ["site_missed"]
        assert verdicts[0].message.startswith("Headers.get is not changed")
