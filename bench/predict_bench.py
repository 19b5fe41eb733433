"""``specedit bench predict``: one edit through ``serve --http``, with and without
``prediction``, and decoded plainly, side by side in one run.

Contract: ``specedit bench predict [--model M] [-r R] [--ctx N] [--threads T] [--out DIR]
[--file F] [--instruction I] [--predict-rename OLD=NEW]``
loads the model, serves it on a loopback port (``app.server.http_serve.HttpThread``, the
real HTTP server) and sends the same chat request, an edit whose answer is the whole
file (``--file``, default ``app/samples/inventory.py``, with ``--instruction``), at
temperature 0 in four modes, interleaved R times:

* ``prediction``: ``prediction`` is the file (OpenAI's Predicted Outputs): prompt lookup
  drafts from the prompt, the prediction and the output;
* ``edited prediction``: ``prediction`` is the file with the client's guess of the edit
  already made (``--predict-rename OLD=NEW``: every OLD replaced by NEW, as an editor's
  rename refactoring would make it): where the answer changes the file in many places,
  the prompt's copy stops matching at each one, the guess does not;
* ``no prediction``: the same request without it: specedit still drafts from the prompt,
  which holds the file;
* ``plain``: specedit's extension ``"specedit": {"draft": "none"}``: no drafts, one token
  per call, what a server without speculation does.

(Whether each answer is the plain answer's text is reported too: greedy speculation keeps
it, up to the batched numerics of llama.cpp's CPU kernels, README "Exactness".)

For each it reports, as medians over the repeats: decode tok/s and end-to-end tok/s
(from the response's ``specedit`` stats; wall seconds as the client saw them), tokens per
target call, acceptance, and OpenAI's ``accepted_prediction_tokens`` /
``rejected_prediction_tokens``; ratios to plain; and saves a JSON record
(``<out>/predict-<time>.json``) with every run, the model and the machine.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import statistics
import time
import urllib.request
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from .record import machine, save_record

log = logging.getLogger(__name__)

MODES = ("prediction", "edited prediction", "no prediction", "plain")
SAMPLE = Path(__file__).resolve().parent.parent / "app" / "samples" / "inventory.py"
INSTRUCTION = "Rename the method low_stock to items_below, and update its callers."
RENAME = "low_stock=items_below"
SYSTEM = "You edit code. Reply with the complete new file in one code block and nothing else."


def request_body(
    model: str, text: str, instruction: str, mode: str, max_tokens: int, rename: str = RENAME
) -> dict:
    """The chat request of ``mode`` (module docstring); ``rename`` is ``OLD=NEW``, the
    client's guess of the edit in ``edited prediction``."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"{instruction}\n\n```python\n{text}```"},
        ],
        "temperature": 0,
        "max_tokens": max_tokens,
    }
    if mode == "prediction":
        body["prediction"] = {"type": "content", "content": f"```python\n{text}```"}
    if mode == "edited prediction":
        old, _, new = rename.partition("=")
        guess = text.replace(old, new) if old else text
        body["prediction"] = {"type": "content", "content": f"```python\n{guess}```"}
    if mode == "plain":
        body["specedit"] = {"draft": "none"}
    return body


def post(url: str, body: dict) -> tuple[dict, float]:
    """The response of ``POST url`` and the seconds it took, as the client saw them."""
    data = json.dumps(body).encode()
    req = urllib.request.Request(url, data, {"Content-Type": "application/json"})
    t = time.perf_counter()
    with urllib.request.urlopen(req, timeout=3600) as r:
        out = json.loads(r.read())
    return out, time.perf_counter() - t


def one_run(url: str, body: dict, mode: str) -> dict:
    out, wall = post(url, body)
    u, x = out["usage"], out["specedit"]
    s = x["stats"]
    d = u["completion_tokens_details"]
    return {
        "mode": mode,
        "wall_s": round(wall, 3),
        "completion_tokens": u["completion_tokens"],
        "prompt_tokens": u["prompt_tokens"],
        "decode_tps": s["decode_tps"],
        "e2e_tps": round(u["completion_tokens"] / wall, 2) if wall > 0 else 0.0,
        "prefill_s": s["prefill_s"],
        "tokens_per_call": s["tokens_per_call"],
        "acceptance": s["acceptance"],
        "drafted_by_source": s["drafted_by_source"],
        "accepted_prediction_tokens": d["accepted_prediction_tokens"],
        "rejected_prediction_tokens": d["rejected_prediction_tokens"],
        "finish_reason": out["choices"][0]["finish_reason"],
        "text_sha256": hashlib.sha256(out["choices"][0]["message"]["content"].encode()).hexdigest(),
    }


