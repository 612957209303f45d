"""``python -m solver sweep`` reports progress on stderr, in a pipe too (issue 25)."""

from __future__ import annotations

import io
import re
from pathlib import Path

from solver import cli
from solver.sweep_command import PIPE_MIN_POINTS, PipeProgress

BALL = Path(__file__).resolve().parent.parent / "resources" / "scenes" / "bouncing_ball.json"


def test_a_long_sweep_in_a_pipe_prints_plain_progress_lines(tmp_path: Path) -> None:
    # issue 25: `solver sweep` printed no progress (its stderr was not a terminal)
    stream = io.StringIO()
    values = ",".join(f"{0.3 + 0.02 * k:.2f}" for k in range(12))
    args = ["sweep", str(BALL), "--vary", f"contact.restitution={values}", "--t-end", "0.5"]
    status = cli.main([*args, "--workers", "2", "--out", str(tmp_path / "out")], stderr=stream)
    assert status == 0
    lines = stream.getvalue().splitlines()
    assert lines[0] == "0 / 12 points" and lines[-1] == "12 / 12 points"
    counts = [int(re.fullmatch(r"(\d+) / 12 points", line)[1]) for line in lines]
    assert counts == sorted(set(counts)) and len(counts) <= 12


def test_pipe_progress_prints_each_tenth_once() -> None:
    stream = io.StringIO()
    progress = PipeProgress(stream, 29)  # a tenth: 3 points
    progress.update(0, force=True)
    for done in range(1, 30):
        progress.update(done)
    progress.close(29)
    assert stream.getvalue().splitlines() == [f"{k} / 29 points" for k in range(0, 30, 3)] + [
        "29 / 29 points"
    ]


def test_small_sweeps_in_a_pipe_stay_silent(tmp_path: Path) -> None:
    assert PIPE_MIN_POINTS > 2
    stream = io.StringIO()
    args = ["sweep", str(BALL), "--vary", "contact.restitution=0.3,0.6", "--t-end", "0.5"]
    assert cli.main([*args, "--out", str(tmp_path / "out")], stderr=stream) == 0
    assert stream.getvalue() == ""
