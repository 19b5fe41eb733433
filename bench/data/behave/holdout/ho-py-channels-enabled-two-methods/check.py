"""Check for ho-py-channels-enabled-two-methods: Channel.enabled survives to_dict/from_dict."""

import importlib.util
import json
import sys
import tempfile
from pathlib import Path


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def load(path: Path):
    spec = importlib.util.spec_from_file_location("channels_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001
        fail(f"import failed: {type(e).__name__}: {e}")
    return mod


def main() -> None:
    mod = load(Path(sys.argv[1]))
    C = mod.Channel
    try:
        off = C("probe3", 3, "degC", 0.05, -40.0, enabled=False)
        back = C.from_dict(json.loads(json.dumps(off.to_dict())))
        if back.enabled:
            fail(f"a disabled channel comes back with enabled={back.enabled!r} from to_dict/from_dict")
        on = C("temp", 0, "degC", 0.05, -40.0, high_alarm=85.0)
        d = on.to_dict()
        if C.from_dict(d) != on:
            fail(f"an enabled channel does not round-trip: {C.from_dict(d)!r}")
        rest = {k: v for k, v in d.items() if k != "enabled"}
        want = {"name": "temp", "input": 0, "unit": "degC", "scale": 0.05, "offset": -40.0, "high_alarm": 85.0}
        if rest != want:
            fail(f"to_dict's other keys changed: {d!r}")
        try:
            plain = C.from_dict({"name": "x", "input": 2})
        except mod.ChannelError as e:
            fail(f"an entry without 'enabled' no longer loads: {e}")
        if plain.enabled is not True:
            fail("an entry without 'enabled' no longer loads as enabled")
        if not C.from_dict({"name": "x", "input": 2, "enabled": True}).enabled:
            fail("'enabled': true is read as disabled")
        if C.from_dict({"name": "x", "input": 2, "enabled": False}).enabled:
            fail("from_dict ignores 'enabled': false")
        for bad in ({"input": 1}, {"name": "x", "input": "one"}, {"name": "x", "input": 1, "scale": 0}):
            try:
                C.from_dict(bad)
            except mod.ChannelError:
                pass
            else:
                fail(f"from_dict({bad!r}) no longer raises ChannelError")

        chs = [on, C("hum", 1, "%", 0.025), off, C("spare3", 3, "V", 0.001)]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "channels.json"
            mod.save_channels(path, chs)
            try:
                loaded = mod.load_channels(path)
            except mod.ChannelError as e:
                fail(f"the saved channel list does not load again: {e}")
            if loaded != chs:
                fail(f"save/load changed the channels: {[(c.name, c.enabled) for c in loaded]}")
            if sorted(mod.read_sample(loaded, {0: 1000, 1: 2000, 3: 500})) != ["hum", "spare3", "temp"]:
                fail("a disabled channel is read after save/load")
            old = {"version": 1, "channels": [{"name": "a", "input": 0}, {"name": "b", "input": 1, "unit": "V"}]}
            path.write_text(json.dumps(old), encoding="utf-8")
            if [c.enabled for c in mod.load_channels(path)] != [True, True]:
                fail("channels in an older file (no 'enabled' key) do not load as enabled")
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001
        fail(f"channels raised {type(e).__name__}: {e}")
    print("ok")


main()
