"""Where ``step()`` returns (its phase and wall-time bounds) does not change a run."""

from pathlib import Path

import numpy as np
import pytest

import solver.events as events_module
from solver.flight_phases import FlightPhaseMixin
from solver.scene import load_scene
from solver.simulation import make_stepper

SCENES = Path(__file__).resolve().parents[1] / "resources" / "scenes"


def _run(model, monkeypatch, slice_s):
    monkeypatch.setattr(events_module, "STEP_WALL_SLICE_S", slice_s)
    stepper = make_stepper(model)
    frames, events, steps = [], [], 0
    while stepper.status == "running":
        out = stepper.step()
        frames += out.frames
        events += out.events
        steps += 1
    states = np.array([np.r_[f.t, f.q, f.v] for f in frames])
    return steps, states, [(e.t, e.type) for e in events]


@pytest.mark.parametrize(
    ("name", "fast_flights"),
    [("bouncing_ball", False), ("wheel_curb_e03", False), ("newton_cradle_5_sequential", True)],
)
def test_a_step_cut_after_every_phase_gives_the_same_run_bit_for_bit(
    name, fast_flights, monkeypatch
):
    # the ball's and the wheel's flights on the fast path (solver/flight_phases.py) are one
    # phase per event, with no step to cut: the general path's, cut at horizons, are
    monkeypatch.setattr(FlightPhaseMixin, "fast_flight_phases", fast_flights)
    model = load_scene(SCENES / f"{name}.json")
    settings = {"t_end": min(model.solver.t_end, 1.5), "dt_out": 0.5}  # phases between samples
    model = model.model_copy(update={"solver": model.solver.model_copy(update=settings)})
    steps_whole, states_whole, events_whole = _run(model, monkeypatch, 3600.0)
    steps_cut, states_cut, events_cut = _run(model, monkeypatch, 0.0)
    assert steps_cut > steps_whole  # the slice did cut steps
    assert np.array_equal(states_cut, states_whole)
    assert events_cut == events_whole
