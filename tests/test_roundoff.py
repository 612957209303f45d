"""Round-off written and shown as 0, never -0 (issue 10 bug 7).

A lossless impact changes the energy by exactly 0 J, a ball a sequential
impact stops moves at exactly 0 m/s, a run without losses dissipates exactly
0 J: the files must say 0.0, not 6.168e-17, 5.551e-16, -6.2e-17 or -0.0.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from solver import cli
from solver.roundoff import ROUNDOFF_RTOL, RoundoffScales, clean, clean_array
from solver.scene import load_scene, parse_scene
from solver.system import System

SCENES = Path(__file__).resolve().parent.parent / "resources" / "scenes"


def test_round_off_is_zero_and_zero_has_no_sign():
    assert repr(clean(-0.0, 1.0)) == "0.0"
    assert repr(clean(-0.0, 0.0)) == "0.0"
    assert clean(6.168e-17, 1.0) == 0.0 and clean(-6.2e-17, 1.0) == 0.0
    assert clean(5.551e-16, 2.0) == 0.0
    assert clean(1e-9, 1.0) == 1e-9 and clean(-3e-13, 1.0) == -3e-13
    cleaned = clean_array([-0.0, 1e-20, 0.5], [0.0, 1.0, 1.0])
    assert [repr(float(x)) for x in cleaned] == ["0.0", "0.0", "0.5"]


@given(st.floats(allow_nan=False, allow_infinity=False), st.floats(min_value=0.0, max_value=1e6))
def test_clean_keeps_every_value_above_the_tolerance_exactly(value, scale):
    cleaned = clean(value, scale)
    if abs(value) > ROUNDOFF_RTOL * scale:
        assert cleaned == value and math.copysign(1.0, cleaned) == math.copysign(1.0, value)
    else:
        assert cleaned == 0.0 and math.copysign(1.0, cleaned) == 1.0


def test_scales_are_read_off_the_scene():
    scene = parse_scene(
        {
            "format": "impactgui-scene",
            "version": 2,
            "gravity": [0.0, -9.81],
            "boundaries": [{"id": "floor", "type": "segment", "a": [-3.0, 0.0], "b": [4.0, 0.0]}],
            "bodies": [
                {"id": "w", "type": "wheel", "mass": 2.0, "inertia": 0.01, "radius": 0.1,
                 "position": [0.0, 1.0], "velocity": [3.0, 4.0]},
                {"id": "b", "type": "bead", "rail_y": 2.0, "mass": 1.0, "radius": 0.05, "x": 0.0},
            ],
            "solver": {"t_end": 1.0},
        }
    )  # fmt: skip
    scales = RoundoffScales.of(System(scene))
    assert scales.length == 4.0  # the wall's far end
    assert scales.mass == 3.0
    assert scales.speed == pytest.approx(math.sqrt(2 * 9.81 * 4.0))  # falling 4 m beats 5 m/s
    assert scales.smallest_radius == 0.05
    assert scales.energy == pytest.approx(3.0 * 2 * 9.81 * 4.0)
    assert scales.impulse == pytest.approx(3.0 * math.sqrt(2 * 9.81 * 4.0))


def _cells(path: Path) -> set[str]:
    with path.open(newline="") as stream:
        return {cell for row in csv.reader(stream) for cell in row}


def _column(path: Path, name: str) -> list[str]:
    with path.open(newline="") as stream:
        return [row[name] for row in csv.DictReader(stream)]


def test_a_lossless_impact_is_written_with_exactly_zero_loss(tmp_path):
    # paper 002, e = 1: the impact conserves energy exactly; nothing dissipates
    assert cli.main(["run", str(SCENES / "two_masses_elastic.json"), "--out", str(tmp_path)]) == 0
    changes = _column(tmp_path / "events.csv", "energy_change")
    assert changes and set(changes) == {"0.0"}
    assert set(_column(tmp_path / "trajectory.csv", "E_dissipated")) == {"0.0"}
    for name in ("trajectory.csv", "contacts.csv", "events.csv"):
        assert "-0.0" not in _cells(tmp_path / name), name


def test_the_ball_a_sequential_impact_stops_is_written_at_exactly_rest(tmp_path):
    # paper 000 ex. 4, sequential law: balls 1 and 2 of the cradle end at exactly 0 m/s
    scene = SCENES / "newton_cradle_3_sequential.json"
    assert cli.main(["run", str(scene), "--out", str(tmp_path)]) == 0
    ids = [body.id for body in load_scene(scene).bodies]
    last = {name: values[-1] for name in (f"{i}.vx" for i in ids[:2])
            for values in [_column(tmp_path / "trajectory.csv", name)]}  # fmt: skip
    assert set(last.values()) == {"0.0"}
    assert "-0.0" not in _cells(tmp_path / "trajectory.csv")


def test_scales_past_the_float_range_clean_nothing_but_negative_zero():
    # fuzz regression: a forcing of 1e300 N made speed**2 raise OverflowError in the CSV writer
    scales = RoundoffScales(length=1.0, mass=1e10, speed=1e200, smallest_radius=0.1)
    assert scales.energy == math.inf
    assert clean(5.0, scales.energy) == 5.0
    assert clean(-0.0, scales.energy) == 0.0 and math.copysign(1.0, clean(-0.0, math.inf)) == 1.0
    cleaned = clean_array([3.0, -0.0, math.inf], [scales.energy, scales.energy, scales.energy])
    assert cleaned.tolist() == [3.0, 0.0, math.inf]
