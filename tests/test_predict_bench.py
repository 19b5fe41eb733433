"""``specedit bench predict``'s requests and summary (no model: what each mode sends and
how the medians and ratios are taken; the bench itself is run as ``specedit bench predict``,
bench/README.md)."""

from __future__ import annotations

from specedit.bench.predict_bench import MODES, request_body, summarize

TEXT = "def f(quantity):\n    return quantity * 2\n"


def test_each_mode_sends_what_it_says():
    bodies = {
        m: request_body("m", TEXT, "Rename quantity to qty.", m, 99, "quantity=qty") for m in MODES
    }
    assert bodies["prediction"]["prediction"]["content"] == f"```python\n{TEXT}```"
    guess = bodies["edited prediction"]["prediction"]["content"]
    assert guess == "```python\ndef f(qty):\n    return qty * 2\n```"
    assert "prediction" not in bodies["no prediction"] and "prediction" not in bodies["plain"]
    assert bodies["plain"]["specedit"] == {"draft": "none"}
    # the same question in every mode: only the prediction and the drafting differ
    assert len({str(b["messages"]) for b in bodies.values()}) == 1
    assert {b["temperature"] for b in bodies.values()} == {0}


def _run(mode: str, repeat: int, tps: float, sha: str) -> dict:
    return {
        "mode": mode, "repeat": repeat, "decode_tps": tps, "e2e_tps": tps / 2, "wall_s": 1.0,
        "tokens_per_call": 2.0, "acceptance": 0.5, "completion_tokens": 10,
        "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0, "text_sha256": sha,
    }  # fmt: skip


def test_the_summary_takes_medians_and_ratios_to_plain():
    runs = [_run("plain", i, 2.0 + i, "a") for i in range(3)]
    runs += [_run("edited prediction", i, 9.0 + i, "a" if i else "b") for i in range(3)]
    s = summarize(runs)
    assert list(s) == ["edited prediction", "plain"]  # in MODES' order, only the modes run
    assert s["plain"]["decode_tps"] == 3.0 and s["plain"]["decode_vs_plain"] == 1.0
    assert s["edited prediction"]["decode_vs_plain"] == round(10.0 / 3.0, 2)
    assert s["edited prediction"]["same_text_as_plain"] == "2/3"
