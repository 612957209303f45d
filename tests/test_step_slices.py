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


# ------------------------------------------------------------------ the axle cart's phase

AXLE_CART = SCENES / "axle_cart.json"


def _cart_model(t_end, dt_out):
    """The bundled axle cart (struck at 4 s) rolling on to ``t_end``: one long phase after 4 s.

    Fuzz scene 5842 of seed 2026 is this scene with t_end = 8301 s: one ``step()``
    integrated the whole phase after the impulse (33,000 DOP853 steps, > 30 s of CPU).
    """
    model = load_scene(AXLE_CART)
    settings = {"t_end": t_end, "dt_out": dt_out}
    return model.model_copy(update={"solver": model.solver.model_copy(update=settings)})


def _counted_cart(model, tick):
    """A cart stepper whose clock advances ``tick`` s per evaluation of the equations of motion."""
    stepper = make_stepper(model)
    now, calls = [0.0], [0]
    rhs = stepper._rhs

    def counted(t, y):
        calls[0] += 1
        now[0] += tick
        return rhs(t, y)

    stepper._rhs = counted
    stepper.clock = lambda: now[0]
    return stepper, calls


@pytest.mark.parametrize("dt_out", [0.01, 9.0])
def test_no_cart_step_runs_past_its_slice_by_more_than_one_integrator_step(dt_out):
    # one evaluation of the rolling's equations is 0.01 s of the stepper's (fake) clock: a
    # step may spend the slice and finish the DOP853 step it is in (12 evaluations, 11 more
    # per rejected try), never the phase (at 5f84c62 the step at 4 s took ~1,700 evaluations)
    tick = 0.01
    stepper, calls = _counted_cart(_cart_model(40.0, dt_out), tick)
    per_step = []
    while stepper.status == "running":
        before = calls[0]
        stepper.step()
        per_step.append(calls[0] - before)
    assert stepper.status == "finished"
    assert stepper.t == 40.0
    one_unit = 2 + 12 + 2 * 11  # the integrator's start, a step, two rejected tries
    assert max(per_step) * tick <= events_module.STEP_WALL_SLICE_S + one_unit * tick
    assert sum(per_step) > 30 * max(per_step)  # the phase's work is spread over many steps


def _cart_frames(model, monkeypatch, slice_s):
    import solver.event_tolerances as tolerances

    monkeypatch.setattr(tolerances, "STEP_WALL_SLICE_S", slice_s)
    stepper = make_stepper(model)
    frames, events, cut = [], [], 0
    while stepper.status == "running":
        t_before = stepper.t
        out = stepper.step()
        if not out.frames and not out.events:
            cut += 1
            assert stepper.t == t_before
            assert stepper.reached > stepper.t  # the watchdog's progress moves on
        frames += out.frames
        events += out.events
    states = np.array([np.r_[f.t, f.q, f.v, f.energy.kinetic] for f in frames])
    return cut, states, [(e.t, e.type, e.energy_change) for e in events]


def test_the_cart_phase_cut_at_every_integrator_step_is_the_uncut_motion_bit_for_bit(
    monkeypatch,
):
    from scipy.integrate import solve_ivp

    from solver.cart_motion import ATOL, RTOL

    model = _cart_model(30.0, 2.5)  # 10 DOP853 steps between two samples
    cut_whole, states_whole, events_whole = _cart_frames(model, monkeypatch, 3600.0)
    cut, states_cut, events_cut = _cart_frames(model, monkeypatch, 0.0)
    assert cut_whole == 0
    assert cut > 50
    assert [e[1] for e in events_whole] == ["impulse"]
    assert np.array_equal(states_cut, states_whole)
    assert events_cut == events_whole
    # the same bits as one solve_ivp call over the phase after the impulse (paper 001's
    # rolling from the post frame), read at the samples from its dense output
    stepper = make_stepper(model)
    post = np.flatnonzero(states_whole[:, 0] == 4.0)[-1]  # the pre and post frames at 4 s
    state = np.r_[states_whole[post, 1:6], states_whole[post, 9:11]]  # q and the wheel rates
    whole = solve_ivp(
        stepper._rhs, (4.0, 30.0), state, method="DOP853", rtol=RTOL, atol=ATOL, dense_output=True
    )
    later = states_whole[post + 1 :]
    assert len(later) == 11  # 5, 7.5, ..., 30 s
    for row in later[:-1]:
        assert np.array_equal(row[1:6], whole.sol(row[0])[:5])
    assert np.array_equal(later[-1, 1:6], whole.y[:5, -1])


def test_the_cli_answers_on_a_smaller_copy_of_fuzz_scene_5842(tmp_path):
    import json

    from solver import cli

    data = json.loads(AXLE_CART.read_text(encoding="utf-8"))
    data["solver"]["t_end"] = 30.0
    scene = tmp_path / "scene.json"
    scene.write_text(json.dumps(data), encoding="utf-8")
    assert cli.main(["run", str(scene), "--out", str(tmp_path / "out")]) == 0
    rows = (tmp_path / "out" / "trajectory.csv").read_text().splitlines()
    assert float(rows[-1].split(",")[0]) == 30.0


def test_the_watchdog_sees_the_work_inside_a_cut_cart_phase(monkeypatch):
    import solver.event_tolerances as tolerances
    from solver.simulation import Watchdog, progress

    monkeypatch.setattr(tolerances, "STEP_WALL_SLICE_S", 0.0)
    now = [0.0]
    watchdog = Watchdog(stall_seconds=2.0, clock=lambda: now[0])
    stepper = make_stepper(_cart_model(30.0, 9.0))  # 36 DOP853 steps between two samples
    stalled_t = longest = 0
    while stepper.status == "running":
        t_before = stepper.t
        stepper.step()
        stalled_t = stalled_t + 1 if stepper.t == t_before else 0
        longest = max(longest, stalled_t)
        now[0] += 1.0  # each step "takes" a second of wall time
        watchdog.check(progress(stepper))  # raises past 2 s without progress
    assert stepper.status == "finished"
    assert longest > 20  # t alone would have looked stalled for 20 s


