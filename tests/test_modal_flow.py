"""The modal form of spring chains (solver/modal_flow.py) against independent computations.

A phase of beads joined by linear springs, ``M q̈ + C q̇ + K q = f0 + Σ a
sin(ω t + φ)``, in modal form must equal, to rounding: the exponential of
the augmented first-order generator (scipy's ``expm``, written out here), the
general closed form (:class:`solver.linear_flow.LinearFlow`), a DOP853
integration, and the textbook closed forms of resonance, critical damping
and a free chain's centre of mass. Its gap projections, curvature bounds and
the screen of quiet gaps are checked against sampled values, and the
1000-bead forced chain's energy balance from ``trajectory.csv`` holds to
round-off through its first impacts.
"""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp

from solver.linear_bead_model import linear_bead_model
from solver.linear_flow import LinearFlow
from solver.modal_flow import ModalFlow, ModalPhase, modal_flow, quiet_rows
from solver.record import ENERGY_COLUMNS, Trajectory, write_csv
from solver.scene import parse_scene
from solver.simulation import make_stepper
from solver.system import System
from tests.scene_data import forced_spring_chain

EPS = float(np.finfo(float).eps)


def chain_matrices(
    masses: np.ndarray, stiffness: np.ndarray, anchored: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """``M`` and the tridiagonal ``K`` of beads in a row joined by springs (the first to a wall)."""
    n = len(masses)
    K = np.zeros((n, n))
    if anchored:
        K[0, 0] += stiffness[0]
    for i in range(1, n):
        k = stiffness[i]
        K[i - 1, i - 1] += k
        K[i, i] += k
        K[i - 1, i] -= k
        K[i, i - 1] -= k
    return np.diag(masses), K


def expm_reference(M, C, K, f0, harmonics, t0, q0, v0, ts) -> tuple[np.ndarray, np.ndarray]:
    """``(q, v)`` at ``ts`` from ``expm`` of the generator on ``(q, v, sin, cos…, 1)``."""
    n = len(f0)
    h = len(harmonics)
    size = 2 * n + 2 * h + 1
    M_inv = np.linalg.inv(M)
    G = np.zeros((size, size))
    G[:n, n : 2 * n] = np.eye(n)
    G[n : 2 * n, :n] = -M_inv @ K
    G[n : 2 * n, n : 2 * n] = -M_inv @ C
    G[n : 2 * n, -1] = M_inv @ f0
    w0 = np.zeros(size)
    w0[:n], w0[n : 2 * n], w0[-1] = q0, v0, 1.0
    for j, (amplitude, omega, phase) in enumerate(harmonics):
        s, c = 2 * n + 2 * j, 2 * n + 2 * j + 1  # sin(ω t + φ), cos(ω t + φ)
        G[n : 2 * n, s] = M_inv @ amplitude
        G[s, c] = omega
        G[c, s] = -omega
        w0[s], w0[c] = math.sin(omega * t0 + phase), math.cos(omega * t0 + phase)
    W = np.array([scipy.linalg.expm(G * (t - t0)) @ w0 for t in ts])
    return W[:, :n], W[:, n : 2 * n]


def relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def random_chain(n: int, seed: int, anchored: bool = True):
    rng = np.random.default_rng(seed)
    M, K = chain_matrices(rng.uniform(0.5, 2.0, n), rng.uniform(50.0, 150.0, n), anchored)
    f0 = rng.normal(size=n)
    harmonics = [
        (np.eye(n)[-1] * 10.0, 8.0, 0.3),
        (np.eye(n)[n // 2] * 2.0, -3.0, 1.0),  # a negative frequency
        (np.eye(n)[0] * 0.5, 0.0, 0.7),  # a constant force written as a harmonic
    ]
    return M, K, f0, harmonics, rng.normal(size=n), rng.normal(size=n)


DAMPINGS = {"none": (0.0, 0.0), "mass": (0.3, 0.0), "stiffness": (0.0, 0.01), "both": (0.2, 0.004)}


@pytest.mark.parametrize("anchored", [True, False], ids=["anchored", "free"])
@pytest.mark.parametrize("damping", DAMPINGS.values(), ids=DAMPINGS.keys())
def test_modal_phase_equals_the_exponential_of_the_generator(damping, anchored):
    M, K, f0, harmonics, q0, v0 = random_chain(12, 1, anchored)
    C = damping[0] * M + damping[1] * K
    flow = modal_flow(M, C, K, f0, harmonics)
    assert isinstance(flow, ModalFlow)
    t0 = 0.7
    ts = np.linspace(t0, t0 + 3.0, 13)
    q, v = flow.start(t0, q0, v0).state(ts)
    q_ref, v_ref = expm_reference(M, C, K, f0, harmonics, t0, q0, v0, ts)
    assert relative(q, q_ref) < 1e-12
    assert relative(v, v_ref) < 1e-12


@pytest.mark.parametrize("damping", DAMPINGS.values(), ids=DAMPINGS.keys())
def test_modal_phase_equals_the_general_flow_with_accelerations(damping):
    M, K, f0, harmonics, q0, v0 = random_chain(10, 2)
    C = damping[0] * M + damping[1] * K
    modal = modal_flow(M, C, K, f0, harmonics).start(0.2, q0, v0)
    general = LinearFlow(M, C, K, f0, harmonics).start(0.2, q0, v0)
    ts = np.linspace(0.2, 2.2, 9)
    for ours, theirs in zip(modal.kinematics(ts), general.kinematics(ts), strict=True):
        assert relative(ours, theirs) < 1e-12
    # one time at a time, as the event search asks
    q, v = modal.state(1.3)
    q_ref, v_ref = general.state(1.3)
    assert relative(q, q_ref) < 1e-12 and relative(v, v_ref) < 1e-12
    # the accelerations are those of the equations of motion
    t = 1.7
    q, v, a = modal.kinematics(t)
    force = f0 - K @ q - C @ v + sum(amp * math.sin(w * t + ph) for amp, w, ph in harmonics)
    assert relative(M @ a, force) < 1e-12


def test_modal_phase_equals_a_dop853_integration():
    M, K, f0, harmonics, q0, v0 = random_chain(8, 3)
    C = 0.1 * M
    n = len(f0)

    def rhs(t, y):
        force = f0 - K @ y[:n] - C @ y[n:]
        force = force + sum(amp * math.sin(w * t + ph) for amp, w, ph in harmonics)
        return np.concatenate((y[n:], np.linalg.solve(M, force)))

    ts = np.linspace(0.0, 2.0, 11)
    solution = solve_ivp(
        rhs, (0.0, 2.0), np.concatenate((q0, v0)), "DOP853", ts, rtol=1e-13, atol=1e-13
    )
    q, v = modal_flow(M, C, K, f0, harmonics).start(0.0, q0, v0).state(ts)
    assert relative(q, solution.y[:n].T) < 1e-10
    assert relative(v, solution.y[n:].T) < 1e-10


def expm_long_double(G: np.ndarray, t: float) -> np.ndarray:
    """``exp(G t)`` in long double: Taylor series of ``G t / 2^s`` squared ``s`` times."""
    A = G.astype(np.longdouble) * np.longdouble(t)
    s = max(0, math.ceil(math.log2(float(np.abs(A).sum(axis=1).max()) + 1e-300)) + 4)
    A = A / np.longdouble(2**s)
    E = np.eye(len(A), dtype=np.longdouble)
    term = E.copy()
    for k in range(1, 30):
        term = term @ A / np.longdouble(k)
        E = E + term
    for _ in range(s):
        E = E @ E
    return E


@pytest.mark.skipif(np.finfo(np.longdouble).eps >= EPS, reason="no extended precision")
def test_fifty_bead_chain_to_a_long_double_exponential():
    # the forced chain's first phase, from rest: within 1e-14 m and 1e-13 m/s of exp(G t) w0
    # evaluated with 64-bit mantissas (the general flow is within 4e-13 m, 8e-13 m/s)
    system = System(parse_scene(forced_spring_chain(50)))
    model = linear_bead_model(system, system.q0)
    (amplitude, omega, phase) = model.harmonics[0]
    n, size = 50, 103
    G = np.zeros((size, size))
    G[:n, n : 2 * n] = np.eye(n)
    G[n : 2 * n, :n] = -model.K
    G[n : 2 * n, -1] = model.f0
    G[n : 2 * n, 2 * n] = amplitude
    G[2 * n, 2 * n + 1], G[2 * n + 1, 2 * n] = omega, -omega
    w0 = np.zeros(size)
    w0[:n], w0[2 * n], w0[2 * n + 1], w0[-1] = system.q0, math.sin(phase), math.cos(phase), 1.0
    motion = model.flow().start(0.0, system.q0, system.v0)
    assert isinstance(motion, ModalPhase)
    for t in (0.2, 0.41, 1.0):
        reference = (expm_long_double(G, t) @ w0.astype(np.longdouble)).astype(float)
        q, v = motion.state(t)
        assert np.max(np.abs(q - reference[:n])) < 1e-13
        assert np.max(np.abs(v - reference[n : 2 * n])) < 1e-13


def test_exact_resonance_grows_linearly_in_time():
    # x'' + ω² x = F sin ω t from rest: x = F / (2ω²) (sin ω t − ω t cos ω t)
    omega, F = 3.0, 2.0
    flow = modal_flow(
        np.ones(1), np.zeros(1), np.array([omega**2]), np.zeros(1), [(np.array([F]), omega, 0.0)]
    )
    assert len(flow._special) == 1  # the resonant mode goes through the general form
    ts = np.linspace(0.0, 20.0, 41)
    q, v = flow.start(0.0, np.zeros(1), np.zeros(1)).state(ts)
    x = F / (2 * omega**2) * (np.sin(omega * ts) - omega * ts * np.cos(omega * ts))
    x_dot = F / 2 * ts * np.sin(omega * ts)
    assert np.max(np.abs(q[:, 0] - x)) < 1e-13 * np.max(np.abs(x))
    assert np.max(np.abs(v[:, 0] - x_dot)) < 1e-13 * np.max(np.abs(x_dot))


def test_resonance_with_a_mode_of_a_uniform_chain():
    # fixed-free chain of n equal beads and springs: ω_k = 2 √(k/m) sin((2k − 1) π / (2 (2n + 1)))
    n, k, m = 10, 100.0, 1.0
    M, K = chain_matrices(np.full(n, m), np.full(n, k))
    omega = 2.0 * math.sqrt(k / m) * math.sin(5 * math.pi / (2 * (2 * n + 1)))  # the third mode
    harmonics = [(np.eye(n)[-1] * 10.0, omega, 0.0)]
    flow = modal_flow(M, np.zeros((n, n)), K, np.zeros(n), harmonics)
    assert len(flow._special) == 1
    assert abs(math.sqrt(flow.omega2[flow._special[0]]) - omega) < 1e-12 * omega
    q0 = np.linspace(0.0, 0.01, n)
    ts = np.linspace(0.0, 15.0, 16)
    q, v = flow.start(0.0, q0, np.zeros(n)).state(ts)
    q_ref, v_ref = expm_reference(M, 0 * M, K, np.zeros(n), harmonics, 0.0, q0, np.zeros(n), ts)
    assert relative(q, q_ref) < 1e-12 and relative(v, v_ref) < 1e-12


def test_slow_forcing_stays_generic():
    # the forcing's nodes 0 and iΩ are never divided by each other's distance
    M, K, f0, _, q0, v0 = random_chain(9, 6)
    harmonics = [(np.eye(9)[-1] * 3.0, 1e-7, 0.4)]
    flow = modal_flow(M, 0 * M, K, f0, harmonics)
    assert not len(flow._special)
    ts = np.linspace(0.0, 4.0, 9)
    q, v = flow.start(0.0, q0, v0).state(ts)
    q_ref, v_ref = expm_reference(M, 0 * M, K, f0, harmonics, 0.0, q0, v0, ts)
    assert relative(q, q_ref) < 1e-12 and relative(v, v_ref) < 1e-12


def test_critical_damping():
    # x'' + 2ω x' + ω² x = 0: x = (x0 + (v0 + ω x0) t) e^{−ω t}
    omega, x0, v0 = 4.0, 0.3, -2.0
    flow = modal_flow(np.ones(1), np.array([2 * omega]), np.array([omega**2]), np.zeros(1), [])
    ts = np.linspace(0.0, 3.0, 31)
    q, _ = flow.start(0.0, np.array([x0]), np.array([v0])).state(ts)
    x = (x0 + (v0 + omega * x0) * ts) * np.exp(-omega * ts)
    assert np.max(np.abs(q[:, 0] - x)) < 1e-14


def test_free_chain_centre_of_mass_is_a_parabola():
    masses = np.array([1.0, 2.0, 0.5, 1.5, 1.0, 3.0, 1.0, 0.7, 1.2])
    M, K = chain_matrices(masses, np.full(9, 80.0), anchored=False)
    rng = np.random.default_rng(4)
    f0, q0, v0 = rng.normal(size=9), rng.normal(size=9), rng.normal(size=9)
    flow = modal_flow(M, np.zeros((9, 9)), K, f0, [])
    assert flow.omega2[0] == 0.0  # the free-body mode, exactly
    ts = np.linspace(0.0, 5.0, 11)
    q, _v = flow.start(0.0, q0, v0).state(ts)
    total = masses.sum()
    centre = q @ masses / total
    expected = q0 @ masses / total + v0 @ masses / total * ts + f0.sum() / (2 * total) * ts**2
    assert np.max(np.abs(centre - expected)) < 1e-12 * np.max(np.abs(expected))


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(2, 30),
    seed=st.integers(0, 2**32 - 1),
    t=st.floats(0.0, 50.0),
)
def test_undamped_chain_keeps_its_energy(n, seed, t):
    # E = ½ vᵀ M v + ½ qᵀ K q − f0ᵀ q is constant without damping and forcing
    rng = np.random.default_rng(seed)
    M, K = chain_matrices(rng.uniform(0.1, 10.0, n), rng.uniform(1.0, 1000.0, n))
    f0, q0, v0 = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
    phase = modal_flow(M, np.zeros((n, n)), K, f0, []).start(0.0, q0, v0)

    def energy(q, v):
        return 0.5 * v @ M @ v + 0.5 * q @ K @ q - f0 @ q

    q, v = phase.state(t)
    scale = 0.5 * v0 @ M @ v0 + 0.5 * q0 @ K @ q0 + np.abs(f0) @ np.abs(q0) + 1.0
    assert abs(energy(q, v) - energy(q0, v0)) < 1e-11 * scale


def test_projections_and_their_curvature_bounds():
    M, K, f0, harmonics, q0, v0 = random_chain(15, 5)
    phase = modal_flow(M, 0.05 * K, K, f0, harmonics).start(0.0, q0, v0)
    rows = np.zeros((14, 15))
    rows[np.arange(14), np.arange(1, 15)] = 1.0
    rows[np.arange(14), np.arange(14)] = -1.0  # x_{i+1} − x_i
    curves = phase.projections(rows)
    ts = np.linspace(0.3, 0.5, 201)
    Q, _V, A = phase.kinematics(ts)
    for k in (0, 6, 13):
        assert abs(curves.value(k, 0.41) - rows[k] @ phase.state(0.41)[0]) < 1e-12
        _value, rate, curvature = curves.kinematics(k, 0.41)
        _q, v, a = phase.kinematics(0.41)
        assert abs(rate - rows[k] @ v) < 1e-12 and abs(curves.rate(k, 0.41) - rate) < 1e-15
        assert abs(curvature - rows[k] @ a) < 1e-10
        bound = curves.curvature_bound(k, 0.3, 0.5)
        assert np.max(np.abs(A @ rows[k])) <= bound
    bounds = phase.curvature_bounds(rows, 0.3, 0.5)
    assert np.all(np.max(np.abs(A @ rows.T), axis=0) <= bounds)
    # a quiet row is above its floor on the whole sub-interval
    sub = np.array([0.3, 0.4, 0.5])
    values = phase.state(sub)[0] @ rows.T
    floor = float(np.min(values)) - 0.05
    quiet = quiet_rows(phase, rows, sub, values, floor)
    assert quiet.any()
    sampled = Q @ rows.T
    for j in range(2):
        inside = (ts >= sub[j]) & (ts <= sub[j + 1])
        assert np.all(sampled[inside][:, quiet[j]] > floor)


def test_bead_models_take_the_modal_form_without_constraints():
    system = System(parse_scene(forced_spring_chain(20)))
    model = linear_bead_model(system, system.q0)
    assert isinstance(model.flow(), ModalFlow)
    assert isinstance(model.flow().start(0.0, system.q0, system.v0), ModalPhase)
    A = np.zeros((1, 20))
    A[0, 3], A[0, 4] = 1.0, -1.0  # two beads held together: the general flow
    assert isinstance(model.flow(A, A @ system.q0), LinearFlow)
    few = System(parse_scene(forced_spring_chain(4)))
    assert isinstance(linear_bead_model(few, few.q0).flow(), LinearFlow)


def test_a_chain_at_rest_far_from_its_driven_end_needs_no_root_search(monkeypatch):
    # the far beads' gap rates are rounding about zero, of either sign: a turning point
    # at every sub-point for the event scan unless a bound shows those gaps open
    from solver.gap_roots import GapRoots

    calls = []
    original = GapRoots._gap_speed

    def counted(self, *args):
        calls.append(args)
        return original(self, *args)

    monkeypatch.setattr(GapRoots, "_gap_speed", counted)
    stepper = make_stepper(parse_scene(forced_spring_chain(60, t_end=1.0)))
    trajectory = Trajectory(stepper.system)
    while stepper.status == "running":
        trajectory.append(stepper.step())
    assert stepper.status == "finished"
    assert len(calls) == 0


def test_thousand_bead_chain_keeps_its_energy_balance_through_impacts(tmp_path):
    # E_total + E_dissipated − E_input is constant; the first impacts are at t ≈ 1.07 s
    stepper = make_stepper(parse_scene(forced_spring_chain(1000, t_end=1.15, dt_out=0.05)))
    trajectory = Trajectory(stepper.system)
    while stepper.status == "running":
        trajectory.append(stepper.step())
    assert stepper.status == "finished"
    assert sum(1 for event in trajectory.events if event.type == "impact") >= 2
    write_csv(trajectory, tmp_path)
    with open(tmp_path / "trajectory.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    columns = {name: np.array([float(row[name]) for row in rows]) for name in ENERGY_COLUMNS}
    balance = columns["E_total"] + columns["E_dissipated"] - columns["E_input"]
    assert columns["E_dissipated"][-1] > 1e-4  # the impacts (e = 0.8) dissipated energy
    scale = np.max(
        np.abs(columns["E_kin"]) + np.abs(columns["E_spring"]) + np.abs(columns["E_input"])
    )
    assert np.max(np.abs(balance - balance[0])) < 1e-12 * scale  # 1.2e-13 here


def test_a_phase_keeps_its_start_when_the_callers_state_changes_in_place():
    M, K, f0, harmonics, q0, v0 = random_chain(9, 7)
    phase = modal_flow(M, 0 * M, K, f0, harmonics).start(0.0, q0, v0)
    expected, start = phase.state(0.3)[0].copy(), q0.copy()
    q0 += 1.0  # the stepper's state moves on
    assert np.array_equal(phase.state(0.3)[0], expected)
    assert np.array_equal(phase.initial_state()[0], start)


def run_scene(data: dict, kind: type) -> Trajectory:
    """The run of scene ``data`` to its end, every flow it made a ``kind``."""
    stepper = make_stepper(parse_scene(data))
    trajectory = Trajectory(stepper.system)
    while stepper.status == "running":
        trajectory.append(stepper.step())
    assert stepper.status == "finished"
    assert all(isinstance(flow, kind) for flow in stepper.smooth._flows.values())
    return trajectory


@pytest.mark.parametrize("damping", [0.0, 0.5], ids=["undamped", "damped"])
def test_modal_and_general_routes_give_the_same_impacts(monkeypatch, damping):
    # a 12-bead forced chain with impacts, through the engine, once in modal form and
    # once with the general flow: the same events (21 and 7 impacts), their times within
    # 1e-13 s and the final states within 1e-12 here
    data = forced_spring_chain(12, t_end=2.5, dt_out=0.5)
    for spring in data["springs"]:
        spring["damping"] = damping  # c = 0.005 k: proportional damping

    modal = run_scene(data, ModalFlow)
    monkeypatch.setattr("solver.linear_bead_model.MODAL_MIN_BEADS", 10**9)
    general = run_scene(data, LinearFlow)
    ours = [(e.type, e.body, e.other) for e in modal.events]
    theirs = [(e.type, e.body, e.other) for e in general.events]
    assert ours == theirs
    assert sum(1 for e in modal.events if e.type == "impact") >= 2
    times = np.array([[a.t, b.t] for a, b in zip(modal.events, general.events, strict=True)])
    assert np.max(np.abs(times[:, 0] - times[:, 1])) < 1e-11
    assert np.max(np.abs(modal.states()[-1] - general.states()[-1])) < 1e-10
