"""Check for ho-py-paginate-loop: fetch_all follows `next` cursors to the last page; the rest is unchanged."""

import importlib.util
import sys
from pathlib import Path


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def load(path: Path):
    spec = importlib.util.spec_from_file_location("helpdesk_client", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["helpdesk_client"] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as exc:  # noqa: BLE001
        fail(f"the module does not import: {type(exc).__name__}: {exc}")
    return mod


class FakeApi:
    """Serves `items` under /api/v2/<resource>, `limit` at a time, with opaque cursors."""

    def __init__(self, resource: str, items, single_page_key_missing: bool = False) -> None:
        self.path = "/api/v2/" + resource
        self.items = items
        self.calls = []
        self.omit_next = single_page_key_missing

    def __call__(self, path, params):
        self.calls.append((path, dict(params)))
        if len(self.calls) > 50:
            raise RuntimeError("more than 50 requests: fetch_all does not stop")
        if path.startswith(self.path + "/"):
            item_id = path.rsplit("/", 1)[1]
            found = [i for i in self.items if str(i["id"]) == item_id]
            return dict(found[0]) if found else {"error": "not found"}
        if path != self.path:
            raise RuntimeError(f"unexpected path {path}")
        cursor = params.get("cursor")
        if cursor is None:
            start = 0
        elif isinstance(cursor, str) and cursor.startswith("zq") and cursor.endswith("x"):
            start = int(cursor[2:-1])
        else:
            raise RuntimeError(f"unknown cursor {cursor!r}")
        limit = params["limit"]
        chosen = [i for i in self.items if all(i.get(k) == v for k, v in params.items() if k not in ("limit", "cursor"))]
        page = chosen[start:start + limit]
        end = start + limit
        body = {"data": [dict(i) for i in page]}
        if not self.omit_next:
            body["next"] = f"zq{end}x" if end < len(chosen) else None
        return body


def main() -> None:
    hc = load(Path(sys.argv[1]).resolve())
    tickets = [{"id": n, "status": "open" if n % 4 else "closed", "created_at": f"2024-01-{30 - n:02d}"} for n in range(1, 24)]
    open_ids = [t["id"] for t in tickets if t["status"] == "open"]  # 18 of them

    api = FakeApi("tickets", tickets)
    client = hc.HelpdeskClient(api, page_size=5)
    try:
        got = client.fetch_all("tickets", status="open")
    except Exception as exc:  # noqa: BLE001
        fail(f"fetch_all raised {type(exc).__name__}: {exc}")
    ids = [t["id"] for t in got]
    if ids != open_ids:
        fail(f"fetch_all over 4 pages returned ids {ids}, expected {open_ids} ({len(api.calls)} request(s))")
    if len(api.calls) != 4:
        fail(f"fetch_all over 4 pages made {len(api.calls)} requests, expected 4")
    for path, params in api.calls:
        if params.get("status") != "open" or params.get("limit") != 5:
            fail(f"a page request lost the filters or page size: {params}")

    api = FakeApi("tickets", tickets[:3], single_page_key_missing=True)
    got = hc.HelpdeskClient(api).fetch_all("tickets")
    if [t["id"] for t in got] != [1, 2, 3] or len(api.calls) != 1:
        fail(f"a single page without 'next' gave {got} in {len(api.calls)} request(s)")

    api = FakeApi("users", [])
    if hc.HelpdeskClient(api).fetch_all("users") != [] or len(api.calls) != 1:
        fail("an empty list endpoint did not give [] in one request")

    api = FakeApi("tickets", tickets)
    client = hc.HelpdeskClient(api, page_size=4)
    if client.ids("tickets", status="closed") != [4, 8, 12, 16, 20]:
        fail(f"ids(status='closed') = {client.ids('tickets', status='closed')}")
    oldest = [t["id"] for t in hc.open_tickets(client)]
    if oldest != sorted(open_ids, reverse=True):
        fail(f"open_tickets gave {oldest}")

    api = FakeApi("tickets", tickets)
    client = hc.HelpdeskClient(api, page_size=5)
    first = client.first("tickets", status="closed")
    if first is None or first["id"] != 4 or api.calls[-1][1].get("limit") != 1:
        fail(f"first(status='closed') gave {first} with {api.calls[-1][1]}")
    if client.get("tickets", 7)["id"] != 7:
        fail("get('tickets', 7) did not return ticket 7")
    try:
        client.get("tickets", 999)
    except hc.ApiError:
        pass
    else:
        fail("get() of a missing ticket did not raise ApiError")
    try:
        hc.HelpdeskClient(api, page_size=0)
    except ValueError:
        pass
    else:
        fail("page_size=0 did not raise ValueError")
    try:
        hc.HelpdeskClient(lambda p, q: {"data": None}).fetch_all("tickets")
    except hc.ApiError:
        pass
    else:
        fail("a body without a 'data' list did not raise ApiError")
    print("ok")


main()
