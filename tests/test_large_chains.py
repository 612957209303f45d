"""10 000 and 100 000 beads on a rail, time-stepped: energy and momentum to round-off.

The beads come in pairs, bead 2k at x = 3k moving right and bead 2k+1 at
x = 3k + 1.2 moving left (radius 0.5 m, unit masses, e = 1): every pair
closes its 0.2 m gap at t = 0.1 s and, alone in its collision, swaps the
two speeds (Newton's law for equal masses), while the pairs stay 0.8 m
apart until t = 0.4 s. So at t = 0.2 s every speed is reversed exactly, the
kinetic energy is N/2 J and the momentum 0, and no energy was dissipated —
all to round-off.
The runs go through the whole large-N path: System build, candidate search,
contact kinematics on arrays, N/2 contacts solved at once (exactly on the
banded, here diagonal, Delassus matrix, or by Gauss–Seidel).
"""

from __future__ import annotations

import numpy as np
import pytest

from solver.record import Trajectory
from solver.system import System
from solver.timestepping import TimeSteppingStepper
from tests.scene_data import bead_row

GAP = 0.2
"""Initial gap inside a pair (m)."""
STEP = 0.01
"""Time step (s)."""
T_END = 0.2
EPS = float(np.finfo(float).eps)
"""End of the run (s): after every pair's collision (0.1 s), before the next (0.4 s)."""


def paired_chain(n: int) -> System:
    """The paired chain of ``n`` beads: each pair closing its gap ``GAP`` at 2 m/s."""
    xs = [3.0 * (k // 2) + (1.0 + GAP) * (k % 2) for k in range(n)]
    vxs = [1.0 if k % 2 == 0 else -1.0 for k in range(n)]
    return System(bead_row(xs, vxs, {"restitution": 1.0, "friction": 0.0}))


@pytest.mark.parametrize(
    ("n", "contact_solver"),
    [
        (10_000, "auto"),
        (10_000, "pgs"),
        pytest.param(100_000, "auto", marks=pytest.mark.slow),
    ],
)
def test_colliding_pairs_keep_energy_and_momentum_to_round_off(n, contact_solver):
    system = paired_chain(n)
    stepper = TimeSteppingStepper(
        system, t_end=T_END, dt_out=T_END / 2, h=STEP, contact_solver=contact_solver
    )
    trajectory = Trajectory(system)

    while stepper.status == "running":
        trajectory.append(stepper.step())

    first, last = trajectory.frames[0], trajectory.frames[-1]
    impacts = [e for e in trajectory.events if e.type == "impact"]
    assert stepper.status == "finished" and last.t == T_END
    assert len(impacts) == n // 2
    assert all(e.normal_impulse == pytest.approx(2.0, rel=1e-12) for e in impacts)
    np.testing.assert_allclose(last.v, -system.v0, rtol=0.0, atol=4 * EPS)
    assert first.energy.kinetic == n / 2
    assert last.energy.kinetic == pytest.approx(n / 2, rel=8 * EPS)
    assert last.energy.dissipated == pytest.approx(0.0, abs=8 * EPS * n)
    assert abs(float(np.sum(system.M_diag * last.v))) <= 4 * EPS * n
    # positions to first order in the step: the pair met at t = 0.1 s and bounced back;
    # the step sees the contact closed at its mid-point, one step's travel late at most
    exact = system.q0 + (0.1 - (T_END - 0.1)) * system.v0
    assert np.max(np.abs(last.q - exact)) <= 1.5 * STEP
    assert "M" not in vars(system)  # the dense N×N mass matrix was never built
