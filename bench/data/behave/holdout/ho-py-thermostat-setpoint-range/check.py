"""Check for ho-py-thermostat-setpoint-range: out-of-range schedule temperatures raise ScheduleError."""

import datetime as dt
import importlib.util
import re
import sys
from pathlib import Path


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def load(path: Path):
    spec = importlib.util.spec_from_file_location("schedule_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001
        fail(f"import failed: {type(e).__name__}: {e}")
    return mod


GOOD = """# weekdays
mon-fri 06:30 21.0
mon-fri 22:00 17.5
sat,sun 08:00 21.5
sat,sun 23:00 16
"""


def expect_error(mod, text: str, what: str) -> str:
    try:
        mod.parse_schedule(text)
    except mod.ScheduleError as e:
        return str(e)
    except Exception as e:  # noqa: BLE001
        fail(f"{what}: raised {type(e).__name__}, not ScheduleError: {e}")
    fail(f"{what}: parse_schedule accepted it")


def main() -> None:
    mod = load(Path(sys.argv[1]))
    high = "# heating\nmon-fri 06:30 21\nmon-fri 22:00 17.5\nsat 08:00 215\n"
    msg = expect_error(mod, high, "a 215 °C switch point on line 4")
    if not re.search(r"(?<![\d.])4(?![\d.])", msg):
        fail(f"the error for a bad temperature on line 4 does not name the line: {msg!r}")
    expect_error(mod, "mon 06:30 21\ntue 07:00 30.5\n", "a 30.5 °C switch point")
    expect_error(mod, "mon 06:30 4.5\n", "a 4.5 °C switch point")
    expect_error(mod, "mon 06:30 -3\n", "a -3 °C switch point")
    expect_error(mod, "mon 25:00 20\n", "a bad time")
    expect_error(mod, "mon 06:00 warm\n", "a non-numeric temperature")
    expect_error(mod, "xyz 06:00 20\n", "an unknown day")

    try:
        edge = mod.parse_schedule("mon 00:00 5\nmon 12:00 30\nwed 08:00 5.0  # frost\n")
        sched = mod.parse_schedule(GOOD)
    except Exception as e:  # noqa: BLE001
        fail(f"a valid schedule raised {type(e).__name__}: {e}")
    if [p.celsius for p in edge] != [5.0, 30.0, 5.0]:
        fail(f"the bounds 5 and 30 °C are no longer accepted as they were: {edge!r}")
    if len(sched) != 14:
        fail(f"a valid schedule gave {len(sched)} switch points, expected 14")
    D = dt.datetime
    want = [
        (D(2024, 5, 6, 7, 0), 21.0),  # Monday morning
        (D(2024, 5, 6, 23, 0), 17.5),
        (D(2024, 5, 6, 3, 0), 16.0),  # Monday night, from Sunday 23:00
        (D(2024, 5, 11, 9, 0), 21.5),  # Saturday
    ]
    for when, c in want:
        got = mod.setpoint_at(sched, when)
        if got != c:
            fail(f"setpoint_at {when:%a %H:%M} gave {got}, expected {c}")
    t = mod.Thermostat(sched)
    try:
        t.set_override(40)
    except ValueError:
        pass
    else:
        fail("set_override(40) no longer raises")
    print("ok")


main()
