"""Check for py-userstore-validate-add: python check.py PATH (PATH: the edited file)."""
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
    store = mod.UserStore()
    uid = store.add({"email": " Ann@Example.org ", "name": "Ann", "roles": ["editor", "editor"]})
    got = store.get(uid)
    if got is None or got["email"] != "ann@example.org" or got["roles"] != ["editor"]:
        fail(f"adding a valid user changed: {got!r}")
    for bad in (
        {"email": "nope", "name": "Bob", "roles": []},
        {"email": "bob@example.org", "name": "  ", "roles": []},
        {"email": "bob@example.org", "name": "Bob", "roles": ["wizard"]},
    ):
        try:
            store.add(bad)
        except ValueError:
            pass
        else:
            fail(f"add() accepted an invalid user: {bad!r}")
    if len(store) != 1:
        fail(f"invalid users were stored: the store holds {len(store)} users, expected 1")
    try:
        store.add({"email": "ann@example.org", "name": "Ann 2", "roles": []})
    except mod.DuplicateEmail:
        pass
    else:
        fail("add() no longer refuses a duplicate e-mail")
    uid2 = store.add({"email": "bob@example.org", "name": "Bob", "roles": ["viewer"]})
    if len(store) != 2 or store.get(uid2)["name"] != "Bob":
        fail("a second valid user was not stored")


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
