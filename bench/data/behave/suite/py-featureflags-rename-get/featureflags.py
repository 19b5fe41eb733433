"""Feature flags read from a JSON file, with per-user percentage rollouts.

The file maps a flag name to ``{"enabled": bool, "rollout": 0-100,
"variants": [...]}``.  ``$FLAGS_FILE`` names the file; without it every flag
is off.
"""

import hashlib
import json
import os

DEFAULT_FILE = "flags.json"


def _bucket(flag, user_id):
    """A stable number in 0..99 for a (flag, user) pair."""
    digest = hashlib.sha256(f"{flag}:{user_id}".encode()).hexdigest()
    return int(digest[:8], 16) % 100


class FeatureFlags:
    def __init__(self, flags=None):
        self._flags = dict(flags or {})

    @classmethod
    def from_file(cls, path):
        with open(path, encoding="utf-8") as f:
            return cls(json.load(f))

    def get(self, name):
        """The settings of flag ``name`` (an empty dict for an unknown flag)."""
        data = self._flags.get(name)
        return dict(data) if isinstance(data, dict) else {}

    def is_enabled(self, name, user_id=None):
        data = self.get(name)
        if not data.get("enabled", False):
            return False
        rollout = data.get("rollout", 100)
        if user_id is None:
            return rollout >= 100
        return _bucket(name, user_id) < rollout

    def variant(self, name, user_id):
        """The variant of an A/B flag shown to ``user_id`` (None when off)."""
        if not self.is_enabled(name, user_id):
            return None
        variants = self.get(name).get("variants") or ["on"]
        return variants[_bucket(name + "#variant", user_id) % len(variants)]

    def names(self):
        return sorted(self._flags)

    def enabled_names(self, user_id=None):
        return [n for n in self.names() if self.is_enabled(n, user_id)]


def flags_from_env(environ=None):
    """The flags of the file named by $FLAGS_FILE (none when unset or missing)."""
    path = os.environ.get("FLAGS_FILE") if environ is None else environ.get("FLAGS_FILE")
    if not path or not os.path.exists(path):
        return FeatureFlags()
    return FeatureFlags.from_file(path)


def describe(flags, name):
    """One line for the admin page: 'name: on (25%)' or 'name: off'."""
    data = flags.get(name)
    if not data.get("enabled"):
        return f"{name}: off"
    return f"{name}: on ({data.get('rollout', 100)}%)"
