"""Models by the names people know: Ollama, LM Studio and Hugging Face cache layouts.

The catalog's SmolLM2-135M (and, end to end, the 0.5B) are laid out under a scratch HOME
the way each app stores them: a real Ollama manifest naming the blob by its sha256 (the
blob a hard link to the pulled file, a symlink where hard links cannot cross), LM Studio's
``publisher/model/file.gguf``, and the Hugging Face cache's snapshot symlink into
``blobs/``. Nothing is copied, so a test costs no disk and no download.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from specedit.app.cli.main import main
from specedit.engine.backend import ModelError
from specedit.models.catalog import CATALOG, TEST_MODEL, resolve_model

pytestmark = pytest.mark.model

SMOL = "smollm2-135m"
LMS_REPO = "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF"
LMS_FILE = "smollm2-135m-instruct-q4_1.gguf"
HF_COMMIT = "4b0a8d2f7c5e9a1b3d6f8e0c2a4b6d8f0e1c3a5b"
STORE_ENV = ("OLLAMA_MODELS", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME")


def _link(src: Path, dst: Path) -> None:
    """``dst`` as the same file as ``src``: a hard link, else a symlink (never a copy)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        dst.symlink_to(src)


def place_in_ollama(models: Path, catalog_name: str, ollama_name: str, src: Path) -> Path:
    """Lay ``src`` out as Ollama's ``pull`` does; return the blob."""
    entry = CATALOG[catalog_name]
    name, _, tag = ollama_name.partition(":")
    blob = models / "blobs" / f"sha256-{entry.sha256}"
    _link(src, blob)
    template = models / "blobs" / f"sha256-{'1' * 64}"
    template.write_text("{{ .Prompt }}")
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": {
            "mediaType": "application/vnd.docker.container.image.v1+json",
            "digest": f"sha256:{'2' * 64}",
            "size": 487,
        },
        "layers": [
            {
                "mediaType": "application/vnd.ollama.image.model",
                "digest": f"sha256:{entry.sha256}",
                "size": entry.size_bytes,
            },
            {
                "mediaType": "application/vnd.ollama.image.template",
                "digest": f"sha256:{'1' * 64}",
                "size": 13,
            },
        ],
    }
    path = models / "manifests" / "registry.ollama.ai" / "library" / name / tag
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest))
    return blob


