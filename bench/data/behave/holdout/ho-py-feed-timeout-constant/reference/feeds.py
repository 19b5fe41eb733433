"""Fetch and parse the RSS/Atom feeds the newsletter digest is built from.

Only the standard library: ``urllib`` to download, ``xml.etree`` to parse. The opener
is a parameter so that tests and the offline preview can hand in canned documents.
"""

from __future__ import annotations

import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime

USER_AGENT = "digest-bot/2.1 (+https://example.org/digest)"
DEFAULT_TIMEOUT = 30  # seconds, per request
MAX_BYTES = 2 * 1024 * 1024
ATOM = "{http://www.w3.org/2005/Atom}"

Opener = Callable[..., object]


@dataclass(frozen=True)
class Entry:
    title: str
    link: str
    published: datetime | None


def fetch(url: str, timeout: float = DEFAULT_TIMEOUT, opener: Opener = urllib.request.urlopen) -> bytes:
    """The body of ``url`` (at most ``MAX_BYTES``)."""
    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    with opener(req, timeout=timeout) as resp:
        data = resp.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ValueError(f"{url}: feed larger than {MAX_BYTES} bytes")
    return data


def _date(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return parsedate_to_datetime(text)
    except (TypeError, ValueError):
        pass
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def parse_feed(data: bytes) -> list[Entry]:
    """The entries of an RSS 2.0 or Atom document, in document order."""
    root = ET.fromstring(data)
    entries: list[Entry] = []
    if root.tag == "rss":
        for item in root.iter("item"):
            entries.append(
                Entry(
                    (item.findtext("title") or "").strip(),
                    (item.findtext("link") or "").strip(),
                    _date(item.findtext("pubDate")),
                )
            )
    elif root.tag == f"{ATOM}feed":
        for item in root.iter(f"{ATOM}entry"):
            link = item.find(f"{ATOM}link")
            entries.append(
                Entry(
                    (item.findtext(f"{ATOM}title") or "").strip(),
                    link.get("href", "") if link is not None else "",
                    _date(item.findtext(f"{ATOM}updated")),
                )
            )
    else:
        raise ValueError(f"not a feed: root element {root.tag!r}")
    return entries


def latest(urls: list[str], limit: int = 20, timeout: float = DEFAULT_TIMEOUT, opener: Opener = urllib.request.urlopen) -> list[Entry]:
    """The ``limit`` newest entries across ``urls`` (entries without a date last)."""
    found: list[Entry] = []
    for url in urls:
        found.extend(parse_feed(fetch(url, timeout=timeout, opener=opener)))
    dated = sorted((e for e in found if e.published), key=lambda e: e.published, reverse=True)
    undated = [e for e in found if not e.published]
    return (dated + undated)[:limit]
