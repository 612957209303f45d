"""The fast path of phases of beads between stops (solver/stop_phases.py, solver/stop_closing.py).

A bead on a rail, on a spring, damped and harmonically forced, between two
stops across the rail (sometimes a second bead): the phases qualify by
their structure. The fast path must give the general path's run — the same
events in the same order, times and velocities to rounding, the same
frames' energies — over the first impacts (a chaotic run parts later, as
any rounding difference makes it). The compiled loop must give the plain
Python loop's answers; the closed forms handed to it must be the phase's
rows; the first impact of a bead pushed from rest must lie where the
motion's closed form ``x(t) = F/(mω) t − F/(mω²) sin ωt`` reaches the stop.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from solver import stop_closing, stop_phases
from solver.scene import load_scene
from solver.simulation import make_stepper
from solver.stop_phases import StopPhase
from solver.sweep import Axis, Sweep
from tests.test_affine_gaps import RADIUS, STOP, oscillator_scene, oscillators

FORCED_MASS = "forced_mass_between_stops.json"
FIRST_IMPACTS = 6
"""Impacts compared between the two paths (later ones of a chaotic run may part)."""


def run(scene, fast):
    """Events ``(t, type, body, other, v_plus)`` and ``pre`` frames ``(t, q, v, input, lost)``."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(StopPhase, "fast_stop_phases", fast)
        stepper = make_stepper(scene)
        events, frames = [], []
        while stepper.status == "running":
            out = stepper.step()
            events += [
                (e.t, e.type, e.body, e.other, None if e.v_plus is None else tuple(e.v_plus))
                for e in out.events
            ]
            frames += [
                (f.t, tuple(f.q), tuple(f.v), f.energy.input, f.energy.dissipated)
                for f in out.frames
                if f.kind == "pre"
            ]
    assert stepper.status == "finished", stepper.message
    return events, frames


@settings(max_examples=60, deadline=None)
@given(oscillators, st.one_of(st.none(), st.tuples(st.floats(-0.14, 0.14), st.floats(-2, 2))))
def test_the_fast_path_gives_the_general_runs_first_impacts(params, second):
    if second is not None:
        assume(abs(second[0] - params["x0"]) > 2 * RADIUS + 1e-3)
    scene = oscillator_scene(**params, second=second, t_end=1.5)
    fast_events, fast_frames = run(scene, True)
    events, frames = run(scene, False)
    impacts = [k for k, e in enumerate(events) if e[1] == "impact"][:FIRST_IMPACTS]
    upto = impacts[-1] + 1 if impacts else len(events)
    assert len(fast_events) >= upto
    for a, b in zip(fast_events[:upto], events[:upto], strict=True):
        assert a[1:4] == b[1:4]
        assert a[0] == pytest.approx(b[0], rel=0.0, abs=1e-11)
        if b[4] is not None:
            assert a[4] == pytest.approx(b[4], rel=1e-8, abs=1e-9)
    for a, b in zip(fast_frames[: len(impacts)], frames[: len(impacts)], strict=True):
        assert a[0] == pytest.approx(b[0], rel=0.0, abs=1e-11)
        assert a[1] == pytest.approx(b[1], rel=0.0, abs=1e-9)
        assert a[3:] == pytest.approx(b[3:], rel=1e-8, abs=1e-9)  # input work, energy lost


def test_the_first_impact_of_a_bead_pushed_from_rest_is_the_closed_forms():
    m, force, omega = 1.5, 20.0, 9.0
    scene = oscillator_scene(m, 0.0, 0.0, force, omega, 0.0, 0.0, 0.0, 0.8, t_end=2.0)
    events, _ = run(scene, True)
    first = next(e for e in events if e[1] == "impact")

    def gap(t):
        x = force / (m * omega) * t - force / (m * omega**2) * math.sin(omega * t)
        return STOP - RADIUS - x

    t_ref = brentq(gap, 0.0, 2.0, xtol=1e-15)
    assert first[3] == "right"
    assert first[0] == pytest.approx(t_ref, rel=0.0, abs=1e-12)
    v_ref = force / (m * omega) * (1.0 - math.cos(omega * t_ref))
    assert first[4][0] == pytest.approx(-0.8 * v_ref, rel=1e-12)


def test_a_bead_resting_against_a_stop_goes_to_the_general_path():
    """A gap at zero that does not open at once is left to the general scan: the same run."""
    scene = oscillator_scene(1.0, 0.0, 0.0, 2.0, 3.0, 0.0, STOP - RADIUS, 0.0, 0.5, t_end=1.0)
    assert run(scene, True) == run(scene, False)


def test_a_bead_forced_at_resonance_goes_to_the_general_path():
    """At omega = sqrt(k/m) without damping the motion grows as t sin(omega t): the loop has no
    closed form of that kind, so the phase takes the general path and the run is the same."""
    m, k, force = 1.0, 4.0, 3.0
    omega = math.sqrt(k / m)
    scene = oscillator_scene(m, k, 0.0, force, omega, 0.0, 0.0, 0.0, 0.8, t_end=3.0)
    fast, general = run(scene, True), run(scene, False)
    assert any(e[1] == "impact" for e in fast[0])
    assert fast == general


