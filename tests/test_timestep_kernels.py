"""The compiled time-stepping loop against its reference, the stepper's numpy path."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver import timestep_kernels, timestepping
from solver.complementarity import lemke
from solver.errors import SolverError
from solver.record import Trajectory
from solver.scene import parse_scene
from solver.system import System
from solver.timestepping import TimeSteppingStepper

KERNELS = [pytest.param(timestep_kernels.quiet_steps, id="plain-python")]
if timestep_kernels.COMPILED:
    KERNELS.append(pytest.param("compiled", id="numba"))


def run(stepper) -> Trajectory:
    trajectory = Trajectory(stepper.system)
    while stepper.status == "running":
        trajectory.append(stepper.step())
    trajectory.status, trajectory.message = stepper.status, stepper.message
    return trajectory


@st.composite
def frictional_lcps(draw):
    """The LCP of a step's closed contacts with the 2-edge friction cone (random data)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(1, 3))
    N = draw(st.integers(n, 2 * n + 1))
    m_inv = rng.uniform(0.5, 2.0, N)
    G, H = rng.normal(size=(N, n)), rng.normal(size=(N, n))
    mu = rng.uniform(0.0, 1.0, n)
    y = rng.normal(size=N)
    B = np.hstack([G, H, -H])
    A = B.T @ (m_inv[:, None] * B)
    size = 4 * n
    M = np.zeros((size, size))
    M[: 3 * n, : 3 * n] = A
    eye = np.eye(n)
    M[n : 2 * n, 3 * n :] = eye
    M[2 * n : 3 * n, 3 * n :] = eye
    M[3 * n :, n : 2 * n] = -eye
    M[3 * n :, 2 * n : 3 * n] = -eye
    M[3 * n :, :n] = np.diag(mu)
    u_t = H.T @ y
    return M, np.concatenate([G.T @ y, u_t, -u_t, np.zeros(n)])


@st.composite
def p_matrix_lcps(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(1, 8))
    A = rng.normal(size=(n, n))
    return A @ A.T + 0.1 * np.eye(n) + (A - A.T), rng.normal(size=n)


@functools.cache
def lemke_kernels():
    """The transcription as the compiled loop runs it (inlined there), in Python and compiled."""
    kernels = [timestep_kernels.lemke_solve]
    if timestep_kernels.COMPILED:
        import numba

        kernels.append(numba.njit(cache=True)(timestep_kernels.lemke_solve))
    return kernels


@settings(max_examples=300)
@given(st.one_of(frictional_lcps(), p_matrix_lcps()))
def test_lemke_transcription_gives_the_reference_answer(problem):
    M, q = problem
    try:
        reference = lemke(M, q)
        expected = {"solved": 0, "ray_termination": 1, "iteration_limit": 1}[reference.status]
    except SolverError:
        reference, expected = None, 2
    for kernel in lemke_kernels():
        z = np.zeros(len(q))

        outcome = kernel(M, q, z)

        assert outcome == expected
        if reference is not None and expected == 0:
            scale = max(1.0, float(np.max(np.abs(reference.z))))
            np.testing.assert_allclose(z, reference.z, rtol=0, atol=1e-10 * scale)


@st.composite
def small_scenes(draw):
    """One or two wheels (or beads on a rail) over a valley of segments, corners and an arc."""
    floats = st.floats
    e = draw(floats(0.0, 1.0))
    mu = draw(st.sampled_from([0.0, 0.2, 0.6, 1.0]))
    left, right = draw(floats(0.1, 0.8)), draw(floats(0.1, 0.8))
    step = draw(floats(0.02, 0.1))
    boundaries = [
        {"id": "valley", "type": "polyline",
         "points": [[-1.0, left], [-0.4, step], [-0.4, 0.0], [0.5, 0.0], [1.0, right]]},
    ]  # fmt: skip
    if draw(st.booleans()):
        boundaries.append(
            {"id": "bump", "type": "arc", "center": [draw(floats(-0.3, 0.4)), -0.1],
             "radius": 0.15, "start_deg": 0, "end_deg": 180}
        )  # fmt: skip
    bodies = []
    if draw(st.booleans()):
        x = draw(floats(-0.3, 0.0))
        for k in range(draw(st.integers(1, 2))):
            x += k * draw(floats(0.22, 0.4))
            bodies.append(
                {"id": f"w{k}", "type": "wheel", "mass": draw(floats(0.5, 5.0)),
                 "inertia": draw(floats(0.005, 0.05)), "radius": 0.1,
                 "position": [x, draw(floats(0.35, 0.6))],
                 "velocity": [draw(floats(-3.0, 3.0)), draw(floats(-3.0, 1.0))],
                 "angular_velocity": draw(floats(-20.0, 20.0))}
            )  # fmt: skip
    else:
        boundaries.append({"id": "stop", "type": "segment", "a": [0.8, -1.0], "b": [0.8, 1.0]})
        for k in range(3):
            bodies.append(
                {"id": f"b{k}", "type": "bead", "rail_y": 0.5, "mass": draw(floats(0.5, 2.0)),
                 "radius": 0.1, "x": -0.5 + 0.3 * k, "vx": draw(floats(-3.0, 3.0))}
            )  # fmt: skip
    gravity = [draw(floats(-3.0, 3.0)), -9.81]
    return parse_scene(
        {"format": "impactgui-scene", "version": 1, "gravity": gravity,
         "contact": {"restitution": e, "friction": mu}, "boundaries": boundaries,
         "bodies": bodies}
    )  # fmt: skip


