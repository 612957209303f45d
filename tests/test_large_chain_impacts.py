"""10 000 and 100 000 touching beads struck at one end, event-driven: energy and momentum.

A chain of touching unit beads (radius 0.5 m) on one rail, the first moving
at 1 m/s into the rest, e = 1, the ``sequential`` law: each collision is
Newton's law between two equal masses, which swap their speeds, so the
strike runs down the chain bead by bead and leaves the last bead moving at
1 m/s and every other at rest (Newton's cradle). Kinetic energy 1/2 J and
momentum 1 kg·m/s are kept, nothing is dissipated, and after 1 s the last
bead is 1 m further on — all to round-off. The run goes through the whole
large-N path of the event-driven engine: System build, candidate search,
one impact of n − 1 closed contacts (n − 1 collisions on a sparse Delassus
matrix), n − 1 impact events, the resting contacts' problem, one flight.
"""

from __future__ import annotations

import numpy as np
import pytest

from solver.record import Trajectory
from solver.simulation import make_stepper
from solver.system import System
from tests.scene_data import bead_row

EPS = float(np.finfo(float).eps)
T_END = 1.0
"""End of the run (s)."""


def touching_chain(n: int) -> System:
    """``n`` touching unit beads of radius 0.5 m at x = 0, 1, 2, …, the first at 1 m/s."""
    contact = {"restitution": 1.0, "friction": 0.0, "impact_law": "sequential"}
    return System(bead_row(range(n), [1.0] + [0.0] * (n - 1), contact))


@pytest.mark.parametrize("n", [10_000, pytest.param(100_000, marks=pytest.mark.slow)])
def test_struck_chain_passes_the_strike_to_its_last_bead_keeping_energy_and_momentum(n):
    system = touching_chain(n)
    stepper = make_stepper(system, t_end=T_END, dt_out=T_END, method="event-driven")
    trajectory = Trajectory(system)

    while stepper.status == "running":
        trajectory.append(stepper.step())

    assert stepper.status == "finished", stepper.message
    last = trajectory.frames[-1]
    impacts = [e for e in trajectory.events if e.type == "impact"]
    assert last.t == T_END
    assert len(impacts) == n - 1
    assert all(e.normal_impulse == pytest.approx(1.0, rel=4 * EPS) for e in impacts)
    expected_v = np.zeros(n)
    expected_v[-1] = 1.0
    np.testing.assert_allclose(last.v, expected_v, rtol=0.0, atol=4 * EPS)
    momentum = float(np.sum(system.M_diag * last.v))
    assert momentum == pytest.approx(1.0, rel=4 * EPS)
    assert last.energy.kinetic == pytest.approx(0.5, rel=4 * EPS)
    assert last.energy.dissipated == pytest.approx(0.0, abs=4 * EPS)
    expected_q = system.q0.copy()
    expected_q[-1] += T_END
    np.testing.assert_allclose(last.q, expected_q, rtol=4 * EPS, atol=0.0)
    assert "M" not in vars(system)  # the dense N×N mass matrix was never built
