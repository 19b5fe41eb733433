"""Check for ho-sh-commit-msg-body-exit: body problems make the commit-msg hook exit non-zero."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

LONG = "This sentence keeps going on about the change in more detail than anyone needs, " * 2
URL = "See https://tracker.example.com/browse/PLAT-1234?focusedCommentId=998877&page=com.example.tabpanels%3Acomment-tabpanel#comment-998877"
TEMPLATE = (
    "\n# Please enter the commit message for your changes. Lines starting\n"
    "# with '#' will be ignored, and an empty message aborts the commit." + " " * 60 + "\n#\n"
)

CASES = [
    # (name, message, env, should pass)
    ("a good message", "feat(api): add paging to list endpoints\n\nThe list endpoints take ?page= now.\n", {}, True),
    ("a subject-only message", "fix: handle empty cart\n", {}, True),
    ("a body with a long URL line", f"docs(readme): link the design doc\n\n{URL}\n", {}, True),
    ("a good message with git's comment template", "chore: bump deps\n\nRoutine update.\n" + TEMPLATE, {}, True),
    ("a merge message with a long body line", f"Merge branch 'main' into feature\n\n{LONG}\n", {}, True),
    ("a long body line with COMMIT_MSG_SKIP=1", f"feat: x\n\n{LONG}\n", {"COMMIT_MSG_SKIP": "1"}, True),
    ("a body line of 130 characters", f"feat(ui): new dark theme\n\nshort line\n{LONG[:130]}\n", {}, False),
    ("a non-blank line 2", "fix(db): close cursors\nafter each query in the exporter\n", {}, False),
    ("a long body line after git's comment lines", f"feat: x\n# a comment\n\n{LONG}\n" + TEMPLATE, {}, False),
    ("a subject without a type", "Add paging to list endpoints\n", {}, False),
    ("an unknown type", "wip(api): paging\n", {}, False),
    ("an overlong subject", "feat: " + "x" * 80 + "\n", {}, False),
]


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def main() -> None:
    script = Path(sys.argv[1]).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, message, env_extra, should_pass) in enumerate(CASES):
            msg_file = Path(tmp) / f"COMMIT_EDITMSG.{i}"
            msg_file.write_text(message, encoding="utf-8")
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "LC_ALL": "C.UTF-8"}
            env.update(env_extra)
            try:
                done = subprocess.run(
                    ["bash", str(script), str(msg_file)], capture_output=True, text=True, timeout=20, cwd=tmp, env=env
                )
            except subprocess.TimeoutExpired:
                fail(f"the hook timed out on {name}")
            if should_pass and done.returncode != 0:
                err = (done.stderr.strip().splitlines() or [""])[0]
                fail(f"the hook rejects {name} (exit {done.returncode}): {err}")
            if not should_pass:
                if done.returncode == 0:
                    fail(f"the hook exits 0 on {name}")
                if not (done.stderr + done.stdout).strip():
                    fail(f"the hook rejects {name} without saying why")
            if msg_file.read_text(encoding="utf-8") != message:
                fail(f"the hook changed the message file for {name}")
    print("ok")


main()
