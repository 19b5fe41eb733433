"""``specedit doctor``: run for real, its sections and the type of every JSON field.

The command runs in a subprocess with a scratch state dir and runtime dir, so the state
and server sections are this test's; the llama.cpp, torch and Triton sections are this
machine's (a CPU build here: the GPU build is checked by bench/gpu_check_llama.sh).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from specedit.app.cli.doctor import SECTIONS, plan
from specedit.app.options import LoadConfig
from specedit.models.catalog import CATALOG, DEFAULT_MODEL

TITLES = [
    "Versions",
    "llama.cpp build",
    "torch",
    "Triton",
    "What would run where",
    "Models",
    "Models in Ollama, LM Studio and the Hugging Face cache",
    "Server",
    "State",
]
NONE = type(None)
DEVICE = {"name": str, "description": str, "kind": str, "memory_total": int, "memory_free": int}
PLAN = {
    "model": str,
    "backend": str,
    "n_ctx": int,
    "device": str,
    "gpu_layers": str,
    "threads": int,
    "reason": str,
}
# every field's type; ``(T, None)`` may be null; "?key" may be absent
SCHEMA = {
    "versions": {
        "python": str,
        "executable": str,
        "platform": str,
        "cpus": int,
        "specedit": (str, NONE),
        "llama_cpp_python": (str, NONE),
    },
    "llama_cpp": {
        "installed": bool,
        "label": str,
        "version": str,
        "backends": [str],
        "gpu_offload": bool,
        "simd": [str],
        "openmp": bool,
        "features": {str: {str: str}},
        "devices": [DEVICE],
        "device_source": str,
        "gpu_backends": [str],
    },
    "torch": {
        "installed": bool,
        "version": str,
        "cuda": (str, NONE),
        "cuda_available": bool,
        "devices": [{"index": int, "name": str, "capability": str, "memory_total": int}],
        "threads": int,
    },
    "triton": {"installed": bool, "version": str, "kernel_runs": bool, "kernel": str},
    "runs_on": {name: {**PLAN, "?error": str} for name in ("rewrite", "serve", "tui")},
    "models": {
        "dir": str,
        "default": str,
        **{name: {"installed": bool, "size": (int, NONE), "sha256": str} for name in CATALOG},
    },
    "stores": {
        store: {
            "dirs": [str],
            "models": [
                {
                    "name": str,
                    "size": (int, NONE),
                    "quantization": (str, NONE),
                    "path": str,
                    "?problem": str,
                }
            ],
        }
        for store in ("ollama", "lmstudio", "hf")
    },
    "server": {
        "socket": str,
        "socket_exists": bool,
        "answering": bool,
        "discovery_file": str,
        "discovery_exists": bool,
        "pid": (int, NONE),
        "pid_alive": bool,
        "model": (str, NONE),
        "tcp": bool,
    },
    "state": {
        "state_dir": str,
        "state_size": int,
        "state_files": int,
        "state_parts": [{"name": str, "size": int}],
        "models_dir": str,
        "models_size": int,
    },
}


def check(value, schema, where="report"):
    """Assert ``value`` has the shape and field types of ``schema``."""
    if isinstance(schema, tuple):
        assert isinstance(value, schema), f"{where}: {value!r} is not {schema}"
    elif isinstance(schema, list):
        assert isinstance(value, list), f"{where}: {value!r} is not a list"
        for i, item in enumerate(value):
            check(item, schema[0], f"{where}[{i}]")
    elif isinstance(schema, dict) and set(schema) == {str}:  # a mapping of any keys
        assert isinstance(value, dict), where
        for k, v in value.items():
            check(k, str, f"{where} key")
            check(v, schema[str], f"{where}.{k}")
    elif isinstance(schema, dict):
        assert isinstance(value, dict), f"{where}: {value!r} is not an object"
        required = {k for k in schema if not k.startswith("?")}
        allowed = {k.lstrip("?") for k in schema}
        assert required <= set(value) <= allowed, f"{where}: keys {sorted(value)}"
        for k, v in value.items():
            check(v, schema.get(k, schema.get("?" + k)), f"{where}.{k}")
    else:
        assert type(value) is schema, f"{where}: {value!r} is not {schema.__name__}"


def _doctor(tmp_path, *args: str, **env: str) -> subprocess.CompletedProcess:
    full = {
        **{k: v for k, v in os.environ.items() if k != "SPECEDIT_MODEL"},
        "SPECEDIT_STATE_DIR": str(tmp_path / "state"),
        "XDG_RUNTIME_DIR": str(tmp_path / "run"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),  # no terminal-app config file
        **env,
    }
    r = subprocess.run(
        [sys.executable, "-m", "specedit.app.cli", "doctor", *args],
        env=full,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    return r


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    d = tmp_path_factory.mktemp("doctor")
    (d / "state" / "logs").mkdir(parents=True)
    (d / "state" / "logs" / "server.log").write_text("x" * 1500)
    (d / "state" / "model_checks.json").write_text("{}")
    (d / "run" / "specedit").mkdir(parents=True, mode=0o700)
    return d


@pytest.fixture(scope="module")
def report(scratch):
    return json.loads(_doctor(scratch, "--json").stdout)


def test_json_report_sections_and_field_types(report):
    assert list(report) == list(SECTIONS)
    schema = dict(SCHEMA)
    for lazy in ("torch", "triton"):  # a missing package is one field
        if not report[lazy]["installed"]:
            schema[lazy] = {"installed": bool}
    check(report, schema)


def test_report_says_what_runs_where_on_this_machine(report):
    llama = report["llama_cpp"]
    assert llama["installed"] and "CPU" in llama["backends"]
    assert (
        llama["label"] == f"llama-cpp-python {llama['version']} ({' + '.join(llama['backends'])})"
    )
    for name in ("rewrite", "serve", "tui"):
        p = report["runs_on"][name]
        assert p["model"] == DEFAULT_MODEL and p["threads"] >= 1
        # auto: torch with the Triton verifier where it runs on CUDA, else llama.cpp
        assert p["backend"] in ("llama.cpp", "torch")
        if not report["torch"].get("cuda_available"):
            assert p["backend"] == "llama.cpp"
        if p["backend"] == "llama.cpp" and not llama["gpu_offload"]:  # our machines and CI
            assert p["device"] == "CPU" and p["gpu_layers"].startswith("0")
            assert p["reason"].startswith("auto: CPU,") and "has no GPU backend" in p["reason"]


def test_report_reads_the_scratch_state_and_server(report, scratch):
    st = report["state"]
    assert st["state_dir"] == str(scratch / "state")
    assert st["state_files"] == 2 and st["state_size"] == 1502
    assert st["state_parts"] == [
        {"name": "logs", "size": 1500},
        {"name": "model_checks.json", "size": 2},
    ]
    srv = report["server"]
    assert srv["socket"] == str(scratch / "run" / "specedit" / "rpc.sock")
    assert not srv["socket_exists"] and not srv["answering"] and srv["pid"] is None


def test_kernel_line_says_where_triton_would_run(report):
    if not report["triton"]["installed"]:
        pytest.skip("triton not installed")
    t = report["triton"]
    if report["torch"].get("cuda_available"):
        assert t["kernel"].startswith("Triton ") or not t["kernel_runs"]
    elif os.environ.get("TRITON_INTERPRET") == "1":  # as conftest sets it without a GPU
        assert t["kernel_runs"] and t["kernel"].endswith("on the CPU (Triton interpreter)")
    else:
        assert not t["kernel_runs"]
        assert t["kernel"] == "the Triton kernel runs on CUDA devices, not on cpu"


def test_human_report_has_the_same_sections(scratch, report):
    text = _doctor(scratch).stdout
    lines = text.splitlines()
    assert lines[0] == "specedit doctor"
    titles = [ln for ln in lines[1:] if ln and not ln.startswith(" ")]
    assert titles == TITLES
    assert f"  label:                {report['llama_cpp']['label']}" in lines
    assert "    device:               CPU" in lines or report["llama_cpp"]["gpu_offload"]
    assert "    - name=logs, size=1.5 KiB" in lines


def test_discovery_file_is_reported_without_its_token(tmp_path):
    run = tmp_path / "run" / "specedit"
    run.mkdir(parents=True, mode=0o700)
    secret = "0123456789abcdef-secret-token"
    (run / "rpc.json").write_text(
        json.dumps(
            {
                "socket": str(run / "rpc.sock"),
                "pid": os.getpid(),
                "protocolVersion": 1,
                "model": "qwen2.5-coder-0.5b",
                "tcp": {"host": "127.0.0.1", "port": 1, "token": secret},
            }
        )
    )
    out = _doctor(tmp_path, "--json")
    assert secret not in out.stdout
    srv = json.loads(out.stdout)["server"]
    assert srv["discovery_exists"] and srv["pid"] == os.getpid() and srv["pid_alive"]
    assert srv["model"] == "qwen2.5-coder-0.5b" and srv["tcp"] is True
    assert not srv["answering"]  # a stale discovery file: nothing listens
    assert secret not in _doctor(tmp_path).stdout


def test_verify_hashes_and_reports_a_corrupt_model(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    with open(models / "smollm2-135m.gguf", "wb") as f:  # right size, wrong bytes (sparse)
        f.truncate(CATALOG["smollm2-135m"].size_bytes)
    env = {"SPECEDIT_MODELS_DIR": str(models)}
    plain = json.loads(_doctor(tmp_path, "--json", **env).stdout)["models"]
    assert plain["smollm2-135m"]["installed"] is True
    assert plain["smollm2-135m"]["sha256"] == "not checked yet (--verify hashes it)"
    assert plain["qwen2.5-coder-0.5b"] == {
        "installed": False,
        "size": None,
        "sha256": "not installed",
    }
    verified = json.loads(_doctor(tmp_path, "--json", "--verify", **env).stdout)["models"]
    assert verified["smollm2-135m"]["sha256"].startswith("mismatch: model file ")
    assert "is corrupt" in verified["smollm2-135m"]["sha256"]
    # --verify remembered the result where the first-use check does: read, not hashed again
    again = json.loads(_doctor(tmp_path, "--json", **env).stdout)["models"]
    assert again["smollm2-135m"]["sha256"] == "MISMATCH (checked)"


def test_models_report_the_check_made_at_first_use(tmp_path, own_model_checks):
    """A record of a passed first-use check (as model loads write it) reads as ok."""
    models = tmp_path / "models"
    models.mkdir()
    entry = CATALOG["smollm2-135m"]
    path = models / "smollm2-135m.gguf"
    with open(path, "wb") as f:
        f.truncate(entry.size_bytes)
    st = path.stat()
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "model_hashes.json").write_text(
        json.dumps(
            {
                str(path.resolve()): {
                    "stamp": [st.st_size, st.st_mtime_ns, st.st_ino],
                    "sha256": entry.sha256,
                }
            }
        )
    )
    env = {"SPECEDIT_MODELS_DIR": str(models)}
    models_report = json.loads(_doctor(tmp_path, "--json", **env).stdout)["models"]
    assert models_report["smollm2-135m"]["sha256"] == "ok (checked, file unchanged since)"
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # another version of the file
    models_report = json.loads(_doctor(tmp_path, "--json", **env).stdout)["models"]
    assert models_report["smollm2-135m"]["sha256"] == "not checked yet (--verify hashes it)"


def test_plan_with_the_load_config_defaults(qwen05_path):
    from specedit.models.llama_build import llama_build

    assert plan()["model"] == DEFAULT_MODEL  # LoadConfig() when called without one
    p = plan(LoadConfig(model=str(qwen05_path), backend="llama.cpp", threads=2))
    assert p["backend"] == "llama.cpp" and p["threads"] == 2 and "error" not in p
    if not llama_build().gpu_offload:
        assert (p["device"], p["gpu_layers"]) == ("CPU", "0/25")
        bad = plan(LoadConfig(model=str(qwen05_path), backend="llama.cpp", gpu_layers="all"))
        assert bad["error"].startswith("--gpu-layers all needs a GPU build of llama.cpp")
        assert "device" not in bad
    odd = plan(LoadConfig(model=str(qwen05_path), backend="llama.cpp", gpu_layers="lots"))
    assert odd["error"].startswith("gpu layers takes auto, all or a number")


def test_plan_of_a_missing_model_still_says_where_it_would_run(tmp_path):
    from specedit.models.llama_build import llama_build

    p = plan(LoadConfig(model=str(tmp_path / "nope.gguf"), backend="llama.cpp"))
    assert p["error"] == f"model file not found: {tmp_path / 'nope.gguf'}"
    if not llama_build().gpu_offload:
        assert (p["device"], p["gpu_layers"]) == ("CPU", "0")
    else:
        assert p["gpu_layers"] in ("all", "0")


def test_plan_on_the_torch_backend():
    p = plan(LoadConfig(backend="torch", threads=3))
    if "error" in p:
        assert p["error"] == "the torch backend needs the 'torch' extra"
    else:
        assert p["device"] == "cpu" or p["device"].startswith("CUDA0 ")
        assert (p["backend"], p["gpu_layers"], p["threads"]) == ("torch", "n/a", 3)


def test_plan_of_an_unknown_backend_is_an_error():
    assert plan(LoadConfig(backend="tpu"))["error"].startswith("unknown backend 'tpu'")


def test_terminal_app_plan_follows_its_config_file_and_environment(tmp_path):
    (tmp_path / "config" / "specedit").mkdir(parents=True)
    (tmp_path / "config" / "specedit" / "config.toml").write_text('[tui]\ngpu_layers = "0"\n')
    env = {"SPECEDIT_MODEL": "qwen2.5-coder-0.5b"}
    runs_on = json.loads(_doctor(tmp_path, "--json", **env).stdout)["runs_on"]
    assert {p["model"] for p in runs_on.values()} == {"qwen2.5-coder-0.5b"}  # every entry
    if runs_on["tui"]["backend"] == "llama.cpp":
        assert runs_on["tui"]["reason"] == "--gpu-layers 0: CPU"  # the app's config file
        assert runs_on["rewrite"]["reason"] != "--gpu-layers 0: CPU"  # not the command line's