def test_the_watchdog_takes_a_run_creeping_on_by_ulps_for_a_stall():
    # the stiff plastic pair (fuzz scene 2698) crept on by 1.6e-14 s a phase: t rose at
    # every check and a watchdog that asks only whether it rose never fired
    from solver.errors import SolverError
    from solver.simulation import Watchdog

    now = [0.0]
    watchdog = Watchdog(stall_seconds=5.0, clock=lambda: now[0])
    t = 0.586570969495
    with pytest.raises(SolverError, match=r"no progress in simulated time for 5 s.*crept from"):
        for _ in range(100):
            watchdog.check(t)
            t += 256 * 1.6e-14  # a step of 256 such phases
            now[0] += 1.0
    slow = Watchdog(stall_seconds=5.0, clock=lambda: now[0])
    for k in range(100):  # slow but real: 2e-9 of itself a second
        slow.check(1e3 * (1.0 + 2e-9) ** k)
        now[0] += 1.0


def _elastic_stop_run(monkeypatch, slice_s):
    """Fuzz scene 6788 made small: after its release the mass flies off the soft stop for good,
    one closed-form piece to t_end whose samples are built one by one (a compliant scene)."""
    monkeypatch.setattr(events_module, "STEP_WALL_SLICE_S", slice_s)
    model = load_scene(SCENES / "elastic_stop.json")
    settings = {"t_end": 3.0, "dt_out": 1e-3}
    model = model.model_copy(update={"solver": model.solver.model_copy(update=settings)})
    stepper = make_stepper(model)
    frames, events, per_step, reached = [], [], [], []
    while stepper.status == "running":
        out = stepper.step()
        per_step.append(len(out.frames))
        reached.append(stepper.reached)
        frames += out.frames
        events += out.events
    states = np.array([np.r_[f.t, f.q, f.v, f.energy.spring, f.energy.dissipated] for f in frames])
    return per_step, reached, states, [(e.t, e.type) for e in events]


def test_a_long_phases_samples_are_cut_at_the_slice_and_resumed_bit_for_bit(monkeypatch):
    # fuzz scene 6788 (elastic_stop, t_end 251 s, dt_out 1 ms): the flight after the release
    # built its 250,000 samples inside one step() (a hang to the watchdog); now they are cut
    from solver.output_frames import SAMPLE_CHUNK

    per_whole, _, states_whole, events_whole = _elastic_stop_run(monkeypatch, 3600.0)
    per_cut, reached, states_cut, events_cut = _elastic_stop_run(monkeypatch, 0.0)
    assert max(per_whole) > 2000  # the flight's samples in one step, uncut
    assert max(per_cut) <= SAMPLE_CHUNK + 1
    assert len(states_whole) == 3001
    assert [e[1] for e in events_whole] == ["touch", "release"]
    assert np.array_equal(states_cut, states_whole)
    assert events_cut == events_whole
    assert max(reached) > 2.9  # the watchdog sees the samples' time move inside the phase


def _flight_run(model, monkeypatch, chunk):
    import solver.output_frames as output_frames

    monkeypatch.setattr(output_frames, "VECTOR_CHUNK", chunk)
    stepper = make_stepper(model)
    frames, events, sizes, reached = [], [], [], []
    while stepper.status == "running":
        out = stepper.step()
        frames += out.frames
        events += out.events
        sizes.append(len(out.frames))
        reached.append(stepper.reached)
    rows = np.array([np.r_[f.t, f.q, f.v, f.energy.kinetic, f.energy.potential] for f in frames])
    return rows, [(e.t, e.type, e.body, e.other) for e in events], sizes, reached


def test_a_long_free_flight_gives_its_samples_a_block_a_step_bit_for_bit(monkeypatch):
    """The wheel rolls off the curb's top and flies free to t_end: one phase of 95,920
    samples at 1 ms, whose frames one step used to build at once (0.6 s of CPU; the window's
    worker kept the interpreter lock all that time). Now a step builds a block of them."""
    model = load_scene(SCENES / "wheel_curb_e03.json")
    model = model.model_copy(
        update={"solver": model.solver.model_copy(update={"t_end": 30.0, "dt_out": 0.001})}
    )
    whole, events_whole, sizes_whole, _ = _flight_run(model, monkeypatch, 10**9)
    cut, events_cut, sizes_cut, reached = _flight_run(model, monkeypatch, 1000)
    assert max(sizes_whole) > 25_000  # the flight's samples in one step
    assert max(sizes_cut) <= 1000 + 2  # a block (and the flight's last frame at t_end)
    assert np.array_equal(cut, whole)  # the same frames, bit for bit
    assert events_cut == events_whole
    assert np.all(np.diff(reached) >= 0.0)  # reached moves on
    # the free flight itself, in the test: x = x0 + vx τ, y = y0 + vy τ - g τ²/2
    t, x, y = cut[:, 0], cut[:, 1], cut[:, 2]
    free = t > events_whole[-1][0] + 1e-9
    t0, x0, y0 = t[free][0], x[free][0], y[free][0]
    vx, vy = cut[free][0, 1 + 3], cut[free][0, 2 + 3]
    tau = t[free] - t0
    g = 9.81
    np.testing.assert_allclose(x[free], x0 + vx * tau, rtol=0, atol=1e-9)
    np.testing.assert_allclose(y[free], y0 + vy * tau - 0.5 * g * tau**2, rtol=0, atol=1e-8)
