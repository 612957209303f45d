"""``python -m solver plot``: runs' CSV files drawn into one figure, bad input exit 2."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from solver import cli

ROOT = Path(__file__).resolve().parents[1]
SCENES = ROOT / "resources" / "scenes"


def main(*args: str) -> tuple[int, str]:
    stderr = io.StringIO()
    status = cli.main(list(args), stderr=stderr)
    return status, stderr.getvalue()


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    folders = []
    for name in ("wheel_curb_e0", "wheel_curb_e03"):
        folder = tmp_path_factory.mktemp(name)
        status, text = main("run", str(SCENES / f"{name}.json"), "--out", str(folder),
                            "--t-end", "0.3")  # fmt: skip
        assert status == 0, text
        shutil.copy(SCENES / f"{name}.json", folder / "scene.json")
        folders.append(folder)
    return folders


def test_two_runs_overlaid_with_their_scene_titles(runs, tmp_path):
    out = tmp_path / "fig.svg"
    status, text = main("plot", *map(str, runs), "--what", "x,vy,omega,lambda,energy",
                        "--out", str(out))  # fmt: skip
    assert status == 0, text
    svg = out.read_text(encoding="utf-8")
    assert "Wheel against a curb (paper 004, e = 0)" in svg
    assert "Wheel against a curb (paper 004, e = 0.3)" in svg
    for label in ("x, m", "vy, m/s", "omega, rad/s", "lambda, N", "energy, J"):
        assert label in svg


@pytest.mark.parametrize("suffix", ["png", "pdf"])
def test_png_and_pdf(runs, tmp_path, suffix):
    out = tmp_path / f"fig.{suffix}"
    status, text = main("plot", str(runs[0]), "--what", "phi", "--body", "wheel", "--out", str(out))
    assert status == 0, text
    magic = {"png": b"\x89PNG", "pdf": b"%PDF"}[suffix]
    assert out.read_bytes().startswith(magic)


def test_a_folder_without_a_scene_file_is_labelled_by_its_name(runs, tmp_path):
    bare = tmp_path / "my_run"
    shutil.copytree(runs[0], bare)
    (bare / "scene.json").unlink()
    out = tmp_path / "fig.svg"
    assert main("plot", str(bare), "--what", "x", "--out", str(out))[0] == 0
    assert "my_run" in out.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["NOPE", "--what", "x"], "RUN_DIR:"),
        (["RUN", "--what", "speed"], "--what:"),
        (["RUN", "--what", ","], "--what:"),
        (["RUN", "--what", "x", "--body", "ghost"], "--body:"),
        (["RUN", "--what", "x", "--out", "fig.gif"], "--out:"),
    ],
)
def test_bad_input_exits_2_naming_the_option(runs, tmp_path, args, named):
    args = [str(runs[0]) if a == "RUN" else str(tmp_path / "none") if a == "NOPE" else a
            for a in args]  # fmt: skip
    if "--out" not in args:
        args += ["--out", str(tmp_path / "fig.png")]
    else:
        args[args.index("--out") + 1] = str(tmp_path / args[args.index("--out") + 1])
    status, text = main("plot", *args)
    assert status == 2
    assert text.startswith(named), text
    assert "Traceback" not in text
