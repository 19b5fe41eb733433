"""Check for py-argparse-argfile-comments: python check.py PATH (PATH: the edited file)."""
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


import io


def parse(parser, args):
    err, saved = io.StringIO(), sys.stderr
    sys.stderr = err
    try:
        return parser.parse_args(args)
    except SystemExit:
        msg = err.getvalue().strip().splitlines()
        fail(f"parse_args({args!r}) failed: {msg[-1] if msg else 'exit'}")
    finally:
        sys.stderr = saved


def check(mod, path):
    ap = load(path, "edited_argparse")
    parser = ap.ArgumentParser(prog="build", fromfile_prefix_chars="@")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--name")
    parser.add_argument("--jobs", type=int, default=1)
    with open("build.args", "w") as f:
        f.write("# build options\n--verbose\n\n--name\nnightly build\n#--jobs\n#8\n")
    ns = parse(parser, ["@build.args", "--jobs", "4"])
    if (ns.verbose, ns.name, ns.jobs) != (True, "nightly build", 4):
        fail(f"parsing an args file with comments gave {ns!r}")
    with open("plain.args", "w") as f:
        f.write("--name\nx y\n--jobs\n2\n")
    ns = parse(parser, ["@plain.args"])
    if (ns.verbose, ns.name, ns.jobs) != (False, "x y", 2):
        fail(f"parsing a plain args file changed: {ns!r}")
    p2 = ap.ArgumentParser(prog="t")
    p2.add_argument("files", nargs="*")
    p2.add_argument("-q", action="count", default=0)
    ns = parse(p2, ["-qq", "a", "b"])
    if ns.files != ["a", "b"] or ns.q != 2:
        fail("ordinary parsing changed")
    if p2.convert_arg_line_to_args("--opt=1") != ["--opt=1"]:
        fail("convert_arg_line_to_args changed for an ordinary line")
    if list(p2.convert_arg_line_to_args("# note")) != [] or list(p2.convert_arg_line_to_args("")) != []:
        fail("convert_arg_line_to_args still returns comment or blank lines")


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
