"""Chains with a mode near the forcing frequency: closed forms and bounds, no generic root search.

A mode within ``SEPARATION`` of a forcing frequency (or two eigenvalues of a
general flow within ``CLUSTER_TOL`` of each other) makes a cluster whose
block is not nilpotent about its mean. Its projections and their curvature
bounds used to be None (``LinearPhase.projections``), so a chain of 93, 700
or 1200 beads (1 kg, 100 N/m, forced at 8 rad/s) sent every gap of every
sub-interval to the generic root search. Checked here against closed forms
written in the test, a tight scipy integration, and the general flow's run.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp

from solver.linear_flow import LinearFlow
from solver.modal_flow import ModalFlow
from tests.scene_data import forced_spring_chain
from tests.test_modal_flow import run_scene


def forced_oscillator(omega0, omega, F, x0, v0, t):
    """``x, ẋ, ẍ`` of ``ẍ + ω0² x = F sin(Ω t)`` from ``(x0, v0)`` at 0, without cancellation.

    The particular part ``F (sin Ω t − (Ω/ω0) sin ω0 t) / (ω0² − Ω²)`` is
    written with ``δ = Ω − ω0``, ``σ = Ω + ω0``: ``−F/σ (2 cos(σt/2)
    sin(δt/2)/δ − sin(ω0 t)/ω0)``, whose ``sin(δt/2)/δ`` tends to ``t/2``.
    """
    delta, sigma = omega - omega0, omega + omega0
    half = 0.5 * t if delta == 0.0 else np.sin(0.5 * delta * t) / delta
    x = -F / sigma * (2.0 * np.cos(0.5 * sigma * t) * half - np.sin(omega0 * t) / omega0)
    slope = np.cos(0.5 * sigma * t) * np.cos(0.5 * delta * t) - np.cos(omega0 * t)
    v = -F / sigma * (slope - sigma * np.sin(0.5 * sigma * t) * half)
    x = x + x0 * np.cos(omega0 * t) + v0 / omega0 * np.sin(omega0 * t)
    v = v - x0 * omega0 * np.sin(omega0 * t) + v0 * np.cos(omega0 * t)
    return x, v, F * np.sin(omega * t) - omega0**2 * x


@pytest.mark.parametrize("delta", [0.0, 1e-9, 1e-6, -3e-4])
def test_projections_of_a_near_resonant_oscillator_and_their_curvature_bound(delta):
    # before: None for every delta (a cluster with a nonzero mean, nilpotent or not)
    omega0, F, x0, v0 = 3.0, 2.0, 0.1, -0.2
    omega = omega0 + delta
    flow = LinearFlow(np.ones(1), np.zeros(1), np.array([omega0**2]), np.zeros(1),
                      [(np.array([F]), omega, 0.0)])  # fmt: skip
    phase = flow.start(0.0, np.array([x0]), np.array([v0]))
    curves = phase.projections(np.array([[1.0]]))
    assert curves is not None
    ts = np.linspace(0.0, 20.0, 2001)
    x, v, a = forced_oscillator(omega0, omega, F, x0, v0, ts)
    scale = float(np.max(np.abs(x)))
    for i in range(0, len(ts), 50):
        t = float(ts[i])
        value, rate, curvature = curves.kinematics(0, t)
        assert abs(value - x[i]) < 1e-12 * scale
        assert abs(curves.value(0, t) - x[i]) < 1e-12 * scale
        assert abs(rate - v[i]) < 1e-12 * omega0 * scale
        assert abs(curves.rate(0, t) - v[i]) < 1e-12 * omega0 * scale
        assert abs(curvature - a[i]) < 1e-11 * omega0**2 * scale
    for start in (0.0, 4.0, 13.0):
        inside = (ts >= start) & (ts <= start + 2.0)
        bound = curves.curvature_bound(0, start, start + 2.0)
        largest = float(np.max(np.abs(a[inside])))
        assert largest <= bound < 10.0 * largest  # rigorous, and tight enough to screen


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_closed_forms_and_curvature_bounds_of_random_near_degenerate_flows(seed):
    # 1-3 oscillators of about one frequency (to 1e-9 .. 1e-4), damped or not, forced about
    # there: clusters of every kind. The bound holds on 400 samples of the acceleration
    # (min ratio 1.0003 in 400 such draws), the closed forms are the phase's rows
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 4))
    omega0 = rng.uniform(1.0, 10.0)
    K = np.full(n, omega0**2) * (1.0 + rng.choice([0.0, 1e-9, 1e-6, 1e-4], size=n))
    C = np.full(n, rng.choice([0.0, 1e-4, 1e-2]))
    omega = omega0 * (1.0 + rng.choice([0.0, 1e-9, 1e-6, -1e-5]))
    flow = LinearFlow(np.ones(n), C, K, rng.normal(size=n),
                      [(rng.normal(size=n), omega, rng.uniform(0.0, 6.0))])  # fmt: skip
    phase = flow.start(rng.uniform(-1.0, 1.0), rng.normal(size=n), rng.normal(size=n))
    rows = rng.normal(size=(2, n))
    curves = phase.projections(rows)
    ta = phase.t0 + rng.uniform(-5.0, 10.0)
    tb = ta + rng.uniform(0.01, 3.0)
    ts = np.linspace(ta, tb, 400)
    Q, V, A = phase.kinematics(ts)
    for k in range(2):
        assert curves.curvature_bound(k, ta, tb) >= np.max(np.abs(A @ rows[k]))
        value, rate, curvature = curves.kinematics(k, float(ts[123]))
        scale = 1.0 + np.abs(rows[k]) @ np.abs(Q[123])
        assert abs(value - rows[k] @ Q[123]) < 1e-11 * scale
        assert abs(curves.value(k, float(ts[123])) - value) < 1e-11 * scale
        assert abs(rate - rows[k] @ V[123]) < 1e-10 * omega0 * scale
        assert abs(curves.rate(k, float(ts[123])) - rate) < 1e-10 * omega0 * scale
        assert abs(curvature - rows[k] @ A[123]) < 1e-9 * omega0**2 * scale


def test_equal_oscillators_a_nilpotent_cluster_about_a_nonzero_mean_has_a_curvature_bound():
    # two equal uncoupled oscillators: the eigenvalues ±3i twice, a cluster nilpotent about
    # ±3i (a polynomial times exp(±3i τ)); before: its curvature bound was None
    omega0 = 3.0
    flow = LinearFlow(np.ones(2), np.zeros(2), np.full(2, omega0**2), np.zeros(2))
    assert any(mu != 0.0 and not np.any(np.diag(N)) for _, mu, N in flow._decomposition.clusters)
    q0, v0 = np.array([0.1, 0.3]), np.array([1.0, -0.5])
    curves = flow.start(0.0, q0, v0).projections(np.array([[1.0, -1.0]]))
    ts = np.linspace(1.0, 3.0, 2001)
    gap = (q0[0] - q0[1]) * np.cos(omega0 * ts) + (v0[0] - v0[1]) / omega0 * np.sin(omega0 * ts)
    largest = float(np.max(np.abs(omega0**2 * gap)))
    bound = curves.curvature_bound(0, 1.0, 3.0)
    assert largest <= bound < 1.1 * largest  # 1.3e-7 above the sampled largest here
    assert abs(curves.kinematics(0, 2.0)[2] + omega0**2 * gap[1000]) < 1e-13


def chain_mode(beads: int, j: int) -> float:
    """Mode ``j`` of the fixed-free chain of 1 kg beads and 100 N/m springs (rad/s)."""
    return 20.0 * math.sin((2 * j - 1) * math.pi / (2 * (2 * beads + 1)))


def test_a_chain_forced_near_a_mode_needs_no_root_search_and_moves_as_the_general_flow(
    monkeypatch,
):
    # 12 beads forced 1e-9 rad/s off their 4th mode (8.5156 rad/s): the mode is special, its
    # cluster not nilpotent. Before: 1262 calls of the generic root search's rate and 14 of
    # its gap events; now none and 1. The events (20 impacts) match the general flow's run
    from solver.gap_roots import GapRoots

    beads = 12
    data = forced_spring_chain(beads, t_end=2.5, dt_out=0.05)
    omega = chain_mode(beads, 4) + 1e-9
    data["forces"][0]["omega"] = omega
    calls = []
    original = GapRoots._gap_speed

    def counted(self, *args):
        calls.append(args)
        return original(self, *args)

    with monkeypatch.context() as patch:
        patch.setattr(GapRoots, "_gap_speed", counted)
        modal = run_scene(data, ModalFlow)
    assert len(calls) == 0
    # the motion before the first impact against a tight integration of M q̈ + K q = f(t)
    K = 200.0 * np.eye(beads) - 100.0 * (np.eye(beads, k=1) + np.eye(beads, k=-1))
    K[-1, -1] = 100.0

    def rhs(t, y):
        force = np.zeros(beads)
        force[-1] = 10.0 * math.sin(omega * t)
        return np.concatenate((y[beads:], force - K @ y[:beads]))

    first = next(e.t for e in modal.events if e.type == "impact")
    times = modal.times()
    keep = times < first
    q0 = 0.2 * np.arange(beads)
    reference = solve_ivp(rhs, (0.0, first), np.zeros(2 * beads), method="DOP853",
                          t_eval=times[keep], rtol=1e-12, atol=1e-15)  # fmt: skip
    states = modal.states()[keep]
    assert np.max(np.abs(states[:, :beads] - q0 - reference.y[:beads].T)) < 1e-12  # 6e-14
    assert np.max(np.abs(states[:, beads:] - reference.y[beads:].T)) < 1e-11  # 8e-13
    monkeypatch.setattr("solver.linear_bead_model.MODAL_MIN_BEADS", 10**9)
    general = run_scene(data, LinearFlow)
    ours = [(e.type, e.body, e.other) for e in modal.events]
    assert ours == [(e.type, e.body, e.other) for e in general.events]
    assert sum(1 for e in modal.events if e.type == "impact") >= 10
    times = np.array([[a.t, b.t] for a, b in zip(modal.events, general.events, strict=True)])
    assert np.max(np.abs(times[:, 0] - times[:, 1])) < 1e-11
    assert np.max(np.abs(modal.states()[-1] - general.states()[-1])) < 1e-10


@pytest.mark.parametrize("delta", [0.0, 1e-9, 1e-6])
def test_a_near_resonant_bead_between_stops_is_decided_on_closed_forms_as_the_full_scan(delta):
    # a bead on a 100 N/m spring forced at 10 + delta rad/s (its general flow's cluster is not
    # nilpotent) hits the stops 6 times in 3 s. Before: the closed-form route never ran (no
    # projections); now it decides the sub-intervals, the events the full scan's to 1.8e-15 s
    from solver.affine_gaps import AffineScan
    from solver.stop_phases import StopPhase
    from tests.test_affine_gaps import full_scan, oscillator_scene, run_events

    decided = []
    original = AffineScan._closed_form_event

    def counted(*args):
        found = original(*args)
        decided.append(found[0])
        return found

    scene = oscillator_scene(1.0, 100.0, 0.0, 5.0, 10.0 + delta, 0.0, 0.0, 0.0, 0.8, t_end=3.0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(StopPhase, "fast_stop_phases", False)  # the scan, not its fast path
        patch.setattr(AffineScan, "_closed_form_event", staticmethod(counted))
        (closed, closed_end) = run_events(scene)
        patch.setattr(AffineScan, "screened_scan", full_scan)
        (full, full_end) = run_events(scene)
    assert sum(decided) >= 5
    assert [e[1:] for e in closed] == [e[1:] for e in full] and len(full) >= 5
    assert max(abs(a[0] - b[0]) for a, b in zip(closed, full, strict=True)) <= 5e-14
    assert np.max(np.abs(np.array(closed_end) - np.array(full_end))) < 1e-12