@pytest.fixture
def home(tmp_path, monkeypatch, smollm_path):
    """A scratch HOME with SmolLM2 in all three stores, and a broken Ollama manifest."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for var in (*STORE_ENV, "XDG_CACHE_HOME", "SPECEDIT_MODEL"):
        monkeypatch.delenv(var, raising=False)
    ollama = home / ".ollama" / "models"
    place_in_ollama(ollama, SMOL, "smollm2:135m", smollm_path)
    broken = ollama / "manifests" / "registry.ollama.ai" / "library" / "broken" / "latest"
    broken.parent.mkdir(parents=True)
    layer = {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{'9' * 64}"}
    broken.write_text(json.dumps({"schemaVersion": 2, "layers": [layer]}))
    lms = home / ".lmstudio" / "models" / LMS_REPO
    lms.mkdir(parents=True)
    (lms / LMS_FILE).symlink_to(smollm_path)
    (lms / "mmproj-model-f16.gguf").write_bytes(b"GGUF not a model")  # never a model file
    repo = home / ".cache" / "huggingface" / "hub" / ("models--" + LMS_REPO.replace("/", "--"))
    _link(smollm_path, repo / "blobs" / CATALOG[SMOL].sha256)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(HF_COMMIT)
    (repo / "snapshots" / HF_COMMIT).mkdir(parents=True)
    snap_file = repo / "snapshots" / HF_COMMIT / LMS_FILE
    snap_file.symlink_to(Path("..") / ".." / "blobs" / CATALOG[SMOL].sha256)
    return home


def test_ollama_name_resolves_through_the_manifest(home, smollm_path):
    blob = home / ".ollama" / "models" / "blobs" / f"sha256-{CATALOG[SMOL].sha256}"
    assert resolve_model("ollama:smollm2:135m") == blob
    assert os.path.samefile(blob, smollm_path)  # the pulled file itself: nothing copied
    assert resolve_model("ollama:SmolLM2:135m") == blob  # Ollama's names ignore case
    with pytest.raises(ModelError) as info:  # the tag defaults to latest
        resolve_model("ollama:smollm2")
    msg = str(info.value)
    assert "\n" not in msg and "ollama:smollm2:latest" in msg
    assert "manifests/registry.ollama.ai/library/smollm2/latest" in msg
    assert str(home / ".ollama" / "models") in msg and "$OLLAMA_MODELS is not set" in msg
    assert "did you mean ollama:smollm2:135m?" in msg


def test_ollama_models_env_and_broken_manifests(home, monkeypatch, tmp_path):
    ollama = home / ".ollama" / "models"
    monkeypatch.setenv("OLLAMA_MODELS", str(tmp_path / "elsewhere"))
    with pytest.raises(ModelError, match=r"elsewhere \(missing\) \(\$OLLAMA_MODELS\)"):
        resolve_model("ollama:smollm2:135m")
    monkeypatch.setenv("OLLAMA_MODELS", str(ollama))
    assert resolve_model("ollama:smollm2:135m").parent == ollama / "blobs"
    with pytest.raises(ModelError, match="names is missing.*run: ollama pull broken:latest"):
        resolve_model("ollama:broken")
    manifest = ollama / "manifests" / "registry.ollama.ai" / "library" / "smollm2" / "135m"
    data = json.loads(manifest.read_text())
    data["layers"][0]["size"] += 1  # a blob whose pull did not finish
    manifest.write_text(json.dumps(data))
    with pytest.raises(ModelError, match="its manifest says 98362433"):
        resolve_model("ollama:smollm2:135m")
    data["layers"] = data["layers"][1:]
    manifest.write_text(json.dumps(data))
    with pytest.raises(ModelError, match="has no model layer"):
        resolve_model("ollama:smollm2:135m")


def test_lmstudio_and_hugging_face_names(home, monkeypatch, tmp_path):
    lms = home / ".lmstudio" / "models" / LMS_REPO / LMS_FILE
    assert resolve_model(f"lmstudio:{LMS_REPO}/{LMS_FILE}") == lms
    assert resolve_model(f"lmstudio:{LMS_REPO}") == lms  # its one model file (not mmproj)
    snap = (
        home
        / ".cache"
        / "huggingface"
        / "hub"
        / "models--HuggingFaceTB--SmolLM2-135M-Instruct-GGUF"
    )
    snap = snap / "snapshots" / HF_COMMIT / LMS_FILE
    assert resolve_model(f"hf:{LMS_REPO}/{LMS_FILE}") == snap
    assert resolve_model(f"hf:{LMS_REPO}:q4_1") == snap
    with pytest.raises(ModelError, match="quantization Q8_0 matches 0 model files"):
        resolve_model(f"hf:{LMS_REPO}:Q8_0")
    with pytest.raises(ModelError, match="no file other.gguf in the snapshots"):
        resolve_model(f"hf:{LMS_REPO}/other.gguf")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(ModelError, match=r"hf[/\\]hub \(missing\) \(\$HF_HOME\)"):
        resolve_model(f"hf:{LMS_REPO}/{LMS_FILE}")
    monkeypatch.setenv("HF_HUB_CACHE", str(home / ".cache" / "huggingface" / "hub"))
    assert resolve_model(f"hf:{LMS_REPO}/{LMS_FILE}") == snap


def test_models_list_shows_each_store(home, capsys):
    assert main(["models", "list"]) == 0
    text = capsys.readouterr().out
    assert "qwen2.5-coder-0.5b" in text  # the catalog first
    lines = {ln.split()[0]: ln for ln in text.splitlines() if ln.startswith("  ")}
    for name in ("ollama:smollm2:135m", f"lmstudio:{LMS_REPO}/{LMS_FILE}"):
        assert lines[name].split()[1:] == ["98", "MB", "Q4_1"], lines[name]
    assert lines[f"hf:{LMS_REPO}/{LMS_FILE}"].endswith("98 MB  Q4_1")
    assert "the model blob its manifest" in lines["ollama:broken:latest"]
    assert "mmproj" not in text
    assert f"ollama: {home / '.ollama' / 'models'}" in text


def test_bad_names_fail_with_one_line(home, capsys, tmp_path):
    f = tmp_path / "a.py"
    f.write_text("x = 1\n")
    for argv, name in (
        (["models", "path", "ollama:qwen2.5-coder:7b"], "ollama:qwen2.5-coder:7b"),
        (["rewrite", str(f), "-i", "x", "--model", "lmstudio:nobody/x"], "lmstudio:nobody/x"),
        (["generate", "--context", str(f), "-p", "x", "--model", "hf:a/b/x.gguf"], "hf:a/b/x.gguf"),
    ):
        assert main(argv) == 1, argv
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and err.startswith(f"error: {name}: "), err
        assert str(home) in err  # where it looked
    assert f.read_text() == "x = 1\n"
    # serve sets up its own logging: a process of its own
    r = subprocess.run(
        [sys.executable, "-m", "specedit.app.cli", "serve", "--model", "ollama:nope"]
        + ["--socket", str(tmp_path / "s.sock")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]  # after serve's own "loading" log line
    assert last.startswith("error: ollama:nope:latest: no manifest"), r.stderr
    assert "it has ollama:broken:latest, ollama:smollm2:135m" in last


def test_doctor_lists_the_stores_and_plans_an_ollama_model(home, monkeypatch, smollm_path):
    from specedit.app.cli.doctor import SECTIONS, entry_configs, plan, render, stores_section
    from specedit.models.llama_build import gguf_layer_count

    report = stores_section()
    found = {m["name"]: m for m in report["ollama"]["models"]}
    assert found["ollama:smollm2:135m"]["quantization"] == "Q4_1"
    assert found["ollama:smollm2:135m"]["size"] == CATALOG[SMOL].size_bytes
    assert "problem" in found["ollama:broken:latest"]
    assert [m["name"] for m in report["hf"]["models"]] == [f"hf:{LMS_REPO}/{LMS_FILE}"]
    text = render({key: {} for key in SECTIONS} | {"stores": report})
    assert "    - name=ollama:smollm2:135m, size=93.8 MiB, quantization=Q4_1, path=" in text
    monkeypatch.setenv("SPECEDIT_MODEL", "ollama:smollm2:135m")  # rewrite, serve, the TUI
    for name, cfg in entry_configs().items():
        p = plan(cfg)
        assert p["model"] == "ollama:smollm2:135m" and "error" not in p, (name, p)
        if p["backend"] == "llama.cpp":
            # the layers were read from the blob's GGUF header
            assert p["gpu_layers"].endswith(f"/{gguf_layer_count(smollm_path)}")


def test_terminal_app_setting_names_an_ollama_model(home, smollm_path):
    """The terminal app's model setting (its config file) loads the blob: the app hands
    ``settings.load_config()`` to ``load_model``, which the end-to-end test runs."""
    from specedit.app.cli.doctor import plan
    from specedit.app.tui.config import config_path, load_settings

    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('[tui]\nmodel = "ollama:smollm2:135m"\n')
    settings, problems = load_settings()  # no flags: the file decides
    assert settings.model == "ollama:smollm2:135m" and not problems
    cfg = settings.load_config()
    assert os.path.samefile(resolve_model(cfg.model), smollm_path)
    assert "error" not in plan(cfg)


def test_ollama_model_runs_end_to_end(tmp_path, qwen05_path):
    """``specedit rewrite`` and ``serve`` by the 0.5B's Ollama name, in processes of their own."""
    home = tmp_path / "home"
    ollama = home / ".ollama" / "models"
    blob = place_in_ollama(ollama, TEST_MODEL, "qwen2.5-coder:0.5b", qwen05_path)
    src = tmp_path / "a.py"
    src.write_text("def area(w, h):\n    return w * h\n")
    env = {k: v for k, v in os.environ.items() if k not in (*STORE_ENV, "SPECEDIT_MODEL")}
    env |= {"HOME": str(home), "SPECEDIT_STATE_DIR": str(tmp_path / "state")}
    cli = [sys.executable, "-m", "specedit.app.cli"]
    model = ["--model", "ollama:qwen2.5-coder:0.5b", "--backend", "llama.cpp", "--ctx", "1024"]
    # two threads, as the other model tests (make test runs them alone), so the blob, a hard
    # link to the pulled file, shares the session's model checks (keyed by the file itself)
    model += ["--threads", "2"]
    r = subprocess.run(
        [*cli, "rewrite", str(src), "-i", "Rename area to rect_area.", *model]
        + ["--edit", "whole", "--exact", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    ran = json.loads(r.stdout)["stats"]["model"]
    assert (ran["model"], ran["path"], ran["backend"]) == (
        "ollama:qwen2.5-coder:0.5b",
        str(blob),
        "llama.cpp",
    )
    # the pulled file itself ran: no other big file under the scratch folders
    big = [p for p in tmp_path.rglob("*") if p.is_file() and p.stat().st_size > 10 << 20]
    assert big == [blob] and os.path.samefile(blob, qwen05_path)
    serve = subprocess.Popen(
        [*cli, "serve", *model, "--socket", str(tmp_path / "s.sock")],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = iter(serve.stderr.readline, "")
        line = next((ln for ln in lines if ln.startswith("specedit serve: ")), "")
        assert line.startswith("specedit serve: ollama:qwen2.5-coder:0.5b on "), line
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=60)
