"""Check for py-appconfig-missing-section: python check.py PATH (PATH: the edited file)."""
import importlib.util
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p) != HERE]


def fail(why):
    print(" ".join(str(why).split()))
    sys.exit(1)


def load(path, name="edited_module"):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def check(mod, path):
    cfg = mod.Config.from_string("[server]\nport = 8080\n[database]\nname = shop\n", environ={})
    try:
        got = cfg.section("cache")
    except mod.ConfigError as e:
        if "cache" not in str(e):
            fail(f"the ConfigError does not name the missing section: {e}")
    else:
        fail(f"section('cache') of a file without [cache] returned {got!r} instead of raising ConfigError")
    empty = mod.Config.from_string("[server]\nport = 1\n", environ={})
    try:
        empty.database_url()
    except mod.ConfigError:
        pass
    else:
        fail("database_url() without a [database] section did not raise ConfigError")
    sec = cfg.section("server")
    if sec.get_int("port") != 8080:
        fail("section('server').get_int('port') no longer returns 8080")
    if cfg.database_url() != "postgresql://localhost:5432/shop":
        fail(f"database_url() changed: {cfg.database_url()!r}")
    env = mod.Config.from_string("[database]\nname = shop\n", environ={"APP_DATABASE_HOST": "db"})
    if env.database_url() != "postgresql://db:5432/shop":
        fail("environment overrides no longer work")


if __name__ == "__main__":
    try:
        module = load(sys.argv[1])
    except BaseException as e:
        fail(f"the file does not import: {type(e).__name__}: {e}")
    try:
        check(module, sys.argv[1])
    except SystemExit:
        raise
    except BaseException as e:
        fail(f"{type(e).__name__}: {e}")
