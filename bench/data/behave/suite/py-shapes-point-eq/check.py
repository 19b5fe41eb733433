"""Check for py-shapes-point-eq: python check.py PATH (PATH: the edited file)."""
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
    P = mod.Point
    if not (P(1, 2) == P(1, 2)):
        fail("Point(1, 2) == Point(1, 2) is not True")
    if P(1, 2) != P(1, 2):
        fail("Point(1, 2) != Point(1, 2) is True")
    if P(1, 2) == P(2, 1) or P(1, 2) == P(1, 3):
        fail("points with different coordinates compare equal")
    if not (P(1, 2) != P(1, 3)):
        fail("Point(1, 2) != Point(1, 3) is not True")
    if P(1.0, 2) != P(1, 2.0):
        fail("Point(1.0, 2) and Point(1, 2.0) are not equal")
    for other in ((1, 2), None, "Point(1, 2)", 3):
        try:
            same = P(1, 2) == other
        except Exception as e:
            fail(f"comparing a Point with {other!r} raised {type(e).__name__}")
        if same:
            fail(f"Point(1, 2) == {other!r} is True")
    r = mod.Rect(0, 0, 10, 5)
    if r.corners != [P(0, 0), P(10, 0), P(10, 5), P(0, 5)]:
        fail(f"Rect.corners does not compare equal to the expected points: {r.corners!r}")
    if P(3, 4) - P(1, 1) != P(2, 3) or P(14, 26).snapped(10) != P(10, 30):
        fail("Point arithmetic changed")
    if repr(P(1, 2)) != "Point(1, 2)":
        fail("Point.__repr__ changed")
    if mod.Segment(P(0, 0), P(3, 4)).length() != 5:
        fail("Segment.length changed")


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
