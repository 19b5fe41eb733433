"""Semantic version strings for the release tooling.

Only the ``MAJOR.MINOR.PATCH`` form with an optional ``-pre`` suffix is
supported (no build metadata), which is all our packages use.
"""

import re
from functools import total_ordering

VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.]+))?$")
PARTS = ("major", "minor", "patch")


@total_ordering
class Version:
    """A parsed version; ordered as semver says (a pre-release sorts first)."""

    def __init__(self, major, minor, patch, pre=None):
        self.major = major
        self.minor = minor
        self.patch = patch
        self.pre = pre

    @classmethod
    def parse(cls, text):
        """A ``Version`` from ``text`` such as '1.4.2' or 'v2.0.0-rc.1'."""
        m = VERSION_RE.match(text.strip())
        if not m:
            raise ValueError(f"not a version: {text!r}")
        major, minor, patch, pre = m.groups()
        return cls(int(major), int(minor), int(patch), pre)

    def _key(self):
        pre = () if self.pre is None else tuple(
            (0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.pre.split(".")
        )
        return (self.major, self.minor, self.patch, self.pre is None, pre)

    def __eq__(self, other):
        return isinstance(other, Version) and self._key() == other._key()

    def __lt__(self, other):
        return self._key() < other._key()

    def __hash__(self):
        return hash(self._key())

    def __str__(self):
        core = f"{self.major}.{self.minor}.{self.patch}"
        return f"{core}-{self.pre}" if self.pre else core


def bump(version, part="patch"):
    """The next version after ``version`` (a string or a ``Version``).

    ``part`` is "major", "minor" or "patch": the part raised by one, the parts
    after it reset to 0.  Bumping the patch of a pre-release gives the release
    itself ('1.2.0-rc.1' -> '1.2.0').  Raises ValueError for another ``part``.
    """
    v = Version.parse(version) if isinstance(version, str) else version
    if part not in PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS)}, not {part!r}")
    if part == "major":
        return Version(v.major + 1, 0, 0)
    if part == "minor":
        return Version(v.major, v.minor + 1, 0)
    if v.pre is not None:
        return Version(v.major, v.minor, v.patch)
    return Version(v.major, v.minor, v.patch + 1)


def latest(versions, include_pre=False):
    """The highest of ``versions`` (strings), skipping pre-releases unless asked."""
    parsed = [Version.parse(t) for t in versions]
    if not include_pre:
        parsed = [v for v in parsed if v.pre is None]
    return str(max(parsed)) if parsed else None


def is_compatible(required, candidate):
    """Whether ``candidate`` satisfies a caret requirement on ``required``."""
    r, c = Version.parse(required), Version.parse(candidate)
    if c < r:
        return False
    if r.major == 0:
        return c.major == 0 and c.minor == r.minor
    return c.major == r.major
