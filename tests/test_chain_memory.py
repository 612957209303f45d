"""Issue 21 item 4: a spring chain's gap rows and gap screening take O(N) memory.

A chain of N beads watches about N gaps (each pair of neighbours), each
reading two coordinates. Kept dense, their rows were K × N numbers per
combination of sides (at 1000 beads 91 MiB of the run's 322 MiB peak), and
the modal flow kept ``|Φ|`` beside ``Φ``. Measured here as a property, not a
time: with the chain's flow made (its N × N modal matrix is the one
quadratic array a modal flow needs, for the full state), the memory a
stretch of motion allocates on top grows at most like N: doubling the
beads at most about doubles the peak.
"""

from __future__ import annotations

import tracemalloc

from solver.modal_flow import ModalFlow
from solver.record import Trajectory
from solver.scene import parse_scene
from solver.simulation import drive, make_stepper
from tests.scene_data import forced_spring_chain


def _peak_after_set_up(beads: int) -> tuple[int, int]:
    """Peak bytes allocated by 0.3 s of a forced chain once its flow is made, and its N."""
    stepper = make_stepper(parse_scene(forced_spring_chain(beads, t_end=0.3, dt_out=0.1)))
    assert stepper.smooth.linear_motion() is not None  # the flow made, its Φ kept
    assert any(isinstance(f, ModalFlow) for f in stepper.smooth._flows.values())
    trajectory = Trajectory(stepper.system)
    tracemalloc.start()
    try:
        drive(stepper, trajectory)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert stepper.status == "finished"
    return peak, stepper.system.N


def test_twice_the_beads_at_most_about_twice_the_memory_of_the_gap_scan():
    small, n_small = _peak_after_set_up(300)
    large, n_large = _peak_after_set_up(600)
    assert n_large == 2 * n_small
    # quadratic parts tend to 4x; O(N) ones (the sub-points' states) are 2x, a constant less
    assert large <= 2.0 * small, (small, large)  # 2.22 with the dense rows and |Φ|
