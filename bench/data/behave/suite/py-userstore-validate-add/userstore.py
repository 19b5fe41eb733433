"""An in-memory user store for the admin service's tests and demo mode.

Users are plain dicts with ``id``, ``email``, ``name`` and ``roles``.  The
real service keeps them in PostgreSQL behind the same interface.
"""

import itertools
import re

EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
KNOWN_ROLES = {"admin", "editor", "viewer"}


class DuplicateEmail(ValueError):
    """Another user already has this e-mail address."""


def normalise_email(email):
    return email.strip().lower()


def validate_user(user):
    """Raise ValueError when ``user`` is not a valid user dict."""
    email = user.get("email", "")
    if not EMAIL_RE.match(email.strip()):
        raise ValueError(f"invalid e-mail address: {email!r}")
    if not str(user.get("name", "")).strip():
        raise ValueError("a user needs a name")
    unknown = set(user.get("roles", ())) - KNOWN_ROLES
    if unknown:
        raise ValueError("unknown roles: " + ", ".join(sorted(unknown)))


class UserStore:
    def __init__(self):
        self._users = {}
        self._ids = itertools.count(1)

    def __len__(self):
        return len(self._users)

    def _by_email(self, email):
        email = normalise_email(email)
        for user in self._users.values():
            if user["email"] == email:
                return user
        return None

    def add(self, user):
        """Store a copy of ``user`` under a new id and return that id."""
        if self._by_email(user["email"]) is not None:
            raise DuplicateEmail(user["email"])
        user_id = next(self._ids)
        stored = dict(user, id=user_id, email=normalise_email(user["email"]))
        stored["roles"] = sorted(set(stored.get("roles", ())))
        self._users[user_id] = stored
        return user_id

    def get(self, user_id):
        user = self._users.get(user_id)
        return dict(user) if user else None

    def update(self, user_id, **changes):
        """Change fields of a stored user; the result must still be valid."""
        if user_id not in self._users:
            raise KeyError(user_id)
        updated = dict(self._users[user_id], **changes)
        validate_user(updated)
        if "email" in changes:
            other = self._by_email(changes["email"])
            if other is not None and other["id"] != user_id:
                raise DuplicateEmail(changes["email"])
            updated["email"] = normalise_email(changes["email"])
        self._users[user_id] = updated

    def remove(self, user_id):
        self._users.pop(user_id, None)

    def with_role(self, role):
        return [dict(u) for u in self._users.values() if role in u["roles"]]
