"""The road from soft to rigid: a log-scale sweep of a stop's stiffness (solver.sweep)."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np
import pytest

from solver import cli
from solver.sweep import Axis, SweepError

ROOT = Path(__file__).resolve().parents[1]
STOP = ROOT / "resources" / "scenes" / "elastic_stop.json"


def test_a_log_range_is_evenly_spaced_in_log_with_both_ends():
    axis = Axis.parse("boundaries[0].compliance.stiffness=1e3:1e9:13:log")
    values = np.array(axis.values)
    assert len(values) == 13 and values[0] == 1e3 and values[-1] == pytest.approx(1e9, rel=1e-15)
    np.testing.assert_allclose(np.diff(np.log10(values)), 0.5, rtol=1e-12)
    assert Axis.parse("forces[0].omega=1:3:3:lin").values == (1.0, 2.0, 3.0)


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("k=0:1e9:3:log", "START and STOP > 0"),
        ("k=-1:1:3:log", "START and STOP > 0"),
        ("k=1:10:0:log", "COUNT must be a whole number"),
        ("k=1:10:3:cubic", "START:STOP:COUNT"),
    ],
)
def test_a_bad_log_range_is_refused_naming_the_path(spec, words):
    with pytest.raises(SweepError, match=words):
        Axis.parse(spec)


def test_a_stiffness_sweep_reports_contact_time_peak_force_and_impulse(tmp_path):
    stream = io.StringIO()
    status = cli.main(
        [
            "sweep",
            str(STOP),
            "--vary",
            "boundaries[0].compliance.stiffness=1e3:1e9:4:log",
            "--out",
            str(tmp_path),
            "--workers",
            "1",
        ],
        stderr=stream,
    )
    assert status == 0, stream.getvalue()
    with (tmp_path / "summary.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    header = list(rows[0])
    assert header[-6:] == [
        "period",
        "impacts_per_period",
        "period_s",
        "contact_time",
        "peak_force",
        "impulse",
    ]
    m, v = 2.0, 1.5  # the preset's mass and speed
    for row in rows:
        k = float(row["boundaries[0].compliance.stiffness"])
        assert float(row["contact_time"]) == pytest.approx(math.pi * math.sqrt(m / k), abs=1e-9)
        # the half sine's height, paper 003, to the resolution of the contact's steps
        assert float(row["peak_force"]) == pytest.approx(v * math.sqrt(k * m), rel=1e-4)
        # never above it but by the round-off of the overlap, δ = x_w − x − r at x_w = 1 m
        overlap_roundoff = 4 * math.ulp(1.0)  # m
        assert float(row["peak_force"]) <= v * math.sqrt(k * m) * (1 + 1e-12) + k * overlap_roundoff
        # the rigid impulse (1 + e) m V with e = 1, for every stiffness
        assert float(row["impulse"]) == pytest.approx(2 * m * v, rel=1e-11)