def summarize(runs: list[dict]) -> dict[str, dict]:
    """Medians per mode, and tok/s ratios to plain."""
    out: dict[str, dict] = {}
    for mode in MODES:
        rows = [r for r in runs if r["mode"] == mode]
        if not rows:
            continue
        out[mode] = {
            k: round(statistics.median(r[k] for r in rows), 3)
            for k in (
                "decode_tps",
                "e2e_tps",
                "wall_s",
                "tokens_per_call",
                "acceptance",
                "completion_tokens",
                "accepted_prediction_tokens",
                "rejected_prediction_tokens",
            )
        }
    plain_texts = {r["repeat"]: r["text_sha256"] for r in runs if r["mode"] == "plain"}
    for mode, v in out.items():
        same = [r["text_sha256"] == plain_texts.get(r["repeat"]) for r in runs if r["mode"] == mode]
        v["same_text_as_plain"] = f"{sum(same)}/{len(same)}"
    plain = out.get("plain")
    for v in out.values():
        if plain and plain["decode_tps"] and plain["e2e_tps"]:
            v["decode_vs_plain"] = round(v["decode_tps"] / plain["decode_tps"], 2)
            v["e2e_vs_plain"] = round(v["e2e_tps"] / plain["e2e_tps"], 2)
    return out


def table(summary: dict[str, dict], model: str) -> Table:
    t = Table(title=f"specedit bench predict: {model} (medians)")
    for col in ("mode", "decode tok/s", "e2e tok/s", "vs plain", "tok/call", "accept",
                "tokens", "pred. accepted", "pred. rejected", "= plain"):  # fmt: skip
        t.add_column(col, justify="left" if col == "mode" else "right")
    for mode, v in summary.items():
        t.add_row(
            mode,
            f"{v['decode_tps']:.1f}",
            f"{v['e2e_tps']:.1f}",
            f"{v.get('decode_vs_plain', 0):.2f}x",
            f"{v['tokens_per_call']:.2f}",
            f"{v['acceptance']:.0%}",
            f"{v['completion_tokens']:.0f}",
            f"{v['accepted_prediction_tokens']:.0f}",
            f"{v['rejected_prediction_tokens']:.0f}",
            v["same_text_as_plain"],
        )
    return t


def main(argv: list[str]) -> int:
    from ..app.options import LoadConfig
    from ..app.runtime.loaded_model import load_model
    from ..app.server.http_serve import HttpThread

    d = LoadConfig()
    p = argparse.ArgumentParser(prog="specedit bench predict", description=__doc__.split("\n")[0])
    p.add_argument("--model", default=d.model)
    p.add_argument("-r", "--repeats", type=int, default=3)
    p.add_argument("--ctx", dest="n_ctx", type=int, default=8192)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--file", default=str(SAMPLE))
    p.add_argument("--instruction", default=INSTRUCTION)
    p.add_argument(
        "--predict-rename",
        default=RENAME,
        metavar="OLD=NEW",
        help="the client's guess in the edited prediction: the file with OLD replaced by NEW",
    )
    p.add_argument("--out", default="bench/results")
    p.add_argument("--log-level", default="WARNING")
    a = p.parse_args(argv)
    logging.basicConfig(level=getattr(logging, a.log_level.upper(), logging.WARNING))
    text = Path(a.file).read_text()
    loaded = load_model(LoadConfig(model=a.model, n_ctx=a.n_ctx, threads=a.threads))
    max_tokens = int(len(loaded.target.tokenize(text)) * 1.3) + 64
    runs: list[dict] = []
    with HttpThread(loaded) as th:
        url = f"{th.base_url}/chat/completions"
        model = th.api.models[0]
        post(url, request_body(model, "x = 1\n", "Say ok.", "plain", 4))  # warm the engine
        for i in range(a.repeats):
            for mode in MODES:
                body = request_body(model, text, a.instruction, mode, max_tokens, a.predict_rename)
                r = one_run(url, body, mode)
                r["repeat"] = i
                runs.append(r)
                log.info("%s", r)
    summary = summarize(runs)
    Console().print(table(summary, loaded.model_name))
    record = {
        "bench": "predict",
        "model": loaded.describe(),
        "machine": machine(),
        "file": a.file,
        "instruction": a.instruction,
        "predict_rename": a.predict_rename,
        "max_tokens": max_tokens,
        "summary": summary,
        "runs": runs,
    }
    path = save_record(record, a.out, "predict")
    Console().print(f"record: {path}")
    loaded.target.close()
    return 0
