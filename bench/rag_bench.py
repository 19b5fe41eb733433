"""The RAG suite: answers that quote, checked, and how fast they come, side by side.

Contract: ``specedit bench rag [--model M] [--styles quote loose free] [--drafts lookup none plain]
[--questions ID ...] [--spec-bench N] [--max-tokens N] [--exact] [--threads N] [--ctx N]``
loads one model and asks every question of ``bench/rag_tasks.py`` (101 questions with
known answers over vendored docs of eleven kinds, plus the first ``N`` Spec-Bench rag
prompts) through the product's own ``app.answer.answer``, in each answer style
(``quote``: the product: the model's answer in its own words, then the passage the program
chooses and copies in, ``app.answer.quote_insert``; ``loose``: the quote prompt, passages typed and
unguarded; ``free``: the model's words alone, kept to measure against)
and with each drafting (``lookup``: specedit; ``none``: no drafter; ``plain``: plain
decoding, no drafter and no passage copied in by the program, so in the ``quote`` style
the quote prompt with every passage typed by the target: ``DRAFTS``). Runs over the
same files come together (the smallest files first), in one pass over them per prompt
(``passes``: the quote style's plain runs ask with the quote prompt, its others with the
free one), so the files are read once per prompt (the target keeps their prefix; decode
speed does not depend on it); the styles take turns going first, and the draftings that
share a prompt run back to back on each question, taking turns going first, so the
machine's noise hits them alike.

Each run records the answer, its citations as ``app.answer.quotes`` checked them (``quotes_found``:
it quotes, and every quote is where it says), whether it is right (``RagQuestion.judge``:
its own words), whether its found quotes state the answer (``supported``:
``RagQuestion.supports``; None when it quotes nothing), decode tok/s (the model's tokens
only: ``engine.metrics``), the model's tokens and those the program copied in, apart, the
wall time of the answer, acceptance, and the load average; ``same_output``: the question's lookup and none answers are the same
text (greedy, they differ only where batched verification moves a near-tie: llama.cpp's CPU
path without ``--exact``; ``plain`` is compared with nothing, its passages are the model's). The record (``bench/results/rag-<time>.json``, rewritten after
each question, so a run cut short keeps what it measured) has every run and, per style,
drafting and set (``questions``, ``spec_bench``): the quote rate (share of answers whose
quotes are all found), the quoted answers whose quotes state the answer (``support``), right
answers (``right``), right answers none of whose quotes is off the point (``right+``: the
issue's "a quote that is found but does not support the answer is wrong"), medians of decode
tok/s, the model's tokens, the tokens copied in and the wall time, and two speed-ups over
plain (or none): the median of each question's ratio of decode tok/s (``speedup``), and of
wall times (``wall_speedup``: answers that differ in their copied text are compared by the
time they took, never by a rate that counts it). ``--from RECORD`` re-checks a record's answers with today's checks (no model) and
writes it again, with its table.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
from itertools import groupby
from pathlib import Path

from .rag_tasks import RagQuestion, load_questions, spec_bench_questions
from .record import machine, save_record

log = logging.getLogger(__name__)

STYLES = ("quote", "loose", "free")
"""``quote``: the product (the model's words, then the program's passage; with ``plain``,
the quote prompt, passages typed under ``app.answer.quote_guard``); ``loose``: the quote prompt,
the passages unguarded; ``free``: the model's words alone."""
DRAFTS = ("lookup", "none", "plain")
"""``lookup``: specedit (prompt lookup); ``none``: no drafter; ``plain``: no drafter and no
passage written by the program (``RewriteOptions.insert_quotes`` off): every output token
comes from the target, as plain decoding's would. The speed-up is over ``plain`` when it
runs, else over ``none``."""
MAX_TOKENS = 256


def judged(q: RagQuestion, output: str, citations) -> dict:
    """A run's judgement of ``output`` and its checked ``citations`` (``app.answer.quotes``): right
    in its own words, its quotes, all found, whether a found one states the answer."""
    from ..app.answer.quotes import all_found

    return {
        "right": q.judge(output),
        "quotes": len(citations),
        "quotes_found": all_found(citations),
        "supported": q.supports([c.quote for c in citations if c.found]),
        "citations": [c.to_json() for c in citations],
    }


