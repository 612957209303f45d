"""Time-stepping that reports its error (issue 24).

Each run reports its largest penetration and its energy-balance drift in an
``accuracy`` event row (at the end, and when a bound is first crossed); a
step too large for the scene is refused naming ``solver.dt`` and the
largest acceptable value. The orders (docs/MECHANICS.md §4): the
penetration shrinks as h (a contact is met at the middle of the step in
which it closes), the energy balance of springs drifts as h² between
impacts (the midpoint scheme), and as h where impacts meet forces (the
pre/post frames sit at mid-step).
"""

from __future__ import annotations

import copy
import csv
import itertools
import json
import math
from pathlib import Path

import pytest

from solver.cli import main
from solver.errors import InputError
from solver.scene import parse_scene
from solver.simulation import make_stepper
from solver.timestepping import STEP_FRACTION, largest_step

SCENES = Path(__file__).resolve().parents[1] / "resources" / "scenes"


def _scene(name: str, dt: float, t_end: float) -> dict:
    data = json.loads((SCENES / f"{name}.json").read_text())
    data = copy.deepcopy(data)
    data["solver"].update(method="time-stepping", dt=dt, t_end=t_end)
    return data


def _run(name: str, dt: float, t_end: float = 2.0):
    stepper = make_stepper(parse_scene(_scene(name, dt, t_end)))
    events = []
    while stepper.status == "running":
        events += stepper.step().events
    assert stepper.status == "finished"
    return stepper, events


@pytest.mark.parametrize("h", [1e-3, 5e-4, 2.5e-4])
def test_a_bead_between_stops_sinks_half_a_step_of_its_speed(h):
    """Closed form of the scheme: a bead at 1 m/s whose contacts close on the step grid
    (0.5 m of travel from x = 0) is met at mid-step, h/2 · 1 m/s deep; e = 1 then
    reverses it with the step's end back where the step began."""
    _stepper, events = _run("mass_between_stops", h)
    (end,) = [e for e in events if e.type == "accuracy" and e.t == 2.0]
    assert end.normal_impulse == pytest.approx(0.5 * h, rel=1e-9)  # the penetration, m
    assert end.body == "mass" and end.other in ("left", "right")
    assert abs(end.energy_change) < 1e-12  # no force: the balance holds to round-off
    assert "largest penetration" in end.message


def test_the_spring_energy_drift_shrinks_as_h_squared():
    drifts = [abs(_run("two_masses_elastic", h)[0].accuracy.drift) for h in (5e-4, 2.5e-4, 1.25e-4)]
    for coarse, fine in itertools.pairwise(drifts):
        assert 3.2 < coarse / fine < 5.0  # 4 for second order
    assert drifts[-1] > 0.0


def test_the_forced_bead_drift_and_penetration_shrink_as_h():
    runs = [_run("forced_mass_between_stops", h)[0].accuracy for h in (1e-3, 5e-4, 2.5e-4)]
    drifts = [abs(a.drift) for a in runs]
    for coarse, fine in itertools.pairwise(drifts):
        assert 1.6 < coarse / fine < 2.5  # 2 for first order
    depths = [a.penetration for a in runs]
    assert depths[0] > depths[1] > depths[2] > 0.0
    assert depths[0] / depths[2] > 2.5  # about 4 over a factor 4 in h


def test_a_crossed_bound_is_reported_when_it_happens():
    """dt = 10 ms on the forced bead: the drift passes 1 % of the energy scale mid-run."""
    _stepper, events = _run("forced_mass_between_stops", 0.01, t_end=5.0)
    rows = [e for e in events if e.type == "accuracy"]
    assert rows[-1].t == 5.0 and len(rows) >= 2
    assert rows[0].t < 5.0 and "past its bound" in rows[0].message


def test_the_largest_step_is_a_twentieth_of_the_shortest_period():
    # forcing at omega = 10 rad/s: period 0.628 s; two_masses_elastic: springs (Gershgorin bound)
    data = _scene("forced_mass_between_stops", 1e-4, 1.0)
    largest, why = largest_step(make_stepper(parse_scene(data)).system)
    assert largest == pytest.approx(STEP_FRACTION * 2 * math.pi / 10.0, rel=1e-12)
    assert "force on mass" in why


def test_a_step_too_large_for_the_scene_is_refused_naming_solver_dt(tmp_path, capsys):
    """The issue's dt = 1 s on the forced bead (5.2 mm deep, 3.7 % of the energy before)."""
    with pytest.raises(InputError, match=r"solver\.dt.*0\.0314159"):
        make_stepper(parse_scene(_scene("forced_mass_between_stops", 1.0, 10.0)))
    path = tmp_path / "big_dt.json"
    path.write_text(json.dumps(_scene("forced_mass_between_stops", 1.0, 10.0)))
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "`solver.dt`" in err and "largest acceptable value is 0.0314159 s" in err
    assert "Traceback" not in err


def test_events_csv_has_the_accuracy_row(tmp_path):
    path = tmp_path / "stops.json"
    path.write_text(json.dumps(_scene("mass_between_stops", 1e-3, 1.0)))
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 0
    with (tmp_path / "out" / "events.csv").open() as stream:
        rows = [row for row in csv.DictReader(stream) if row["type"] == "accuracy"]
    assert float(rows[-1]["t"]) == 1.0  # the end's row (after any at a crossed bound)
    assert float(rows[-1]["normal_impulse"]) == pytest.approx(5e-4, rel=1e-9)
