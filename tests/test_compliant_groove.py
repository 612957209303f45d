"""A wheel spinning in a V-groove of two soft faces: two rubbing compliant pairs on one body.

The faces rise at ±α from the groove's bottom, with normals ``n₁ = (sin α, cos α)``
(left face) and ``n₂ = (−sin α, cos α)``. A wheel (m, r, I = m r²/2) spinning at
ω₀ > 0 with its centre at rest slips on both: the friction on face i is
``μ N_i (ẑ × n_i)`` (it opposes the contact point's velocity ``−rω ẑ × n_i``), and
its moment about the centre ``−r μ N_i``. The centre stays at rest if

    N₁ n₁ + N₂ n₂ + μ N₁ ẑ×n₁ + μ N₂ ẑ×n₂ = (0, m g),

two linear equations for the normal forces (solved here): the friction on the
left face lifts the wheel, that on the right face pushes it down, so N₁ ≠ N₂.
Started at the overlaps ``δ_i = N_i / k`` of these forces the wheel stays there
and ω falls linearly, ``I ω̇ = −r μ (N₁ + N₂)``, until it stops at
``t* = I ω₀ / (r μ (N₁ + N₂))``.

The two pairs share the wheel, so their tangential impulses are coupled
(``J M⁻¹ Jᵀ`` is not diagonal): the time-stepper solves them together.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.scene import parse_scene
from solver.simulation import simulate

G, M, R, K, C = 9.81, 1.0, 0.1, 1e5, 30.0
I_DISK = 0.5 * M * R * R


def statics(alpha: float, mu: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normal forces N (2,), the faces' normals n (2, 2) and the centre (m) at the overlaps N/k."""
    n = np.array([[math.sin(alpha), math.cos(alpha)], [-math.sin(alpha), math.cos(alpha)]])
    z_cross_n = np.column_stack((-n[:, 1], n[:, 0]))
    A = (n + mu * z_cross_n).T  # columns: what N_i = 1 pushes
    N = np.linalg.solve(A, np.array([0.0, M * G]))
    # the faces pass through the origin: n_i · c = r − δ_i
    centre = np.linalg.solve(n, R - N / K)
    return N, n, centre


def groove_scene(alpha: float, mu: float, omega0: float, t_end: float, h: float):
    _, _, centre = statics(alpha, mu)
    reach = 1.0
    face = {
        "type": "segment",
        "friction": mu,
        "compliance": {"stiffness": K, "damping": C, "exponent": 1},
    }
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 2,
            "gravity": [0.0, -G],
            "boundaries": [
                face
                | {
                    "id": "left",
                    "a": [-reach * math.cos(alpha), reach * math.sin(alpha)],
                    "b": [0.0, 0.0],
                },
                face
                | {
                    "id": "right",
                    "a": [0.0, 0.0],
                    "b": [reach * math.cos(alpha), reach * math.sin(alpha)],
                },
            ],
            "bodies": [
                {
                    "id": "w",
                    "type": "wheel",
                    "mass": M,
                    "inertia": I_DISK,
                    "radius": R,
                    "position": centre.tolist(),
                    "velocity": [0.0, 0.0],
                    "angular_velocity": omega0,
                }
            ],
            "solver": {"t_end": t_end, "dt_out": t_end / 20, "method": "time-stepping", "dt": h},
        }
    )


def check(alpha: float, mu: float, omega0: float, h: float = 5e-4) -> None:
    N, _, centre = statics(alpha, mu)
    t_stop = I_DISK * omega0 / (R * mu * N.sum())
    t_end = min(0.9 * t_stop, 0.5)
    run = simulate(groove_scene(alpha, mu, omega0, t_end, h), method="time-stepping")
    assert run.status == "finished", run.message
    assert len(run.frames) > 10
    for f in run.frames:
        assert f.q[:2] == pytest.approx(centre, abs=1e-12)  # the centre stays
        assert f.v[:2] == pytest.approx([0.0, 0.0], abs=1e-10)
        assert f.v[2] == pytest.approx(omega0 - R * mu * N.sum() * f.t / I_DISK, abs=1e-9)
        forces = {c.other: c for c in f.contacts}
        assert sorted(forces) == ["left", "right"]
        for face, normal in zip(("left", "right"), N, strict=True):
            assert forces[face].lam == pytest.approx(normal, rel=1e-9)
            if f.t > 0.0:  # a step's mean friction, against the spin
                assert forces[face].tau == pytest.approx(-mu * normal, rel=1e-9)
    assert run.frames[-1].t == pytest.approx(t_end)


def test_a_wheel_spinning_in_a_soft_groove_slows_with_both_faces_friction():
    check(alpha=math.radians(40.0), mu=0.3, omega0=20.0)


@settings(max_examples=8, deadline=None)
@given(
    alpha=st.floats(math.radians(20.0), math.radians(70.0)),
    mu=st.floats(0.05, 0.5),
    omega0=st.floats(2.0, 30.0),
)
def test_every_groove_shares_the_load_as_statics_says(alpha, mu, omega0):
    check(alpha, mu, omega0)


def test_the_event_driven_run_keeps_the_same_statics():
    """The event-driven phases (both pairs slipping, their friction −μF s) agree."""
    alpha, mu, omega0 = math.radians(40.0), 0.3, 20.0
    N, _, centre = statics(alpha, mu)
    run = simulate(groove_scene(alpha, mu, omega0, 0.05, 1e-4), method="event-driven")
    assert run.status == "finished", run.message
    assert [e.type for e in run.events] == []
    for f in run.frames:
        assert f.q[:2] == pytest.approx(centre, abs=1e-12)
        assert f.v[2] == pytest.approx(omega0 - R * mu * N.sum() * f.t / I_DISK, abs=1e-9)
        lam = {c.other: (c.lam, c.tau) for c in f.contacts}
        for face, normal in zip(("left", "right"), N, strict=True):
            assert lam[face][0] == pytest.approx(normal, rel=1e-9)
            assert lam[face][1] == pytest.approx(-mu * normal, rel=1e-9)
