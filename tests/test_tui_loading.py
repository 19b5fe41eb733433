"""The terminal app from its first frame: the model loads in a worker while keys answer,
the load shows in the status bar, an instruction given meanwhile waits for it; settings
persist (privately) in the config file; history, region, marker and toast details."""

from __future__ import annotations

import asyncio
import json
import stat
import threading
from pathlib import Path

import pytest
from tui_helpers import SIZE, STATS, app_for, notes, send_keys, toy_loaded, wait_for

from specedit.app.code.syntax import enclosing_definition
from specedit.app.options import LoadConfig
from specedit.app.runtime.loaded_model import load_model
from specedit.app.tui.config import (
    TuiSettings,
    config_path,
    history_path,
    load_history,
    load_settings,
    save_settings,
)
from specedit.app.tui.widgets.status import StatusBar
from specedit.engine.backend import ModelError


@pytest.fixture
def workdir(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("SPECEDIT_MODEL", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "stats.py").write_text(STATS)
    (tmp_path / "toy.gguf").write_bytes(b"")  # a model path outside the catalog
    return tmp_path


class GatedLoader:
    """A loader that reports its stages, then waits until the test lets it finish."""

    def __init__(self, loaded=None, error: Exception | None = None) -> None:
        self.gate = threading.Event()
        self.loaded = loaded or toy_loaded(name="toy.gguf")
        self.error = error
        self.configs = []

    def __call__(self, cfg, on_stage):
        self.configs.append(cfg)
        on_stage("weights", "llama.cpp")
        on_stage("exactness", "llama.cpp on CPU")
        assert self.gate.wait(60)
        if self.error is not None:
            raise self.error
        return self.loaded


def status_text(screen) -> str:
    bar = screen.query_one(StatusBar)
    return " | ".join(bar.text(i) for i in ("st-state", "st-figures", "st-model"))


def test_keys_answer_during_the_load_and_enter_waits_for_the_model(workdir):
    loader = GatedLoader()

    async def run() -> None:
        app = app_for(load_on_start=True, loader=loader, settings=TuiSettings(model="toy.gguf"))
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = app.screen
            await wait_for(pilot, lambda: "batched logits" in status_text(screen), timeout=20)
            text = status_text(screen)
            assert text.startswith("loading | checking batched logits") and " s" in text
            assert "toy.gguf · llama.cpp on CPU" in text  # the model and where it loads
            # keys typed now land in the instruction line at once, not queued for later
            await send_keys(pilot, "R", "e", "n", "a", "m", "e")
            assert screen.instruction.value == "Rename" and screen.editor.text == STATS
            screen.instruction.value = "Rename result to acc"
            await pilot.press("enter")
            assert screen.state.queued == "Rename result to acc" and screen.mode == "edit"
            assert "Queued" in notes(app) and "1 instruction queued" in status_text(screen)
            await pilot.press("escape")  # Esc drops it
            assert screen.state.queued is None and "dropped" in notes(app)
            await pilot.press("enter")  # queued again
            assert screen.state.queued == "Rename result to acc"
            assert app.loaded is None and app.model_state == "loading"
            loader.gate.set()
            await wait_for(pilot, lambda: app.loaded is not None, timeout=20)
            # the queued instruction ran on the model as soon as it was ready
            await wait_for(pilot, lambda: screen.mode not in ("edit", "generating"), timeout=60)
            assert (
                screen.state.queued is None
                and screen.state.last_instruction == "Rename result to acc"
            )
            assert "Instruction: Rename result to acc" in loader.loaded.target.text()
            assert "toy.gguf · toy on CPU" in status_text(screen)

    asyncio.run(run())


def test_a_failed_load_drops_the_queued_instruction(workdir):
    loader = GatedLoader(error=ModelError("toy.gguf is not a GGUF file"))

    async def run() -> None:
        app = app_for(load_on_start=True, loader=loader, settings=TuiSettings(model="toy.gguf"))
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = app.screen
            await wait_for(pilot, lambda: app.model_state == "loading", timeout=20)
            screen.instruction.value = "Rename result to acc"
            await pilot.press("enter")
            assert screen.state.queued is not None
            loader.gate.set()
            await wait_for(pilot, lambda: app.model_state == "none", timeout=20)
            assert screen.state.queued is None and "not run" in notes(app)
            assert "not a GGUF file" in notes(app) and screen.mode == "edit"
            assert "no model (toy.gguf)" in status_text(screen)

    asyncio.run(run())


def test_config_file_env_and_flags(workdir, monkeypatch):
    path = config_path()
    assert path == workdir / "config" / "specedit" / "config.toml"
    assert load_settings() == (TuiSettings(), [])  # no file: the defaults, no complaint
    chosen = TuiSettings(
        model="qwen2.5-coder-0.5b",
        draft_model="smollm2-135m",
        k=6,
        gpu_layers="all",
        backend="llama.cpp",
        theme="nord",
        exact=True,
    )
    assert save_settings(chosen) == path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # the user's alone
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert 'model = "qwen2.5-coder-0.5b"' in path.read_text()
    assert "temperature" not in path.read_text()  # a default is not pinned
    assert load_settings() == (chosen, [])
    monkeypatch.setenv("SPECEDIT_MODEL", "qwen2.5-coder-1.5b")  # the environment beats it
    assert load_settings()[0].model == "qwen2.5-coder-1.5b"
    # the command line's flags beat both (its LoadConfig's None fields were not given)
    flags = LoadConfig(model="x.gguf", backend=None, gpu_layers=0, device=None, n_ctx=None)
    settings, _ = load_settings(flags)
    assert (settings.model, settings.backend, settings.gpu_layers) == ("x.gguf", "llama.cpp", 0)
    # bad values are skipped with a line each; a broken file is the defaults and a line
    path.write_text('[tui]\nk = -3\ngpu_layers = "many"\nmodel = "ok.gguf"\ncolour = 1\n')
    settings, problems = load_settings()
    assert settings.k is None and settings.gpu_layers == "auto"
    assert settings.model == "qwen2.5-coder-1.5b"  # still the environment's
    assert len(problems) == 3 and all(str(path) in p for p in problems)
    path.write_text("model = [unclosed")
    settings, problems = load_settings()
    assert settings == TuiSettings(model="qwen2.5-coder-1.5b") and len(problems) == 1


def test_settings_screen_saves_backend_gpu_layers_and_theme(workdir):
    loader = GatedLoader()
    loader.gate.set()

    async def run() -> None:
        app = app_for(loader=loader, save_config=True, settings=TuiSettings(model="toy.gguf"))
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await pilot.press("f2")
            dialog = app.screen
            assert str(dialog.query_one("#speculation-state").render()) == "on"
            dialog.query_one("#speculation").toggle()
            await pilot.pause()
            assert str(dialog.query_one("#speculation-state").render()) == "off"
            dialog.query_one("#gpu-layers").value = "lots"
            dialog.query_one("#apply").press()
            await pilot.pause()
            assert "GPU layers" in str(dialog.query_one("#settings-error").render())
            dialog.query_one("#gpu-layers").value = "12"
            dialog.query_one("#backend").value = "llama.cpp"
            dialog.query_one("#theme").value = "nord"
            dialog.query_one("#apply").press()
            await wait_for(pilot, lambda: app.loaded is not None, timeout=20)
            s = app.settings
            assert (s.gpu_layers, s.backend, s.theme, s.speculation) == (
                12,
                "llama.cpp",
                "nord",
                False,
            )
            assert app.theme == "nord"
            # the load settings changed: the model was loaded again with them
            assert loader.configs[-1].gpu_layers == 12
            assert loader.configs[-1].backend == "llama.cpp"
            text = config_path().read_text()
            assert "gpu_layers = 12" in text and 'theme = "nord"' in text
            assert stat.S_IMODE(config_path().stat().st_mode) == 0o600
            assert f"Settings saved to {config_path()}" in notes(app)

    asyncio.run(run())


def test_instruction_history_walks_with_up_and_down_and_is_kept(workdir):
    async def run() -> None:
        app = app_for(history=["add type hints", "rename x to y"])
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            line = app.screen.instruction
            line.value = "half typ"
            await pilot.press("up")
            assert line.value == "rename x to y"
            await pilot.press("up", "up")  # the oldest stays
            assert line.value == "add type hints"
            await pilot.press("down")
            assert line.value == "rename x to y"
            await pilot.press("down")  # past the newest: what was being typed
            assert line.value == "half typ"
            line.value = "Rename result to acc"
            await pilot.press("enter")  # no model: it is still remembered
            assert load_history()[-1] == "Rename result to acc"
            assert stat.S_IMODE(history_path().stat().st_mode) == 0o600
            await pilot.press("up")
            assert line.value == "Rename result to acc"

    asyncio.run(run())
    assert json.loads(history_path().read_text().splitlines()[-1]) == "Rename result to acc"


def test_f3_outside_any_definition_says_it_uses_the_file(workdir):
    assert enclosing_definition(STATS, "python", 5, 6) is None  # a blank line between defs

    async def run() -> None:
        app = app_for()
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = app.screen
            screen.editor.cursor_location = (5, 0)
            await pilot.press("f3")
            assert "No enclosing definition; using the file" in notes(app)
            assert screen._region(screen.editor.text) is None
            assert str(screen.query_one("#scope").render()) == "file (no def)"
            screen.editor.cursor_location = (8, 4)  # inside average()
            await pilot.pause(0.4)
            assert str(screen.query_one("#scope").render()) == "L8-9"

    asyncio.run(run())


def test_modified_marker_sparkline_and_toasts_above_the_status_bar(workdir):
    async def run() -> None:
        app = app_for()
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = app.screen
            title = screen.query_one("#title")
            assert "modified" not in str(title.render())
            assert not screen.query_one("#st-spark").display  # no ▁▁▁▁ without a rate
            screen.editor.focus()
            await pilot.press("end", "x")
            assert "● modified" in str(title.render())
            await pilot.press("ctrl+s")  # saves the editor's own edit
            assert "modified" not in str(title.render())
            assert (workdir / "stats.py").read_text().startswith("def total(prices):x\n")
            app.notify("a long note " * 8)
            await pilot.pause(0.3)
            toasts = list(app.screen.query("Toast"))
            assert toasts
            keep_clear = screen.query_one("#instruction-row").region.y
            for toast in toasts:
                assert toast.region.bottom <= keep_clear  # never on the status bar

    asyncio.run(run())


# ------------------------------------------------------------------ the real model


@pytest.mark.model
def test_real_load_keys_answer_and_a_queued_rewrite_runs(workdir, qwen05_path, monkeypatch):
    """The 0.5B loads in the worker (stages in the status bar); keys answer meanwhile, and
    the instruction given during the load runs when the model is ready."""
    stages: list[str] = []

    def loader(cfg, on_stage):
        def seen(stage, detail):
            stages.append(stage)
            on_stage(stage, detail)

        return load_model(cfg, on_stage=seen)

    settings = TuiSettings(model=str(qwen05_path), n_ctx=4096, exact=True)  # text asserted

    async def run() -> None:
        app = app_for(load_on_start=True, loader=loader, settings=settings)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = app.screen
            assert app.model_state == "loading" and "loading" in status_text(screen)
            await send_keys(pilot, "R", "e", "n", "a", "m", "e")
            assert screen.instruction.value == "Rename" and screen.editor.text == STATS
            screen.instruction.value = "Rename the function average to mean."
            await pilot.press("enter")
            assert app.model_state == "ready" or screen.state.queued is not None
            await wait_for(pilot, lambda: app.loaded is not None, timeout=600)
            await wait_for(pilot, lambda: screen.mode not in ("edit", "generating"), 600)
            assert screen.mode == "review", notes(app)
            assert "def mean(prices):" in "".join(h.new_text for h in screen.state.review.hunks)
            assert "weights" in stages and "calibration" in stages
            assert (workdir / "stats.py").read_text() == STATS

    asyncio.run(run())


def test_command_line_flags_layer_over_the_config_file(workdir, monkeypatch):
    """``specedit PATH --gpu-layers 3``: only the flags given override the saved settings."""
    from specedit.app.cli.flags import build_parser, load_config

    save_settings(TuiSettings(model="qwen2.5-coder-0.5b", backend="llama.cpp", k=6))
    args = build_parser().parse_args(["tui", "stats.py", "--gpu-layers", "3"])
    settings, problems = load_settings(load_config(args))
    assert problems == []
    assert (settings.model, settings.backend, settings.k) == ("qwen2.5-coder-0.5b", "llama.cpp", 6)
    assert settings.gpu_layers == 3
    monkeypatch.setenv("SPECEDIT_MODEL", "smollm2-135m")
    args = build_parser().parse_args(["tui", "stats.py", "--model", "qwen2.5-coder-1.5b"])
    assert load_settings(load_config(args))[0].model == "qwen2.5-coder-1.5b"
    args = build_parser().parse_args(["tui", "stats.py"])
    assert load_settings(load_config(args))[0].model == "smollm2-135m"
