"""Where ``step()`` returns (its phase and wall-time bounds) does not change a run."""

from pathlib import Path

import numpy as np
import pytest

import solver.events as events_module
from solver.flight_phases import FlightPhase
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
    monkeypatch.setattr(FlightPhase, "fast_flight_phases", fast_flights)
    model = load_scene(SCENES / f"{name}.json")
    settings = {"t_end": min(model.solver.t_end, 1.5), "dt_out": 0.5}  # phases between samples
    model = model.model_copy(update={"solver": model.solver.model_copy(update=settings)})
    steps_whole, states_whole, events_whole = _run(model, monkeypatch, 3600.0)
    steps_cut, states_cut, events_cut = _run(model, monkeypatch, 0.0)
    assert steps_cut > steps_whole  # the slice did cut steps
    assert np.array_equal(states_cut, states_whole)
    assert events_cut == events_whole


def _chain_run(monkeypatch, slice_s, beads=12, t_end=1.2):
    """A forced spring chain (chain_forced's pattern): long closed-form phases between impacts."""
    monkeypatch.setattr(events_module, "STEP_WALL_SLICE_S", slice_s)
    from tests.scene_data import spring_chain

    stepper = make_stepper(spring_chain(beads, t_end=t_end, dt_out=0.4))
    frames, events, cut_steps = [], [], 0
    while stepper.status == "running":
        t_before = stepper.t
        out = stepper.step()
        if not out.frames and not out.events and stepper.t == t_before:
            cut_steps += 1  # a phase cut by the slice: nothing new but the work inside it
            assert stepper.reached > stepper.t
        frames += out.frames
        events += out.events
    states = np.array([np.r_[f.t, f.q, f.v] for f in frames])
    return cut_steps, states, [(e.t, e.type, e.body, e.other) for e in events]


def test_a_long_phase_is_cut_at_the_slice_and_resumed_bit_for_bit(monkeypatch):
    # at 6228a56 a phase ran to its end inside one step, however long (131 s for 202 beads)
    cut_whole, states_whole, events_whole = _chain_run(monkeypatch, 3600.0)
    cut, states_cut, events_cut = _chain_run(monkeypatch, 0.0)
    assert cut_whole == 0
    assert cut > 3  # the pieces of a long phase are steps of their own
    assert any(e[1] == "impact" for e in events_whole)
    assert np.array_equal(states_cut, states_whole)
    assert events_cut == events_whole


def test_the_watchdog_sees_the_work_inside_a_cut_phase(monkeypatch):
    """A phase cut over many steps keeps ``t``; the watchdog reads ``progress`` and waits."""
    from solver.simulation import Watchdog, progress
    from tests.scene_data import spring_chain

    monkeypatch.setattr(events_module, "STEP_WALL_SLICE_S", 0.0)
    now = [0.0]
    watchdog = Watchdog(stall_seconds=2.0, clock=lambda: now[0])
    stepper = make_stepper(spring_chain(12, t_end=1.2, dt_out=0.4))
    stalled_t = longest = 0
    while stepper.status == "running":
        t_before = stepper.t
        stepper.step()
        stalled_t = stalled_t + 1 if stepper.t == t_before else 0
        longest = max(longest, stalled_t)
        now[0] += 1.0  # each step "takes" a second of wall time
        watchdog.check(progress(stepper))  # raises past 2 s without progress
    assert stepper.status == "finished"
    assert stepper.t == 1.2
    assert longest > 2  # t alone would have looked stalled past the watchdog's 2 s