def _asked(style: str, draft: str, a=None):
    """(options, ``answer``'s style) of a run in ``style`` with ``draft`` (``a``: the
    command's arguments, for its limits; None when only the prompt matters)."""
    from ..app.options import RewriteOptions

    opts = RewriteOptions(
        draft="none" if draft == "plain" else draft,
        verbatim=style != "loose",
        insert_quotes=draft != "plain",
        **({} if a is None else {"max_tokens": a.max_tokens, "exact": a.exact}),
    )
    return opts, "quote" if style == "loose" else style


def run_question(loaded, q: RagQuestion, style: str, drafts: list[str], first: int, a):
    """``q`` answered in ``style`` with each drafting (``drafts[first]`` first)."""
    from ..app.answer.answer import answer

    rows = []
    for draft in drafts[first:] + drafts[:first]:
        opts, asked = _asked(style, draft, a)
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        res = answer(loaded, q.question, q.context_files(), opts, style=asked)
        wall = time.perf_counter() - t0
        s = res.metrics.snapshot()
        rows.append(
            {
                "id": q.id,
                "set": "spec_bench" if q.texts is not None else "questions",
                "style": style,
                "draft": draft,
                **judged(q, res.text, res.citations),
                "output": res.text,
                "decode_tps": s["decode_tps"],
                "generated_tokens": s["generated_tokens"],
                "model_tokens": s["model_tokens"],
                "inserted_tokens": s["inserted_tokens"],
                "wall_s": round(wall, 3),
                "prompt_tokens": s["prompt_tokens"],
                "cached_tokens": s["cached_tokens"],
                "prefill_s": s["prefill_s"],
                "decode_s": s["decode_s"],
                "acceptance": s["acceptance"],
                "tokens_per_call": s["tokens_per_call"],
                "stop_reason": s["stop_reason"],
                "load": round(load, 2),
            }
        )
        r = rows[-1]
        log.warning(
            "%s %s %s: %s, quotes %d%s, %d model tokens at %.1f tok/s, %d copied in, %.1f s",
            q.id,
            style,
            draft,
            {True: "right", False: "WRONG", None: "-"}[r["right"]],
            r["quotes"],
            " all found" if r["quotes_found"] else "",
            r["model_tokens"],
            r["decode_tps"],
            r["inserted_tokens"],
            r["wall_s"],
        )
    by = {r["draft"]: r["output"] for r in rows if r["draft"] != "plain"}
    for r in rows:
        r["same_output"] = len(set(by.values())) <= 1 or r["draft"] == "plain"
    return rows


def _median(xs):
    xs = [x for x in xs if x is not None]
    return round(statistics.median(xs), 3) if xs else None


def summarise(runs: list[dict]) -> dict:
    """Per set, style and drafting: quote rate, right answers, medians; per set and style:
    the speed-up of the first drafting over each other one (median of per-question ratios)."""
    out: dict = {}
    for key, rs in groupby(sorted(runs, key=_key), key=_key):
        rs = list(rs)
        st, style, draft = key
        judged = [r["right"] for r in rs if r["right"] is not None]
        out.setdefault(st, {}).setdefault(style, {})[draft] = {
            "runs": len(rs),
            "quote_rate": round(sum(r["quotes_found"] for r in rs) / len(rs), 3),
            "right": sum(judged) if judged else None,
            "judged": len(judged),
            # right in its own words, and none of its quotes is off the point
            "right_supported": sum(
                bool(r["right"]) and r.get("supported") is not False for r in rs
            ),
            "quoted_judged": sum(r.get("supported") is not None for r in rs),
            "supported": sum(r.get("supported") is True for r in rs),
            "same_output": sum(r["same_output"] for r in rs),
            "median_decode_tps": _median(r["decode_tps"] for r in rs),
            "median_generated_tokens": _median(r["generated_tokens"] for r in rs),
            "median_model_tokens": _median(_model_tokens(r) for r in rs),
            "median_inserted_tokens": _median(r.get("inserted_tokens", 0) for r in rs),
            "median_wall_s": _median(r.get("wall_s") for r in rs),
            "median_acceptance": _median(r["acceptance"] for r in rs),
        }
    for st, styles in out.items():
        for style, drafts in styles.items():
            names = list(drafts)
            base = "plain" if "plain" in names else "none" if "none" in names else None
            for draft in names:
                if base is None or draft == base:
                    continue
                mine = [r for r in runs if r["set"] == st and r["style"] == style]
                # a rate: this drafting's over the base's; a wait: the base's over this one's
                drafts[draft]["speedup"] = _ratio(mine, "decode_tps", draft, base)
                drafts[draft]["wall_speedup"] = _ratio(mine, "wall_s", base, draft)
                drafts[draft]["speedup_over"] = base
    return out


