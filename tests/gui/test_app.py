"""The ``impactgui`` command: screenshot mode, headless mode, bad input."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from impactgui.app import has_display
from tests.gui.conftest import distinct_colours, scene_path

ROOT = Path(__file__).resolve().parents[2]


def _impactgui(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "impactgui", *args],
        cwd=cwd,
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _env(**changes: str | None) -> dict[str, str]:
    env = dict(os.environ)
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def test_screenshot_writes_a_non_blank_png_and_exits_0(tmp_path: Path) -> None:
    png = tmp_path / "shot.png"
    result = _impactgui(
        ["--run", "--screenshot", str(png), "--after", "1"],
        _env(QT_QPA_PLATFORM="offscreen"),
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert distinct_colours(png) > 20
    assert "Traceback" not in result.stderr


def test_a_bad_scene_path_is_named_and_exits_2(tmp_path: Path) -> None:
    result = _impactgui(
        [str(tmp_path / "missing.json")], _env(QT_QPA_PLATFORM="offscreen"), tmp_path
    )
    assert result.returncode == 2
    assert "missing.json" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_invalid_scene_lists_its_problems_and_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(scene_path("bouncing_ball").read_text().replace('"mass": 1.0', '"mass": -1'))
    result = _impactgui([str(bad)], _env(QT_QPA_PLATFORM="offscreen"), tmp_path)
    assert result.returncode == 2
    assert "bodies[0].mass" in result.stderr


def test_help_lists_the_options() -> None:
    result = _impactgui(["--help"], _env(), ROOT)
    assert result.returncode == 0
    for option in ("--run", "--screenshot", "--after", "SCENE.json"):
        assert option in result.stdout


def test_without_a_display_the_scene_runs_headless_to_csv_and_png(tmp_path: Path) -> None:
    env = _env(DISPLAY=None, WAYLAND_DISPLAY=None, QT_QPA_PLATFORM=None)
    result = _impactgui([str(scene_path("newton_cradle_3_staged"))], env, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "no display" in result.stderr
    out = tmp_path / "impactgui-output"
    for name in ("trajectory.csv", "contacts.csv", "events.csv"):
        assert (out / name).is_file(), name
    assert len((out / "trajectory.csv").read_text().splitlines()) > 10
    assert distinct_colours(out / "impactgui.png") > 20


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"DISPLAY": ":0"}, True),
        ({"WAYLAND_DISPLAY": "wayland-0"}, True),
        ({"QT_QPA_PLATFORM": "offscreen"}, True),
        ({}, False),
    ],
)
def test_has_display(monkeypatch, env: dict[str, str], expected: bool) -> None:
    for key in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert has_display() is expected


def test_a_cold_kernel_cache_is_compiled_at_start_with_progress(qtbot, monkeypatch, tmp_path):
    """Issue 24: the first start compiles the solver's kernels before the window, saying so."""
    import io

    from impactgui import app as app_module
    from solver import kernels

    called: list[str] = []
    monkeypatch.setattr(
        kernels,
        "_WARM_UPS",
        {name: (lambda n=name: called.append(n)) for name in kernels.KERNEL_NAMES},
    )
    monkeypatch.setattr(kernels, "stamp_paths", lambda: [tmp_path / "kernels.stamp"])
    stream = io.StringIO()
    app_module._compile_kernels_if_cold(stream)
    assert called == list(kernels.KERNEL_NAMES)
    assert stream.getvalue().splitlines()[-1] == (
        f"compiling the solver's kernels, once: done ({len(kernels.KERNEL_NAMES)})"
    )
    assert not kernels.is_cold()  # the stamp: the next start compiles nothing
    app_module._compile_kernels_if_cold(stream)
    assert called == list(kernels.KERNEL_NAMES)