TIME_TOL = 1e-8
"""Agreement of frame and event times (s) between the loop and the numpy path."""


MICRO = 1e-6
"""Impulses and forces below this share of a run's largest are not compared one by one."""


def _micro_impulse(reference: Trajectory) -> float:
    """The impulse below which an impact of either run is micro: ``MICRO`` × the largest, N·s."""
    impacts = [e.normal_impulse for e in reference.events if e.type == "impact"]
    return MICRO * max(impacts, default=0.0)


def _visible(trajectory: Trajectory, other: Trajectory, micro: float) -> tuple[list, list]:
    """The frames and events of a run without its micro impacts and micro contacts.

    Beads of a chain that move together after the Moreau LCP has spread a
    strike over the chain touch again at speeds of 1e-8 m/s: which of those
    contacts press (1e-8 N·s), and so whether a step has impacts at all,
    depends on the last bits of the pivoting, in the loop as in the numpy
    path, while the states agree to round-off (compared on every frame).

    An impact is kept when it or its counterpart in ``other`` (the same
    pair and type at the same time) is above ``micro``: an impulse on the
    threshold itself (with e = 0.001 the second bounce is 1e-6 of the first)
    is kept or dropped in both runs alike.
    """

    def key(event) -> tuple:
        return (event.type, event.body, event.other)

    loud = [(key(e), e.t) for e in other.events if e.type == "impact" and e.normal_impulse > micro]

    def shown(event) -> bool:
        if event.type != "impact" or event.normal_impulse > micro:
            return True
        return any(k == key(event) and abs(t - event.t) <= TIME_TOL for k, t in loud)

    events = [e for e in trajectory.events if shown(e)]
    kept = {e.t for e in events if e.type == "impact"}
    frames = [f for f in trajectory.frames if f.kind == "sample" or f.t in kept]
    return frames, events


def assert_same_trajectory(reference: Trajectory, kernel: Trajectory) -> None:
    """Same frames, events and contacts; numbers equal to round-off.

    Times of impacts are closing instants found by Newton's method from
    gaps equal to round-off (a few 1e-15 m on positions of 20 m) divided by
    closing speeds down to 1e-6 m/s: equal to ``TIME_TOL``. Micro impacts
    and contacts (``MICRO``, see :func:`_visible`) are left out of the
    one-by-one comparison.
    """
    assert (kernel.status, kernel.message) == (reference.status, reference.message)
    scale = 1.0 + max(float(np.max(np.abs(f.v))) for f in reference.frames)
    samples = [[f for f in run.frames if f.kind == "sample"] for run in (reference, kernel)]
    for a, b in zip(*samples, strict=True):
        assert b.t == pytest.approx(a.t, abs=TIME_TOL)
        np.testing.assert_allclose(b.q, a.q, rtol=0, atol=1e-10 * scale)
        np.testing.assert_allclose(b.v, a.v, rtol=0, atol=1e-9 * scale)
        assert b.energy.dissipated == pytest.approx(a.energy.dissipated, rel=1e-9, abs=1e-9)
    micro = _micro_impulse(reference)
    frames_a, events_a = _visible(reference, kernel, micro)
    frames_b, events_b = _visible(kernel, reference, micro)
    assert [f.kind for f in frames_b] == [f.kind for f in frames_a]
    np.testing.assert_allclose(
        [f.t for f in frames_b], [f.t for f in frames_a], rtol=0, atol=TIME_TOL
    )
    largest = max((c.lam for f in frames_a for c in f.contacts), default=0.0)
    for a, b in zip(frames_a, frames_b, strict=True):
        np.testing.assert_allclose(b.q, a.q, rtol=0, atol=1e-10 * scale)
        np.testing.assert_allclose(b.v, a.v, rtol=0, atol=1e-9 * scale)
        pressing_a = [c for c in a.contacts if c.lam > MICRO * largest]
        pressing_b = [c for c in b.contacts if c.lam > MICRO * largest]
        assert [(c.body, c.other, c.mode) for c in pressing_b] == [
            (c.body, c.other, c.mode) for c in pressing_a
        ]
        for c, d in zip(pressing_a, pressing_b, strict=True):
            assert d.lam == pytest.approx(c.lam, rel=1e-8, abs=1e-8)
            assert d.point == pytest.approx(c.point, abs=1e-12)
    assert [(e.type, e.body, e.other) for e in events_b] == [
        (e.type, e.body, e.other) for e in events_a
    ]
    np.testing.assert_allclose(
        [e.t for e in events_b], [e.t for e in events_a], rtol=0, atol=TIME_TOL
    )
    for a, b in zip(events_a, events_b, strict=True):
        if a.type == "impact":
            assert b.normal_impulse == pytest.approx(a.normal_impulse, rel=1e-8, abs=1e-12)
            assert b.energy_change == pytest.approx(a.energy_change, rel=1e-8, abs=1e-12)


