"""Check for ho-toml-scheduler-add-job: a reindex-search job is added; everything else is unchanged."""

import sys
import tomllib
from pathlib import Path


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


OLD_JOBS = [
    {"name": "close-stale-tickets", "schedule": "*/30 * * * *",
     "command": "tickets close-stale --older-than 14d", "timeout_seconds": 600},
    {"name": "send-digest", "schedule": "0 7 * * 1-5", "command": "mail digest --team all",
     "timeout_seconds": 900, "retries": 2},
    {"name": "purge-attachments", "schedule": "15 2 * * *", "command": "attachments purge --orphans",
     "timeout_seconds": 1800},
]

REST = {
    "worker": {"name": "ticket-worker", "concurrency": 8, "queue": "default", "shutdown_grace_seconds": 30},
    "database": {
        "url": "postgresql://ticket@db.internal:5432/tickets", "pool_min": 2, "pool_max": 16,
        "statement_timeout_ms": 15000,
        "replica": {"url": "postgresql://ticket_ro@db-replica.internal:5432/tickets", "pool_max": 8},
    },
    "redis": {"url": "redis://cache.internal:6379/2", "key_prefix": "tw:"},
    "mail": {"smtp_host": "smtp.internal", "smtp_port": 587, "from": "Support <support@example.com>",
             "starttls": True},
    "logging": {"level": "info", "format": "json",
                "modules": {"worker.mail": "debug", "sqlalchemy": "warning"}},
}


def sunday_4am(schedule: str) -> bool:
    f = schedule.split()
    return (
        len(f) == 5
        and f[0] in ("0", "00")
        and f[1] in ("4", "04")
        and f[2] == "*"
        and f[3] == "*"
        and f[4].lower() in ("0", "7", "sun")
    )


def main() -> None:
    try:
        data = tomllib.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    except Exception as e:  # noqa: BLE001
        fail(f"not valid TOML: {e}")
    jobs = data.get("jobs")
    if not isinstance(jobs, list):
        fail("no [[jobs]] array any more")
    new = [j for j in jobs if j.get("name") == "reindex-search"]
    if len(new) != 1:
        fail(f"expected one job named reindex-search, found {len(new)}")
    job = new[0]
    if job.get("command") != "search reindex --full":
        fail(f"reindex-search's command is {job.get('command')!r}")
    if not isinstance(job.get("schedule"), str) or not sunday_4am(job["schedule"]):
        fail(f"reindex-search's schedule {job.get('schedule')!r} is not Sundays at 04:00")
    if job.get("timeout_seconds") != 3600:
        fail(f"reindex-search's timeout_seconds is {job.get('timeout_seconds')!r}")
    others = [j for j in jobs if j.get("name") != "reindex-search"]
    if others != OLD_JOBS:
        fail("the existing jobs changed")
    rest = {k: v for k, v in data.items() if k != "jobs"}
    if rest != REST:
        fail(f"settings outside [[jobs]] changed: {sorted(set(rest) ^ set(REST)) or 'values'}")
    print("ok")


main()