def _ratio(runs: list[dict], figure: str, over: str, under: str) -> float | None:
    """The median over questions of ``figure`` of the ``over`` drafting's run divided by the
    ``under`` one's (None where no question has both)."""
    ratios = []
    for q in {r["id"] for r in runs}:
        pair = {r["draft"]: r.get(figure) for r in runs if r["id"] == q}
        if pair.get(over) and pair.get(under):
            ratios.append(pair[over] / pair[under])
    return _median(ratios)


def _model_tokens(r: dict) -> int:
    """A run's model tokens (``Metrics.model_tokens``; a record from before they were
    recorded has its generated tokens)."""
    return r.get("model_tokens", r["generated_tokens"])


def _key(r: dict) -> tuple[str, str, str]:
    return r["set"], r["style"], r["draft"]


def passes(styles: list[str], drafts: list[str]) -> list[list[tuple[str, list[str]]]]:
    """The runs over one group of files as passes over its questions, one per prompt
    (``app.answer.answer.answer_prompt_style``), in ``styles``' order: each pass's (style,
    draftings) share the prompt, so the target reads the files once per pass."""
    from ..app.answer.answer import answer_prompt_style

    by_prompt: dict[str, list[tuple[str, list[str]]]] = {}
    for style in styles:
        for draft in drafts:
            opts, asked = _asked(style, draft)
            prompt = answer_prompt_style(asked, opts)
            pass_ = by_prompt.setdefault(prompt, [])
            if pass_ and pass_[-1][0] == style:
                pass_[-1][1].append(draft)
            else:
                pass_.append((style, [draft]))
    return list(by_prompt.values())


def run(loaded, questions: list[RagQuestion], a, on_runs=None) -> list[dict]:
    """Every question in every style and drafting: files together, the smallest files
    first, styles taking turns, one pass over a group's questions per prompt (``passes``);
    ``on_runs(runs)`` after each question (a checkpoint)."""
    runs: list[dict] = []
    groups = [list(g) for _, g in groupby(questions, key=lambda q: (q.docs, q.texts))]
    groups.sort(key=lambda g: sum(len(t) for _, t in g[0].context_files()))
    n = 0
    for gi, group in enumerate(groups):
        styles = list(a.styles)
        styles = styles[gi % len(styles) :] + styles[: gi % len(styles)]
        for pass_ in passes(styles, list(a.drafts)):
            for q in group:
                for style, drafts in pass_:
                    runs += run_question(loaded, q, style, drafts, n % len(drafts), a)
                    n += 1
                if on_runs is not None:
                    on_runs(runs)
    return runs


def recheck(record: dict) -> dict:
    """``record`` with every answer judged and its citations checked again by today's
    checks (``RagQuestion.judge``, ``app.answer.quotes``), and its summary redone: the answers
    are what was measured, the checks may have moved on."""
    from ..app.answer.quotes import check_citations

    n_spec = sum(r["set"] == "spec_bench" for r in record["runs"])
    by_id = {q.id: q for q in load_questions() + spec_bench_questions(n_spec)}
    runs = []
    for r in record["runs"]:
        q = by_id[r["id"]]
        cs = check_citations(r["output"], q.context_files())
        runs.append(
            {
                **r,
                **judged(q, r["output"], cs),
            }
        )
    return {**record, "runs": runs, "summary": summarise(runs)}


