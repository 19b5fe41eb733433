"""A small client for the helpdesk's REST API.

The transport is injected: ``fetch`` is any callable that takes a path and a dict
of query parameters and returns the decoded JSON body.  In production it wraps an
HTTP session; in tests it is a fake.  List endpoints are cursor-paginated, and
each body looks like ``{"data": [...], "next": "<cursor>" or null}``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Union

log = logging.getLogger(__name__)

Fetch = Callable[[str, Dict[str, Any]], Mapping[str, Any]]

API_PREFIX = "/api/v2/"
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 200


class ApiError(Exception):
    """The API answered with a body the client cannot use."""


@dataclass(frozen=True)
class Page:
    """One page of a list endpoint."""

    items: List[Dict[str, Any]]
    next_cursor: Optional[str]

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> "Page":
        data = body.get("data")
        if not isinstance(data, list):
            raise ApiError(f"expected a 'data' list, got {type(data).__name__}")
        return cls(items=list(data), next_cursor=body.get("next") or None)


def _query(filters: Mapping[str, Any], limit: int, cursor: Optional[str] = None) -> Dict[str, Any]:
    """Query parameters for a list call; ``None`` filters are left out."""
    params: Dict[str, Any] = {key: value for key, value in filters.items() if value is not None}
    params["limit"] = limit
    if cursor is not None:
        params["cursor"] = cursor
    return params


class HelpdeskClient:
    """Read access to tickets, users and other helpdesk resources."""

    def __init__(self, fetch: Fetch, page_size: int = DEFAULT_PAGE_SIZE) -> None:
        if not 1 <= page_size <= MAX_PAGE_SIZE:
            raise ValueError(f"page_size must be between 1 and {MAX_PAGE_SIZE}")
        self._fetch = fetch
        self.page_size = page_size

    def _path(self, resource: str) -> str:
        return API_PREFIX + resource.strip("/")

    def get(self, resource: str, item_id: Union[int, str]) -> Dict[str, Any]:
        """Fetch one item by id."""
        body = self._fetch(f"{self._path(resource)}/{item_id}", {})
        if "id" not in body:
            raise ApiError(f"{resource}/{item_id}: no id in the response")
        return dict(body)

    def first(self, resource: str, **filters: Any) -> Optional[Dict[str, Any]]:
        """The first item of ``resource`` matching ``filters``, or ``None``."""
        page = Page.from_body(self._fetch(self._path(resource), _query(filters, 1)))
        return page.items[0] if page.items else None

    def fetch_all(self, resource: str, **filters: Any) -> List[Dict[str, Any]]:
        """Every item of ``resource`` matching ``filters``, in the API's order."""
        path = self._path(resource)
        body = self._fetch(path, _query(filters, self.page_size))
        page = Page.from_body(body)
        items = list(page.items)
        log.debug("fetched %d item(s) from %s", len(items), path)
        return items

    def ids(self, resource: str, **filters: Any) -> List[Union[int, str]]:
        """The ids of every item of ``resource`` matching ``filters``."""
        return [item["id"] for item in self.fetch_all(resource, **filters)]


def open_tickets(client: HelpdeskClient, assignee: Optional[str] = None) -> List[Dict[str, Any]]:
    """Open tickets, oldest first, optionally only those of one assignee."""
    tickets = client.fetch_all("tickets", status="open", assignee=assignee)
    return sorted(tickets, key=lambda t: t.get("created_at", ""))
