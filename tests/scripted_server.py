"""``python tests/scripted_server.py --scripted-rules FILE [specedit args]``: the real
``specedit`` command line (``serve --socket …`` and all) with the scripted model of
``tests/scripted.py`` in place of a catalog model. FILE holds a JSON list of ``[key,
answer]`` rules: a prompt whose text contains ``key`` (a question, say) gets ``answer``. For
the clients' tests of ``answer/start`` (``plugins/vscode/test/ask.test.ts``), which need a
server in another process that writes a known answer; ``toy_server.py`` does the same for
rewrites."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from scripted import scripted_loaded  # noqa: E402


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--scripted-rules", type=Path, required=True)
    own, rest = p.parse_known_args(argv)
    rules = [(k, a) for k, a in json.loads(own.scripted_rules.read_text(encoding="utf-8"))]

    import specedit.app.runtime.loaded_model as loaded_model_module
    from specedit.app.cli.main import main as cli_main

    loaded_model_module.load_model = lambda config, *a, **kw: scripted_loaded(rules)
    return cli_main(rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
