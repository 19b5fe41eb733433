"""``specedit bench client``: a real client's recorded request through ``specedit serve
--http`` and through llama.cpp's ``llama-server``, side by side.

Contract: ``specedit bench client [--model M] [-r R] [--requests NAME ...] [--configs C ...]
[--ctx N] [--threads T] [--out DIR]`` replays each recorded request
(``bench/data/clients/NAME.json``, the exact body a client sent, recorded by
``bench/client_record.py``; default: every file there) as the client would send it, greedy
(temperature 0, a fixed seed; a request without ``max_tokens`` gets
``server_peer.CLIENT_MAX_TOKENS``), interleaved R times:

* ``specedit``: ``POST /v1/chat/completions`` to the real HTTP API over the loaded model
  (``app.server.http_serve.HttpThread``, what ``specedit serve --http`` serves); before each
  run a one-line request replaces the kept prompt, so every run reads its prompt cold;
* ``llama-server CONFIG``: the same body to a fresh ``llama-server`` per run
  (``bench.llama_server``) on the same GGUF file, for each of ``--configs`` (default: none and
  the n-gram configurations that did best in ``specedit bench peer``).

For each it prints, as medians over the repeats: decode tok/s (specedit's stats; llama-server's
``timings``, both tokens after the first over the time after the first), the wall seconds the
client waited for the whole answer, completion and prompt tokens, acceptance, and whether the
answer is the ``none`` run's text; then specedit over the best n-gram configuration, in tok/s
and in wall time. Saves ``<out>/client-<time>.json`` with every run, the machine, the commit
and ``llama-server --version``.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from . import llama_server as ls
from .record import machine, save_record
from .server_peer import CLIENT_MAX_TOKENS, CLIENTS_DIR, commit, first_difference, load_client

log = logging.getLogger(__name__)

CONFIGS = ("none", "ngram-simple", "ngram-mod")


def replay_body(request: dict) -> dict:
    """The recorded body, greedy with the fixed seed, not streamed, with a cap."""
    body = {**request, "temperature": 0, "seed": ls.SEED, "stream": False}
    body.setdefault("max_tokens", CLIENT_MAX_TOKENS)
    return body


def specedit_run(url: str, model: str, request: dict) -> dict:
    ls.post(url, {"model": model, "messages": [{"role": "user", "content": "Say ok."}],
                  "max_tokens": 2, "temperature": 0})  # fmt: skip
    out, wall = ls.post(url, {**replay_body(request), "model": model})
    s = out["specedit"]["stats"]
    return {
        "mode": "specedit",
        "decode_tps": s["decode_tps"],
        "wall_s": round(wall, 3),
        "completion_tokens": out["usage"]["completion_tokens"],
        "prompt_tokens": out["usage"]["prompt_tokens"],
        "acceptance": s["acceptance"],
        "text": out["choices"][0]["message"]["content"],
    }


def server_run(path: Path, model: Path, config: str, request: dict, n_ctx, threads) -> dict:
    with ls.LlamaServer(path, model, ls.CONFIGS[config], n_ctx, threads) as srv:
        rep = srv.chat(replay_body(request))
    t = rep.timings
    return {
        "mode": config,
        "decode_tps": round(t.decode_tps, 2),
        "wall_s": round(rep.wall_s, 3),
        "completion_tokens": t.predicted_n,
        "prompt_tokens": t.prompt_n,
        "acceptance": t.acceptance,
        "text": rep.text,
    }


def summarize(runs: list[dict]) -> dict:
    """Medians per request and mode; specedit over the best n-gram configuration."""
    out: dict = {}
    for name in dict.fromkeys(r["request"] for r in runs):
        rs = [r for r in runs if r["request"] == name]
        ref = next((r["text"] for r in rs if r["mode"] == "none"), None)
        row: dict = {}
        for mode in dict.fromkeys(r["mode"] for r in rs):
            ms = [r for r in rs if r["mode"] == mode]
            accs = [r["acceptance"] for r in ms if r["acceptance"] is not None]
            row[mode] = {
                k: round(statistics.median(r[k] for r in ms), 3)
                for k in ("decode_tps", "wall_s", "completion_tokens", "prompt_tokens")
            }
            row[mode]["acceptance"] = round(statistics.median(accs), 3) if accs else None
            row[mode]["differs_from_none"] = (
                None if ref is None else first_difference(ms[0]["text"], ref)
            )
        ngram = {m: v for m, v in row.items() if m not in ("specedit", "none")}
        spec = row.get("specedit")
        if ngram and spec:
            best = max(ngram, key=lambda m: ngram[m]["decode_tps"])
            row["best_ngram"] = best
            row["specedit_vs_best_tps"] = round(spec["decode_tps"] / ngram[best]["decode_tps"], 3)
            row["best_vs_specedit_wall"] = round(ngram[best]["wall_s"] / spec["wall_s"], 3)
        out[name] = row
    return out


def notes(summary: dict) -> list[str]:
    """The ratios in words, and each answer that is not the ``none`` run's text."""
    out = []
    for name, row in summary.items():
        if "best_ngram" in row:
            out.append(
                f"{name}: specedit {row['specedit_vs_best_tps']:.2f}x the decode tok/s of "
                f"llama-server {row['best_ngram']}; its wall time "
                f"{row['best_vs_specedit_wall']:.2f}x specedit's"
            )
        for mode, v in row.items():
            if isinstance(v, dict) and v["differs_from_none"]:
                out.append(
                    f"{name}: {mode} differs from llama-server none: {v['differs_from_none']}"
                )
    return out


