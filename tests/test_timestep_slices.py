"""Where the time-stepper's ``step()`` returns (its wall-time slice) does not change a run.

At 4696c20 one ``step()`` made every time step up to the next output sample:
with ``dt_out = t_end`` the curb wheel's 10^7 steps took 19.6 s of CPU in one
call, and neither pause, stop nor the watchdog could answer meanwhile.
"""

import itertools
from pathlib import Path

import numpy as np
import pytest

import solver.event_tolerances as tolerances
import solver.timestepping as timestepping
from solver.scene import load_scene
from solver.simulation import Watchdog, make_stepper, progress

SCENES = Path(__file__).resolve().parents[1] / "resources" / "scenes"


def _model(name, t_end, dt_out):
    model = load_scene(SCENES / f"{name}.json")
    settings = {"t_end": t_end, "dt_out": dt_out, "method": "time-stepping"}
    return model.model_copy(update={"solver": model.solver.model_copy(update=settings)})


def _counted(model, tick):
    """A stepper whose clock advances ``tick`` s per time step made (and per try of one)."""
    stepper = make_stepper(model)
    now, made = [0.0], [0]
    steps = stepper._steps

    def counted(*args):
        result = steps(*args)
        made[0] += result[0]
        now[0] += tick * max(result[0], 1)
        return result

    stepper._steps = counted
    stepper.clock = lambda: now[0]
    return stepper, made


@pytest.mark.parametrize("compiled", [True, False])
def test_a_step_returns_once_its_slice_is_spent_not_at_the_sample(compiled, monkeypatch):
    # one time step is 1 ms of the stepper's (fake) clock, the slice 20 ms: a call makes
    # 20 steps, then at most one unit more (the steps to the next look at the clock, or
    # one call of the compiled loop), never the 2,000 steps to the sample
    monkeypatch.setattr(timestepping, "USE_KERNEL", compiled and timestepping.USE_KERNEL)
    monkeypatch.setattr(timestepping, "SLICE_CHECK_STEPS", 8, raising=False)
    monkeypatch.setattr(timestepping, "KERNEL_CHUNK", 16, raising=False)
    monkeypatch.setattr(tolerances, "STEP_WALL_SLICE_S", 0.02)
    tick = 1e-3
    stepper, made = _counted(_model("wheel_curb_e03", 0.2, 0.2), tick)  # h = 0.1 ms
    per_call, empty = [], 0
    while stepper.status == "running":
        before = made[0]
        out = stepper.step()
        per_call.append(made[0] - before)
        empty += not out.frames and not out.events
    assert stepper.status == "finished"
    assert stepper.t == 0.2
    assert sum(per_call) >= 2000  # h = 1e-4 s over 0.2 s, and the steps cut at impacts
    unit = 16  # the larger of SLICE_CHECK_STEPS and KERNEL_CHUNK, as set above
    assert max(per_call) <= round(0.02 / tick) + unit
    assert empty == len(per_call) - 1  # every call but the last returned before the sample
    assert len(per_call) > 2000 // (round(0.02 / tick) + unit)


def _run(model, monkeypatch, slice_s):
    monkeypatch.setattr(tolerances, "STEP_WALL_SLICE_S", slice_s)
    stepper = make_stepper(model)
    frames, events, calls = [], [], 0
    while stepper.status == "running":
        out = stepper.step()
        frames += out.frames
        events += out.events
        calls += 1
    states = np.array([np.r_[f.t, f.kind == "sample", f.q, f.v, f.energy.total] for f in frames])
    rows = [(e.t, e.type, e.body, e.other, e.normal_impulse, e.message) for e in events]
    return calls, states, rows


@pytest.mark.parametrize(
    ("name", "t_end", "dt_out", "compiled"),
    [
        ("wheel_curb_e03", 0.3, 0.1, True),  # the curb wheel: impacts, steps cut at instants
        ("wheel_curb_e03", 0.3, 0.1, False),  # the same on the numpy path
        ("chain_forced", 0.05, 0.025, True),  # a small forced spring chain
    ],
)
def test_a_run_cut_every_few_steps_is_the_uncut_run_bit_for_bit(
    name, t_end, dt_out, compiled, monkeypatch
):
    monkeypatch.setattr(timestepping, "USE_KERNEL", compiled and timestepping.USE_KERNEL)
    monkeypatch.setattr(timestepping, "SLICE_CHECK_STEPS", 3, raising=False)
    monkeypatch.setattr(timestepping, "KERNEL_CHUNK", 5, raising=False)
    model = _model(name, t_end, dt_out)
    calls_whole, states_whole, events_whole = _run(model, monkeypatch, 3600.0)
    calls_cut, states_cut, events_cut = _run(model, monkeypatch, 0.0)
    intervals = round(t_end / dt_out)
    assert calls_whole == intervals
    assert calls_cut > 50 * intervals  # cut every 3 to 5 steps of 1e-4 s
    assert np.array_equal(states_cut, states_whole)
    assert events_cut == events_whole
    if name == "wheel_curb_e03":
        assert any(e[1] == "impact" for e in events_whole)


def test_the_watchdog_sees_reached_advance_inside_a_long_time_step(monkeypatch):
    monkeypatch.setattr(timestepping, "SLICE_CHECK_STEPS", 8, raising=False)
    monkeypatch.setattr(timestepping, "KERNEL_CHUNK", 16, raising=False)
    monkeypatch.setattr(tolerances, "STEP_WALL_SLICE_S", 0.0)
    now = [0.0]
    watchdog = Watchdog(stall_seconds=2.0, clock=lambda: now[0])
    stepper = make_stepper(_model("wheel_curb_e03", 0.05, 0.05))  # one sample: 500 steps
    reached, calls = [], 0
    while stepper.status == "running":
        stepper.step()
        calls += 1
        now[0] += 1.0  # each step "takes" a second of wall time
        watchdog.check(progress(stepper))  # raises past 2 s without progress
        reached.append(stepper.reached)
    assert stepper.status == "finished"
    assert calls > 20  # the one interval took many calls, the watchdog saw each
    assert reached[-1] == 0.05
    assert all(b > a for a, b in itertools.pairwise(reached))
    assert 0.0 < reached[0] < 0.01
