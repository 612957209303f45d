"""summary.csv's period columns against paper 003's closed-form periods; the algorithm's laws."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from solver import cli
from solver.impact_period import (
    MAX_FORCING_PERIODS,
    NO_PERIOD,
    ImpactPeriod,
    forcing_period,
    impact_period,
)
from solver.scene import load_scene
from solver.sweep import sweep

ROOT = Path(__file__).resolve().parents[1]
SCENES = ROOT / "resources" / "scenes"


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as stream:
        return list(csv.DictReader(stream))


def test_mass_spring_stop_period_is_paper_003s_T_of_V_through_the_command(tmp_path):
    """Paper 003 (44): T(u) = (2/λ)(π − arctan(u/(λ x₁))), x₁ = 0.05 m past the rest point."""
    status = cli.main(
        ["sweep", str(SCENES / "mass_spring_stop_offset.json"),
         "--vary", "bodies[0].vx=-0.5,-1,-2,-3", "--transient", "0.5", "--out", str(tmp_path)],
        stderr=io.StringIO(),
    )  # fmt: skip
    assert status == 0
    rows = read_rows(tmp_path / "summary.csv")
    assert list(rows[0])[-3:] == ["period", "impacts_per_period", "period_s"]
    for row in rows:
        u = -float(row["bodies[0].vx"])
        expected = (2 / 10) * (math.pi - math.atan(u / (10 * 0.05)))
        assert float(row["period_s"]) == pytest.approx(expected, abs=1e-9)
        assert row["impacts_per_period"] == "1"
        assert row["period"] == "0"  # no forcing: no forcing periods


def test_mass_between_two_stops_has_two_impacts_per_period_2_gap_over_v():
    """Paper 003 (40): T = 2(x₁ − x₂)/V₁ with a free travel of 1 m."""
    result = sweep(
        load_scene(SCENES / "mass_between_stops.json"),
        {"bodies[0].vx": [0.5, 1.0, 4.0]},
        transient=1.0,
    )
    for point in result.points:
        V = point.values[0]
        assert point.period.impacts_per_period == 2
        assert point.period.seconds == pytest.approx(2 * 1.0 / V, abs=1e-9)


def test_a_ball_coming_to_rest_has_no_period():
    result = sweep(load_scene(SCENES / "bouncing_ball.json"), {"contact.restitution": [0.5]})
    assert result.points[0].period == NO_PERIOD


def test_forced_mass_between_stops_reports_whole_forcing_periods():
    scene = load_scene(SCENES / "forced_mass_between_stops.json")
    result = sweep(scene, {"forces[0].omega": [8.0]}, transient=20.0)
    found = result.points[0].period
    # at ω = 8 rad/s the orbit settles within 20 s: its impacts repeat after K forcing periods
    assert 1 <= found.period <= MAX_FORCING_PERIODS
    assert found.seconds == pytest.approx(found.period * 2 * math.pi / 8.0, rel=1e-6)
    assert found.impacts_per_period >= 2  # it hits both stops


@given(
    T=st.floats(0.01, 10.0),
    p=st.integers(1, 6),
    repeats=st.integers(2, 5),
    offset=st.floats(0.0, 100.0),
)
def test_a_repeating_sequence_is_found_with_its_smallest_pattern(T, p, repeats, offset):
    base = sorted({round(k / (p + 1) * T, 9) for k in range(p)})
    p = len(base)
    times = [offset + n * T + b for n in range(repeats) for b in base]
    contacts = [("m", f"wall{k}") for _ in range(repeats) for k in range(p)]
    speeds = [1.0 + k for _ in range(repeats) for k in range(p)]
    found = impact_period(times, contacts, speeds, None)
    assert found.impacts_per_period == p
    assert found.seconds == pytest.approx(T, rel=1e-9)
    # with forcing period T / 3 the same motion is 3 forcing periods long
    assert impact_period(times, contacts, speeds, T / 3).period == 3


def test_speeds_that_keep_shrinking_are_not_periodic():
    times = [0.1 * k for k in range(20)]
    contacts = [("ball", "floor")] * 20
    speeds = [0.9**k for k in range(20)]
    assert impact_period(times, contacts, speeds, None) == NO_PERIOD


def test_a_period_that_is_no_whole_number_of_forcing_periods_is_0():
    times = [0.7 * k for k in range(10)]  # 0.7 s is no rational multiple of 0.7·√2 s
    found = impact_period(times, [("a", "b")] * 10, [1.0] * 10, 0.7 * math.sqrt(2))
    assert found == ImpactPeriod(0, 0, None)


def test_forcing_period_reads_the_first_harmonic_force():
    assert forcing_period({"forces": [{"type": "harmonic", "omega": 4.0}]}) == pytest.approx(
        math.pi / 2
    )
    assert forcing_period({"forces": []}) is None
    assert forcing_period({"forces": [{"type": "harmonic", "omega": 0.0}]}) is None