def table(summary: dict, model: str) -> Table:
    t = Table(title=f"specedit bench client: {model} (medians)")
    for c in ("request", "server", "decode tok/s", "wall s", "tokens", "prompt", "accept",
              "vs specedit tok/s", "same as none"):  # fmt: skip
        t.add_column(c, justify="left" if c in ("request", "server", "same as none") else "right")
    for name, row in summary.items():
        spec = row.get("specedit", {}).get("decode_tps")
        for mode, v in row.items():
            if not isinstance(v, dict):
                continue
            acc = "-" if v["acceptance"] is None else f"{v['acceptance']:.2f}"
            rel = f"{v['decode_tps'] / spec:.2f}" if spec else "-"
            same = "-" if mode == "none" else ("yes" if not v["differs_from_none"] else "no")
            t.add_row(
                name,
                "specedit serve --http" if mode == "specedit" else f"llama-server {mode}",
                f"{v['decode_tps']:.1f}",
                f"{v['wall_s']:.1f}",
                f"{v['completion_tokens']:.0f}",
                f"{v['prompt_tokens']:.0f}",
                acc,
                rel,
                same,
            )
    return t


def main(argv: list[str]) -> int:
    from ..app.options import LoadConfig
    from ..app.runtime.loaded_model import load_model
    from ..app.server.http_serve import HttpThread
    from .server_peer import server_binary

    names = sorted(p.stem for p in CLIENTS_DIR.glob("*.json"))
    p = argparse.ArgumentParser(prog="specedit bench client", description=__doc__.split("\n")[0])
    p.add_argument("--model", default=LoadConfig().model)
    p.add_argument("-r", "--repeats", type=int, default=2)
    p.add_argument("--requests", nargs="+", default=names, choices=names)
    p.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(ls.CONFIGS))
    p.add_argument("--ctx", dest="n_ctx", type=int, default=8192)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--out", default="bench/results")
    p.add_argument("--log-level", default="WARNING")
    a = p.parse_args(argv)
    logging.basicConfig(level=getattr(logging, a.log_level.upper(), logging.WARNING))
    err = Console(stderr=True)
    path = server_binary(err)
    loaded = load_model(LoadConfig(model=a.model, n_ctx=a.n_ctx, threads=a.threads))
    records = {n: load_client(n) for n in a.requests}
    runs: list[dict] = []
    with HttpThread(loaded) as th:
        url = f"{th.base_url}/chat/completions"
        model = th.api.models[0]
        for i in range(a.repeats):
            for name, rec in records.items():
                for mode in ["specedit", *a.configs]:
                    err.print(f"[dim]{name} {mode} #{i + 1}[/]")
                    if mode == "specedit":
                        r = specedit_run(url, model, rec["request"])
                    else:
                        r = server_run(
                            path, loaded.model_path, mode, rec["request"], a.n_ctx, a.threads
                        )
                    runs.append({"request": name, "repeat": i, **r})
    summary = summarize(runs)
    out = Console() if sys.stdout.isatty() else Console(width=200)
    out.print(table(summary, loaded.model_name))
    for line in notes(summary):
        out.print(line)
    record = {
        "bench": "client",
        "model": loaded.describe(),
        "machine": machine(
            {"commit": commit(), "llama_server": ls.version(path), "llama_server_path": str(path)}
        ),
        "requests": {n: {k: v for k, v in r.items() if k != "request"} for n, r in records.items()},
        "configs": {c: list(ls.CONFIGS[c].args) for c in a.configs},
        "summary": summary,
        "runs": runs,
    }
    err.print(f"wrote {save_record(record, a.out, 'client')}")
    loaded.target.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