def phase_arguments(params, t0):
    """The stepper, its flow and what it hands the loop for a phase of ``params`` from ``t0``."""
    stepper = make_stepper(oscillator_scene(**params, t_end=1.5))
    gaps = stepper.pairs.candidates()
    affine = stepper.stop_phase._stop_gaps(gaps)
    A, b, _ = affine.sided_rows(stepper.motion.q)
    A = A.toarray()  # the compiled loop reads dense rows
    flow = stepper.smooth.free_flow()
    # forced at resonance (omega = sqrt(k/m), no damping) the motion grows as t sin(omega t):
    # no closed form of the loop's kind, and the stepper takes the general path
    assume(flow.coordinate_maps() is not None)
    forcing, C = stepper.stop_phase._forcing_table(stepper.smooth.bead_model())
    rate = flow.max_rate
    return stepper, flow, (
        t0, t0 + 1.5, 1.0 / (stop_closing.SUBINTERVALS_PER_RATE * rate), rate, stepper.motion.q,
        stepper.motion.v, *flow.coordinate_maps(), A, b, 1e-13, forcing, C,
        np.array([0.0, 0.3, -0.2]),
        *stop_closing.GAUSS_LEGENDRE, np.inf,
    )  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(oscillators, st.floats(0.0, 50.0))
def test_the_compiled_loop_gives_the_plain_loops_answers(params, t0):
    assume(abs(params["x0"]) < STOP - RADIUS - 1e-3)
    _, _, arguments = phase_arguments(params, t0)
    answers = []
    for loop in (stop_closing.phase_end, stop_closing.compiled_phase_end()):
        result, row = np.zeros(6), np.zeros(5)
        answers.append((loop(*arguments, result, row), result, row))
    (status, result, row), (status_c, result_c, row_c) = answers
    assert status == status_c
    if status != stop_closing.UNDECIDED:
        assert result_c[0] == pytest.approx(result[0], rel=0.0, abs=1e-13)
        assert result_c[1] == result[1]
        if status == stop_closing.CLOSING:  # the gaps at the row's coordinates
            assert result_c[4:] == pytest.approx(result[4:], rel=0.0, abs=1e-12)
        assert row_c == pytest.approx(row, rel=1e-12, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda n: st.tuples(
            st.lists(st.floats(-2.0, 2.0), min_size=n, max_size=n),
            st.lists(
                st.tuples(st.lists(st.floats(-1.0, 1.0), min_size=n, max_size=n), st.floats(-1, 1)),
                min_size=1,
                max_size=4,
            ),
        )
    ),
    st.integers(0, 3),
)
def test_the_gaps_at_a_closing_are_the_rows_sums(case, k):
    """row_gaps: gap k and the lowest other as Σ A_jn q_n − b_j summed in order from 0 (floats)."""
    q, rows = case
    k %= len(rows)
    A = np.array([a for a, _ in rows]).reshape(len(rows), len(q))
    b = np.array([c for _, c in rows])
    result = np.zeros(6)
    stop_closing.row_gaps(A, b, np.array([*q, 9.0, 9.0]), k, result)
    gaps = []
    for a, c in rows:
        s = 0.0  # in order, no compensation (Python's sum compensates from 3.12 on)
        for a_n, q_n in zip(a, q, strict=True):
            s += a_n * q_n
        gaps.append(s - c)
    assert result[4] == gaps[k]
    assert result[5] == min([g for j, g in enumerate(gaps) if j != k], default=math.inf)
    assert result[4] == pytest.approx((A @ np.array(q) - b)[k], rel=0.0, abs=1e-14)


@settings(max_examples=40, deadline=None)
@given(oscillators, st.floats(0.0, 50.0), st.floats(0.0, 0.5))
def test_the_coordinates_closed_forms_are_the_phases_rows(params, t0, tau):
    stepper, flow, _ = phase_arguments(params, t0)
    project, q_p, omegas, lam, to_singles, to_poly = flow.coordinate_maps()
    D = np.empty(to_singles.shape[:2], dtype=complex)
    P = np.empty(to_poly.shape[:2])
    stop_closing.initial_forms(
        t0, stepper.motion.q, stepper.motion.v, project, q_p, omegas, to_singles, to_poly, D, P
    )
    q, v = flow.start(t0, stepper.motion.q, stepper.motion.v).state(np.array([t0 + tau]))
    powers = tau ** np.arange(len(P))
    x = (D @ np.exp(lam * tau)).real + powers @ P
    slopes = np.arange(len(P)) * np.append(0.0, powers[:-1])  # d/dτ of τ^p
    rate = (D @ (lam * np.exp(lam * tau))).real + slopes @ P
    scale = 1.0 + abs(params["v0"]) + params["force"] / params["m"]
    assert x == pytest.approx(q[0], rel=0.0, abs=1e-12 * scale)
    assert rate == pytest.approx(v[0], rel=0.0, abs=1e-11 * scale)