def table(rec: dict) -> str:
    lines = [
        f"{rec['model']}  (load average {rec['load_range'][0]}-{rec['load_range'][1]})",
        f"  {'set':<11} {'style':<6} {'draft':<7} {'quoted':>7} {'support':>7} {'right':>7} "
        f"{'right+':>7} {'tok/s':>7} {'tokens':>7} {'copied':>7} {'wall s':>7} {'accept':>7} "
        f"{'speed-up':>8} {'wall':>7}",
    ]
    for st, styles in rec["summary"].items():
        for style, drafts in styles.items():
            for draft, g in drafts.items():
                right = "-" if g["right"] is None else f"{g['right']}/{g['judged']}"
                both = (
                    "-" if g["right"] is None else f"{g.get('right_supported', '?')}/{g['judged']}"
                )
                qj = g.get("quoted_judged")
                sup = "-" if not qj else f"{g['supported']}/{qj}"
                sp = g.get("speedup", g.get("speedup_vs_none"))
                wsp = g.get("wall_speedup")
                lines.append(
                    f"  {st:<11} {style:<6} {draft:<7} {g['quote_rate']:>7.0%} {sup:>7} {right:>7} "
                    f"{both:>7} "
                    f"{_fmt(g['median_decode_tps'])} "
                    f"{_fmt(g.get('median_model_tokens', g['median_generated_tokens']))} "
                    f"{_fmt(g.get('median_inserted_tokens'))} "
                    f"{_fmt(g.get('median_wall_s'))} "
                    f"{_fmt(g['median_acceptance'], 2)} "
                    f"{'' if sp is None else f'{sp:.2f}x':>8} "
                    f"{'' if wsp is None else f'{wsp:.2f}x':>7}"
                )
    return "\n".join(lines) + "\n"


def _fmt(x, digits: int = 1) -> str:
    return f"{'-':>7}" if x is None else f"{x:>7.{digits}f}"


def main(argv: list[str] | None = None) -> int:
    from ..app.options import DEFAULT_CTX
    from ..app.runtime.loaded_model import load_model
    from ..models.catalog import DEFAULT_MODEL

    ap = argparse.ArgumentParser(prog="specedit bench rag", description=__doc__)
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--styles", nargs="+", default=list(STYLES), choices=STYLES)
    ap.add_argument("--drafts", nargs="+", default=list(DRAFTS), choices=DRAFTS)
    ap.add_argument("--questions", nargs="+", default=None, help="question ids (default: all)")
    ap.add_argument("--spec-bench", type=int, default=4, help="Spec-Bench rag prompts")
    ap.add_argument("--max-tokens", type=int, default=MAX_TOKENS)
    ap.add_argument("--ctx", dest="n_ctx", type=int, default=DEFAULT_CTX)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--exact", action="store_true", help="verify as 1-token decoding does")
    ap.add_argument("--out", default="bench/results")
    ap.add_argument(
        "--from", dest="from_record", help="re-check a record's answers (no model): its table"
    )
    a = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if a.from_record:
        record = recheck(json.loads(Path(a.from_record).read_text()))
        record["rechecked_from"] = a.from_record
        path = save_record(record, a.out, "rag")
        sys.stdout.write(table(record))
        sys.stdout.write(f"wrote {path}\n")
        return 0
    questions = load_questions()
    if a.questions:
        unknown = set(a.questions) - {q.id for q in questions}
        if unknown:
            ap.error(f"unknown question ids: {', '.join(sorted(unknown))}")
        questions = [q for q in questions if q.id in a.questions]
    questions += spec_bench_questions(a.spec_bench)
    loaded = load_model(a.model, n_ctx=a.n_ctx, threads=a.threads)
    machine_info = machine()
    path = None

    def record_of(runs: list[dict]) -> dict:
        loads = [r["load"] for r in runs] or [0.0]
        return {
            "model": a.model,
            "describe": loaded.describe(),
            "machine": machine_info,
            "styles": a.styles,
            "drafts": a.drafts,
            "max_tokens": a.max_tokens,
            "exact": a.exact,
            "questions": [q.id for q in questions],
            "load_range": [min(loads), max(loads)],
            "summary": summarise(runs),
            "runs": runs,
        }

    def checkpoint(runs: list[dict]) -> None:
        # the record so far, rewritten after each question: a run cut short keeps its figures
        nonlocal path
        path = save_record(record_of(runs), a.out, "rag", path)

    try:
        runs = run(loaded, questions, a, checkpoint)
    finally:
        loaded.target.close()
    record = record_of(runs)
    checkpoint(runs)
    sys.stdout.write(table(record))
    sys.stdout.write(f"wrote {path}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
