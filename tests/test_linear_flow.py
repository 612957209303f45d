"""Closed-form linear phases: hand solutions, solve_ivp references, the bead model."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp
from scipy.linalg import eigh

from solver.errors import InputError
from solver.linear_bead_model import linear_bead_model
from solver.linear_flow import Harmonic, LinearFlow
from solver.scene import parse_scene
from solver.system import System

# ------------------------------------------------------------------ hand closed forms


def test_mass_spring_is_cosine_and_sine():
    m, k, x0, v0 = 2.0, 8.0, 0.3, -0.5
    lam = math.sqrt(k / m)
    t = np.linspace(0.0, 10.0, 101)
    q, v = LinearFlow([m], [0.0], [k], [0.0]).start(0.0, [x0], [v0]).state(t)
    np.testing.assert_allclose(
        q[:, 0], x0 * np.cos(lam * t) + v0 / lam * np.sin(lam * t), rtol=0, atol=1e-14
    )
    np.testing.assert_allclose(
        v[:, 0], -x0 * lam * np.sin(lam * t) + v0 * np.cos(lam * t), rtol=0, atol=1e-14
    )


def test_forced_undamped_oscillator_off_resonance():
    # x'' + w0^2 x = (F/m) sin(W t): homogeneous part plus F/m / (w0^2 - W^2) sin(W t)
    m, k, F, W, x0, v0 = 0.5, 2.0, 1.5, 3.0, 0.2, 0.1
    w0 = math.sqrt(k / m)
    amp = F / m / (w0**2 - W**2)
    t = np.linspace(0.0, 20.0, 201)
    flow = LinearFlow([m], [0.0], [k], [0.0], [Harmonic(np.array([F]), W, 0.0)])
    q, _ = flow.start(0.0, [x0], [v0]).state(t)
    expected = x0 * np.cos(w0 * t) + (v0 - amp * W) / w0 * np.sin(w0 * t) + amp * np.sin(W * t)
    np.testing.assert_allclose(q[:, 0], expected, rtol=0, atol=2e-14)


def test_resonance_grows_linearly():
    # x'' + w^2 x = sin(w t) from rest: x = (sin(w t)/w - t cos(w t)) / (2 w)
    w = 2.0
    t = np.linspace(0.0, 30.0, 301)
    q, _ = (
        LinearFlow([1.0], [0.0], [w * w], [0.0], [([1.0], w, 0.0)])
        .start(0.0, [0.0], [0.0])
        .state(t)
    )
    np.testing.assert_allclose(
        q[:, 0], (np.sin(w * t) / w - t * np.cos(w * t)) / (2 * w), rtol=0, atol=1e-13
    )


@pytest.mark.parametrize("detuning", [1e-4, 2e-3])
def test_near_resonance_beats(detuning):
    # x'' + w0^2 x = (F/m) sin(W t) from rest: x = F/m (sin W t - (W/w0) sin w0 t) / (w0^2 - W^2)
    m, k, F = 1.0, 4.0, 1.0
    w0 = math.sqrt(k / m)
    W = w0 * (1.0 + detuning)
    t = np.linspace(0.0, 200.0, 401)
    flow = LinearFlow([m], [0.0], [k], [0.0], [([F], W, 0.0)])
    q, _ = flow.start(0.0, [0.0], [0.0]).state(t)
    expected = F / m * (np.sin(W * t) - W / w0 * np.sin(w0 * t)) / (w0**2 - W**2)
    np.testing.assert_allclose(q[:, 0], expected, rtol=0, atol=1e-9 * np.max(np.abs(expected)))


def test_max_rate_is_the_fastest_frequency():
    flow = LinearFlow([1.0, 1.0], [0.0, 0.0], [4.0, 0.0], [0.0, 1.0], [([0.0, 1.0], -3.0, 0.0)])
    assert flow.max_rate == pytest.approx(3.0, rel=1e-12)
    assert LinearFlow([1.0], [0.0], [25.0], [0.0]).max_rate == pytest.approx(5.0, rel=1e-12)


def test_critical_damping():
    # x'' + 2 w x' + w^2 x = 0: x = (x0 + (v0 + w x0) t) exp(-w t)
    w, x0, v0 = 3.0, 0.4, -2.0
    t = np.linspace(0.0, 5.0, 51)
    q, _ = LinearFlow([1.0], [2 * w], [w * w], [0.0]).start(0.0, [x0], [v0]).state(t)
    np.testing.assert_allclose(
        q[:, 0], (x0 + (v0 + w * x0) * t) * np.exp(-w * t), rtol=0, atol=1e-14
    )


def test_free_bead_under_constant_force_is_a_parabola():
    m, f, t0, x0, v0 = 2.0, 3.0, 1.5, 0.3, 0.5
    t = t0 + np.array([0.0, 0.1, 1.0, 3.0, 10.0, 100.0, 1000.0])
    phase = LinearFlow([m], [0.0], [0.0], [f]).start(t0, [x0], [v0])
    q, v = phase.state(t)
    tau = t - t0
    np.testing.assert_allclose(
        q[:, 0], x0 + v0 * tau + 0.5 * f / m * tau**2, rtol=1e-15, atol=1e-14
    )
    np.testing.assert_allclose(v[:, 0], v0 + f / m * tau, rtol=1e-15, atol=1e-14)
    np.testing.assert_allclose(phase.acceleration(t)[:, 0], f / m, rtol=1e-14)


def test_late_start_keeps_the_forcing_phase():
    # the same motion started at t0 = 1000 s from the state it reaches there; evaluating
    # the early phase 1000 s out costs ~ ω τ ε ≈ 1e-12 of phase, hence the tolerance
    flow = LinearFlow([1.0], [0.1], [4.0], [0.5], [([1.0], 1.7, 0.3)])
    early = flow.start(0.0, [0.1], [0.0])
    q1, v1 = early.state(1000.0)
    late = flow.start(1000.0, q1, v1)
    t = np.linspace(1000.0, 1010.0, 11)
    np.testing.assert_allclose(late(t), early(t), rtol=0, atol=1e-11)


def test_negative_and_zero_frequencies():
    # sin(-w t + p) = -sin(w t - p); sin(0 t + p) = sin p is a constant force
    a = np.array([0.7, -0.2])
    M, K = np.diag([1.0, 2.0]), np.array([[3.0, -1.0], [-1.0, 2.0]])
    one = LinearFlow(M, 0 * M, K, [0.0, 0.0], [(a, -1.3, 0.4), (a, 0.0, 0.9)])
    two = LinearFlow(M, 0 * M, K, a * math.sin(0.9), [(-a, 1.3, -0.4)])
    t = np.linspace(0.0, 10.0, 21)
    np.testing.assert_allclose(
        one.start(0.0, [0.1, 0.2], [0.0, 0.3])(t),
        two.start(0.0, [0.1, 0.2], [0.0, 0.3])(t),
        rtol=0,
        atol=1e-14,
    )


def test_shapes_scalar_and_array():
    flow = LinearFlow(
        np.diag([1.0, 2.0]), np.zeros(2), np.diag([1.0, 3.0]), [0.0, 1.0], A=[[1.0, 1.0]], b=[0.5]
    )
    phase = flow.start(0.0, [0.25, 0.25], [0.0, 0.0])
    q, v = phase.state(1.0)
    assert q.shape == v.shape == (2,)
    assert phase(1.0).shape == (4,)
    assert phase(np.array([1.0, 2.0, 3.0])).shape == (4, 3)
    assert phase.acceleration(np.array([1.0, 2.0])).shape == (2, 2)
    assert phase.reaction(1.0).shape == (1,)
    np.testing.assert_allclose(phase(np.array([1.0, 2.0]))[:, 1], np.concatenate(phase.state(2.0)))
    free = LinearFlow([1.0], [0.0], [1.0], [0.0]).start(0.0, [1.0], [0.0])
    assert free.reaction(1.0).shape == (0,)


# ------------------------------------------------------------------ constraints


def test_two_beads_held_together_share_the_acceleration():
    # beads 1, 2 (masses 1, 3) with x2 - x1 = 0.1, constant forces 2 and -6 N
    m1, m2, f1, f2 = 1.0, 3.0, 2.0, -6.0
    flow = LinearFlow([m1, m2], [0, 0], [0, 0], [f1, f2], A=[[-1.0, 1.0]], b=[0.1])
    phase = flow.start(0.0, [0.0, 0.1], [1.0, 1.0])
    a = (f1 + f2) / (m1 + m2)
    t = np.linspace(0.0, 3.0, 7)
    q, _ = phase.state(t)
    np.testing.assert_allclose(q[:, 0], t + 0.5 * a * t**2, rtol=0, atol=1e-14)
    np.testing.assert_allclose(q[:, 1] - q[:, 0], 0.1, rtol=0, atol=1e-14)
    # m1 a = f1 + λ·(−1): the contact pushes bead 1 back with λ = f1 − m1 a = 3 N
    np.testing.assert_allclose(phase.reaction(t)[:, 0], f1 - m1 * a, rtol=1e-14)


def test_reaction_of_a_bead_pressed_on_a_wall_crosses_zero():
    # bead held at x = 0 (A = [1]), anchor spring k (x - 1) and forcing 2 sin(t):
    # M x'' = k (1 - x) + 2 sin t + λ = 0 at x = 0  ⇒  λ = -k - 2 sin t
    k = 1.0
    flow = LinearFlow([1.0], [0.0], [k], [k * 1.0], [([2.0], 1.0, 0.0)], A=[[1.0]], b=[0.0])
    phase = flow.start(0.0, [0.0], [0.0])
    t = np.linspace(0.0, 7.0, 15)
    np.testing.assert_allclose(phase.reaction(t)[:, 0], -k - 2.0 * np.sin(t), rtol=0, atol=1e-14)
    np.testing.assert_allclose(phase.state(t)[0][:, 0], 0.0, atol=1e-15)


def test_inconsistent_start_is_projected_in_the_mass_metric():
    M = np.diag([1.0, 4.0])
    A = np.array([[1.0, -1.0]])
    flow = LinearFlow(M, np.zeros(2), np.zeros(2), np.zeros(2), A=A, b=[0.0])
    q, v = flow.start(0.0, [0.0, 0.0], [1.0, 0.0]).state(0.0)
    # perfectly plastic sticking: common velocity = momentum / total mass
    np.testing.assert_allclose(v, [0.2, 0.2], rtol=1e-14)
    np.testing.assert_allclose(q, [0.0, 0.0], atol=1e-15)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"M": [[1.0, 0.0], [0.0, -1.0]]}, "M"),
        ({"M": [[1.0, 0.5], [0.0, 1.0]]}, "M"),
        ({"K": np.eye(3)}, "K"),
        ({"harmonics": [([1.0], 1.0, 0.0)]}, "harmonic"),
        ({"C": [[np.nan, 0.0], [0.0, 1.0]]}, "C"),
    ],
)
def test_bad_arguments_are_refused(kwargs, field):
    args = {"M": np.eye(2), "C": np.zeros(2), "K": np.eye(2), "f0": np.zeros(2)}
    with pytest.raises(InputError, match=field):
        LinearFlow(**{**args, **kwargs})


# ------------------------------------------------------------------ against solve_ivp


def _reference(M, C, K, f0, harmonics, A, t_end, q0, v0, times):
    """DOP853 on the full coordinates, multipliers from A q̈ = 0 at every instant."""
    M_inv = np.linalg.inv(M)

    def applied(t, q, v):
        f = f0 - K @ q - C @ v
        for a, w, p in harmonics:
            f = f + a * math.sin(w * t + p)
        return f

    def multipliers(t, q, v):
        if A is None:
            return np.zeros(0)
        return -np.linalg.solve(A @ M_inv @ A.T, A @ M_inv @ applied(t, q, v))

    def rhs(t, y):
        n = len(y) // 2
        q, v = y[:n], y[n:]
        force = applied(t, q, v)
        if A is not None:
            force = force + A.T @ multipliers(t, q, v)
        return np.concatenate((v, M_inv @ force))

    sol = solve_ivp(
        rhs,
        (0.0, t_end),
        np.concatenate((q0, v0)),
        method="DOP853",
        rtol=1e-13,
        atol=1e-13,
        t_eval=times,
    )
    n = len(q0)
    lam = np.array([multipliers(t, y[:n], y[n:]) for t, y in zip(times, sol.y.T, strict=True)])
    return sol.y, lam


@st.composite
def linear_systems(draw):
    n = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    dense_mass = draw(st.booleans())
    L = rng.uniform(-0.3, 0.3, (n, n)) if dense_mass else np.zeros((n, n))
    M = np.diag(rng.uniform(0.5, 2.0, n)) + L @ L.T
    rank = draw(st.integers(0, n))  # rank < n: free (rigid-body) modes
    B = rng.uniform(-1.0, 1.0, (n, rank))
    K = B @ B.T * 2.0
    damped = draw(st.booleans())
    D = rng.uniform(-0.4, 0.4, (n, n))
    C = D @ D.T if damped else np.zeros((n, n))
    f0 = rng.uniform(-1.0, 1.0, n)
    harmonics = [
        (rng.uniform(-1, 1, n), rng.uniform(0.3, 2.5), rng.uniform(-3, 3))
        for _ in range(draw(st.integers(0, 2)))
    ]
    w2 = eigh(K, M, eigvals_only=True)
    if draw(st.booleans()) and w2.max() > 0.05:
        # resonance with the fastest natural frequency (a repeated force frequency too)
        harmonics.append((rng.uniform(-1, 1, n), math.sqrt(w2.max()), rng.uniform(-3, 3)))
    p = draw(st.integers(0, n - 1))
    A = rng.uniform(-1.0, 1.0, (p, n)) if p else None
    q0 = rng.uniform(-1.0, 1.0, n)
    v0 = rng.uniform(-1.0, 1.0, n)
    b = None
    if A is not None:
        b = A @ q0
        v0 = v0 - A.T @ np.linalg.solve(A @ A.T, A @ v0)
    return M, C, K, f0, harmonics, A, b, q0, v0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(linear_systems())
def test_agrees_with_dop853(system):
    M, C, K, f0, harmonics, A, b, q0, v0 = system
    t_end = 10 * 2 * math.pi / 2.0  # ten periods at 2 rad/s
    times = np.linspace(0.0, t_end, 41)
    y_ref, lam_ref = _reference(M, C, K, f0, harmonics, A, t_end, q0, v0, times)
    phase = LinearFlow(M, C, K, f0, harmonics, A, b).start(0.0, q0, v0)
    y = phase(times)
    scale = np.max(np.abs(y_ref))
    assert np.max(np.abs(y - y_ref)) <= 1e-10 * scale
    if A is not None:
        lam = phase.reaction(times)
        assert np.max(np.abs(lam - lam_ref)) <= 1e-10 * max(1.0, np.max(np.abs(lam_ref))) * scale
    # Newton's law holds along the closed form, constraint forces included
    q, v = phase.state(times)
    force = f0 - q @ K.T - v @ C.T
    for a, w, ph in harmonics:
        force = force + np.outer(np.sin(w * times + ph), a)
    if A is not None:
        force = force + phase.reaction(times) @ A
    residual = phase.acceleration(times) @ M.T - force
    assert np.max(np.abs(residual)) <= 1e-10 * max(1.0, np.max(np.abs(force)))


# ------------------------------------------------------------------ bead scenes


def _bead_scene(bodies, springs, forces=(), gravity=(0.0, -9.81)):
    return System(
        parse_scene(
            {
                "format": "impactgui-scene",
                "version": 1,
                "gravity": list(gravity),
                "boundaries": [],
                "bodies": bodies,
                "springs": list(springs),
                "forces": list(forces),
            }
        )
    )


def _bead(name, x, rail_y=0.0, mass=1.0, vx=0.0):
    return {
        "id": name,
        "type": "bead",
        "rail_y": rail_y,
        "mass": mass,
        "radius": 0.05,
        "x": x,
        "vx": vx,
    }


MIXED = {
    "bodies": [
        _bead("a", 0.0, mass=1.5, vx=0.3),
        _bead("b", 0.4, mass=0.7),
        _bead("c", 1.0, rail_y=0.5, mass=2.0),
    ],
    "springs": [
        {"a": "a", "anchor": [-0.5, 0.0], "stiffness": 30.0, "rest_length": 0.3, "damping": 0.2},
        {"a": "b", "b": "a", "stiffness": 50.0, "rest_length": 0.25, "damping": 0.5},
        {"a": "c", "anchor": [2.0, 3.0], "stiffness": 20.0, "rest_length": 0.0, "damping": 0.1},
        {"a": "b", "b": "c", "stiffness": 10.0, "rest_length": 0.0, "damping": 0.0},
    ],
    "forces": [
        {"body": "b", "type": "harmonic", "amplitude": [3.0, 1.0], "omega": 5.0, "phase": 0.2},
        {"body": "c", "type": "harmonic", "amplitude": [-1.0, 0.0], "omega": 2.0, "phase": 0.0},
    ],
    "gravity": (0.4, -9.81),
}


def test_bead_model_reproduces_applied_force():
    system = _bead_scene(**MIXED)
    rng = np.random.default_rng(7)
    for _ in range(20):
        # keep the order of the rest-length springs' ends: a right of the anchor, b right of a
        xa = rng.uniform(-0.4, 0.5)
        q = np.array([xa, xa + rng.uniform(0.01, 1.0), rng.uniform(-3.0, 3.0)])
        v, t = rng.uniform(-2.0, 2.0, 3), rng.uniform(0.0, 10.0)
        model = linear_bead_model(system, q)
        force = model.f0 - model.K @ q - model.C @ v
        for a, w, p in model.harmonics:
            force = force + a * math.sin(w * t + p)
        np.testing.assert_allclose(force, system.applied_force(t, q, v), rtol=1e-13, atol=1e-12)
        assert np.all(model.separations(q) > 0)


def test_bead_model_follows_the_order_of_the_ends():
    system = _bead_scene(**MIXED)
    q = np.array([0.3, -0.2, 1.0])  # b left of a, a right of its anchor
    model = linear_bead_model(system, q)
    v = np.array([0.1, -0.4, 0.2])
    force = model.f0 - model.K @ q - model.C @ v
    for a, w, p in model.harmonics:
        force = force + a * math.sin(w + p)
    np.testing.assert_allclose(force, system.applied_force(1.0, q, v), rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(model.separations(q), [0.8, 0.5], rtol=1e-15)


def test_bead_model_flow_matches_dop853_on_the_scene_forces():
    system = _bead_scene(**MIXED)
    t_end = 2.0
    times = np.linspace(0.0, t_end, 21)

    def rhs(t, y):
        return np.concatenate((y[3:], system.applied_force(t, y[:3], y[3:]) / system.M_diag))

    ref = solve_ivp(
        rhs,
        (0.0, t_end),
        np.concatenate((system.q0, system.v0)),
        method="DOP853",
        rtol=1e-13,
        atol=1e-13,
        t_eval=times,
    )
    model = linear_bead_model(system, system.q0)
    phase = model.flow().start(0.0, system.q0, system.v0)
    q, _ = phase.state(times)
    assert np.all(model.separations(q) > 0)  # the ends kept their order: one linear phase
    np.testing.assert_allclose(phase(times), ref.y, rtol=0, atol=1e-11)


@pytest.mark.parametrize(
    ("springs", "q"),
    [
        ([{"a": "a", "anchor": [0.5, 0.1], "stiffness": 1.0, "rest_length": 0.2}], None),
        ([{"a": "a", "b": "c", "stiffness": 1.0, "rest_length": 0.2}], None),
        ([{"a": "a", "b": "b", "stiffness": 1.0, "rest_length": 0.2}], [0.5, 0.5, 1.0]),
        ([{"a": "a", "anchor": [0.0, 0.0], "stiffness": 1.0, "rest_length": 0.2}], None),
    ],
    ids=["anchor-off-rail", "other-rail", "ends-coincide", "on-anchor"],
)
def test_nonlinear_bead_scenes_are_refused(springs, q):
    system = _bead_scene([_bead("a", 0.0), _bead("b", 0.5), _bead("c", 1.0, rail_y=1.0)], springs)
    assert linear_bead_model(system, system.q0 if q is None else q) is None


def test_scenes_with_wheels_are_refused():
    wheel = {
        "id": "w",
        "type": "wheel",
        "mass": 1.0,
        "inertia": 0.01,
        "radius": 0.1,
        "position": [0.0, 1.0],
    }
    system = _bead_scene([_bead("a", 0.0), wheel], [])
    assert linear_bead_model(system, system.q0) is None


def test_springs_between_the_same_ends_share_one_separation_and_act_as_their_sum():
    """400 rest-length springs between two beads and 300 to one anchor: two separations.

    The model equals that of one spring per pair with the summed stiffness
    (k₁ + k₂ …) and the stiffness-weighted rest length, so both give the same
    K and f0 (to round-off).
    """
    bodies = [_bead("a", 0.0, vx=0.5), _bead("b", 0.6)]
    pair = {"a": "a", "b": "b", "stiffness": 2.0, "rest_length": 0.5}
    other_pair = {"a": "a", "b": "b", "stiffness": 1.0, "rest_length": 0.2}
    anchored = {"a": "b", "anchor": [1.5, 0.0], "stiffness": 3.0, "rest_length": 0.4}
    many = _bead_scene(bodies, [pair] * 200 + [other_pair] * 200 + [anchored] * 300)
    # one spring per pair: k = 200·2 + 200·1 = 600 N/m, k L0 = 200·2·0.5 + 200·1·0.2 = 240 N
    few = _bead_scene(
        bodies,
        [
            {"a": "a", "b": "b", "stiffness": 600.0, "rest_length": 240.0 / 600.0},
            {"a": "b", "anchor": [1.5, 0.0], "stiffness": 900.0, "rest_length": 0.4},
        ],
    )
    model_many = linear_bead_model(many, many.q0)
    model_few = linear_bead_model(few, few.q0)
    assert model_many.separation_rows.shape == (2, 2)
    np.testing.assert_array_equal(
        model_many.separation_rows.toarray(), model_few.separation_rows.toarray()
    )
    np.testing.assert_array_equal(model_many.separation_offsets, model_few.separation_offsets)
    np.testing.assert_allclose(model_many.K, model_few.K, rtol=1e-12)
    np.testing.assert_allclose(model_many.f0, model_few.f0, rtol=1e-12, atol=1e-12)


def test_a_feeble_spring_runs_without_a_warning(tmp_path):
    """Fuzz (issue 24, seed 2026, scene 146): a 1e-55 N/m spring made the balancing of the
    flow's generator print scipy's ``RuntimeWarning: invalid value encountered in cast`` on
    the command line's stderr (a scale factor of 1e27 cast to an unused permutation). The
    bead then moves as a free one: x = x0 + v0 t to rounding."""
    import io
    import json
    import warnings

    from solver.cli import main

    scene = {
        "format": "impactgui-scene", "version": 2, "gravity": [0.0, -9.81],
        "boundaries": [], "impulses": [], "forces": [],
        "bodies": [{"id": "m", "type": "bead", "rail_y": 0.0, "mass": 1.0, "radius": 0.05,
                    "x": 0.0, "vx": -1.0}],
        "springs": [{"a": "m", "anchor": [-0.5, 0.0], "stiffness": 1e-55, "rest_length": 0.5,
                     "damping": 0.0}],
        "solver": {"method": "event-driven", "t_end": 2.0, "dt_out": 0.5},
    }  # fmt: skip
    path = tmp_path / "feeble.json"
    path.write_text(json.dumps(scene), encoding="utf-8")
    stderr = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["run", str(path), "--out", str(tmp_path / "out")], stderr=stderr) == 0
    assert stderr.getvalue() == ""
    last = (tmp_path / "out" / "trajectory.csv").read_text().splitlines()[-1].split(",")
    assert float(last[0]) == 2.0
    assert float(last[2]) == pytest.approx(-2.0, abs=1e-12)