def _forms(params):
    """The closed forms ``(lam, D, P, A, b)`` of the phase from the scene's start (t = 0), or
    None without a closed form of the loop's kind (forced at resonance)."""
    stepper = make_stepper(oscillator_scene(**params, t_end=1.5))
    affine = stepper.stop_phase._stop_gaps(stepper.pairs.candidates())
    A, b, _ = affine.sided_rows(stepper.motion.q)
    maps = stepper.smooth.free_flow().coordinate_maps()
    if maps is None:
        return None
    project, q_p, omegas, lam, to_singles, to_poly = maps
    D = np.empty(to_singles.shape[:2], dtype=complex)
    P = np.empty(to_poly.shape[:2])
    q, v = stepper.motion.q, stepper.motion.v
    stop_closing.initial_forms(0.0, q, v, project, q_p, omegas, to_singles, to_poly, D, P)
    return lam, D, P, A.toarray(), b


@settings(max_examples=60, deadline=None)
@given(oscillators, st.floats(0.0, 1.0), st.floats(1e-4, 0.2), st.integers(0, 1))
def test_a_gap_shown_open_by_its_curvature_bound_is_open_on_the_samples(params, tau, width, k):
    """_stays_open never shows a gap above a floor that one of its samples is below: with the
    floor just above the lowest of the 15 samples (evaluated here on the closed forms) it
    proves nothing."""
    forms = _forms(params)
    assume(forms is not None)
    lam, D, P, A, b = forms

    def gap(t):
        return stop_closing._gap(k, t, lam, D, P, A, b)

    g, u, _ = gap(tau)
    lowest = min(gap(tau + width * n / 16.0)[0] for n in range(1, 16))
    floor = lowest + 1e-12 * (1.0 + abs(lowest))
    assert not stop_closing._stays_open(k, tau, tau + width, g, u, lam, D, P, A, floor)


def test_a_bead_leaving_a_stop_is_shown_open_without_the_samples():
    """Just after a bounce off the left stop at 1 m/s under 20 N sin(10 t): the bound
    ``g + u s − C s²/2`` (C = 20 m/s² here) keeps the gap above zero on the sixteenth of
    ``1/(16 ω)`` the loop looks at, so the samples are not needed."""
    params = {"m": 1.0, "k": 0.0, "c": 0.0, "force": 20.0, "omega": 10.0, "phase": 0.0}
    params |= {"x0": -(STOP - RADIUS), "v0": 1.0, "e": 0.8}
    lam, D, P, A, b = _forms(params)
    k = int(np.argmin(np.abs(A @ [-(STOP - RADIUS)] - b)))  # the left stop's gap
    g, u, _ = stop_closing._gap(k, 0.0, lam, D, P, A, b)
    assert abs(g) < 1e-15 and u == pytest.approx(1.0)
    h = 1.0 / (stop_closing.SUBINTERVALS_PER_RATE * 10.0)
    assert stop_closing._stays_open(k, 0.0, h, g, u, lam, D, P, A, 0.0)


def test_the_plain_loop_gives_the_compiled_loops_run(monkeypatch):
    """The loop as written (the compiled kernel's source, run by Python): the same run."""
    scene = oscillator_scene(1.0, 50.0, 0.5, 20.0, 12.0, 0.3, 0.05, 1.0, 0.8, t_end=0.8)
    compiled = run(scene, True)
    calls: list[int] = []
    monkeypatch.setattr(
        stop_phases, "compiled_phase_end", lambda: calls.append(1) or stop_closing.phase_end
    )
    plain = run(scene, True)
    assert calls  # the stop phases ran the plain loop
    assert [e[1:4] for e in plain[0]] == [e[1:4] for e in compiled[0]]
    assert [e[0] for e in plain[0]] == pytest.approx([e[0] for e in compiled[0]], abs=1e-12)


def test_a_forced_mass_sweep_writes_the_same_bytes_with_one_and_two_workers(tmp_path):
    """The fast path's points on one worker and on two: the same files, byte for byte."""
    scene = load_scene(Path(__file__).parents[1] / "resources" / "scenes" / FORCED_MASS)
    plan = Sweep(
        scene, [Axis.linspace("forces[0].omega", 6.0, 20.0, 6)], t_end=20.0, transient=5.0,
        dt_out=20.0,
    )  # fmt: skip
    files = []
    for workers in (1, 2):
        paths = plan.run(workers=workers).write_csv(tmp_path / str(workers))
        files.append(paths["summary"].read_bytes() + paths["impacts"].read_bytes())
    assert files[0] == files[1]
    assert files[0].count(b"\n") > 100