def kernel_run(monkeypatch, system, kernel, **arguments) -> Trajectory:
    monkeypatch.setattr(timestepping, "USE_KERNEL", True)
    if kernel != "compiled":
        monkeypatch.setattr(timestep_kernels, "compiled_quiet_steps", lambda: kernel)
    stepper = TimeSteppingStepper(system, **arguments)
    assert stepper._kernel_scene is not None
    return run(stepper)


@pytest.mark.parametrize("kernel", KERNELS)
@settings(max_examples=150)
@given(scene=small_scenes(), theta=st.sampled_from([0.5, 1.0]))
def test_quiet_steps_follow_the_numpy_path_to_round_off(kernel, scene, theta):
    system = System(scene)
    arguments = {"t_end": 0.12, "dt_out": 0.02, "h": 2e-3, "theta": theta}
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(timestepping, "USE_KERNEL", False)
        reference = run(TimeSteppingStepper(system, **arguments))
    with pytest.MonkeyPatch.context() as monkeypatch:
        kernel_trajectory = kernel_run(monkeypatch, system, kernel, **arguments)

    assert_same_trajectory(reference, kernel_trajectory)


def test_disk_scenes_with_constant_forces_go_to_the_loop():
    wheel = {"id": "w", "type": "wheel", "mass": 1.0, "inertia": 0.01, "radius": 0.1,
             "position": [0.0, 0.5]}  # fmt: skip
    floor = {"id": "floor", "type": "segment", "a": [-1, 0], "b": [1, 0]}
    spring = {"a": "w", "anchor": [0.0, 1.0], "stiffness": 10.0, "rest_length": 0.2}

    def scene(**parts):
        return System(parse_scene({"format": "impactgui-scene", "version": 1, **parts}))

    assert timestep_kernels.kernel_scene(scene(bodies=[wheel], boundaries=[floor])).all_pairs
    assert timestep_kernels.kernel_scene(scene(bodies=[wheel], springs=[spring])) is None
    many = [
        {**wheel, "id": f"w{k}", "position": [0.3 * k, 0.5]}
        for k in range(12)  # 66 disk pairs: the stepper's candidates instead
    ]
    assert not timestep_kernels.kernel_scene(scene(bodies=many)).all_pairs


@st.composite
def chains(draw):
    """A row of beads on a rail, some touching, one end struck, between two stops."""
    n = draw(st.integers(9, 30))
    gaps = [draw(st.sampled_from([0.0, 0.0, 0.0, 1e-3, 0.05])) for _ in range(n)]
    x = np.cumsum([0.5] + [1.0 + gap for gap in gaps[1:]])
    bodies = [
        {"id": f"b{k}", "type": "bead", "rail_y": 0.0, "mass": draw(st.floats(0.5, 2.0)),
         "radius": 0.5, "x": float(x[k]), "vx": draw(st.floats(-0.2, 0.2))}
        for k in range(n)
    ]  # fmt: skip
    bodies[0]["vx"] = draw(st.floats(0.5, 3.0))
    stops = [
        {"id": "left", "type": "segment", "a": [-0.5, -1.0], "b": [-0.5, 1.0]},
        {"id": "right", "type": "segment", "a": [x[-1] + 0.6, -1.0], "b": [x[-1] + 0.6, 1.0]},
    ]
    return parse_scene(
        {"format": "impactgui-scene", "version": 1, "gravity": [0.0, 0.0],
         "contact": {"restitution": draw(st.floats(0.0, 1.0)), "friction": 0.0},
         "boundaries": stops, "bodies": bodies}
    )  # fmt: skip


@pytest.mark.parametrize("kernel", KERNELS)
@settings(max_examples=60)
@given(scene=chains())
def test_chains_in_the_loop_follow_the_numpy_path_to_round_off(kernel, scene):
    # more than EXACT_CONTACTS frictionless contacts: the banded solve of solver.chain_lcp
    system = System(scene)
    arguments = {"t_end": 0.3, "dt_out": 0.05, "h": 1e-2}
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(timestepping, "USE_KERNEL", False)
        reference = run(TimeSteppingStepper(system, **arguments))
    with pytest.MonkeyPatch.context() as monkeypatch:
        kernel_trajectory = kernel_run(monkeypatch, system, kernel, **arguments)

    assert_same_trajectory(reference, kernel_trajectory)
