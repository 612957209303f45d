"""An impact's ``post`` energy budget reuses its ``pre`` budget's position terms, to the bit.

:meth:`solver.output_frames.Recorder.energy_at` forms the kinetic energy
and the dissipation anew and takes the gravitational and spring (and
compliant) energies from the budget made at the same positions. Compared
here with :meth:`~solver.output_frames.Recorder.energy` at random states of
scenes with gravity, springs and compliant contacts, by their bytes.
"""

from __future__ import annotations

from dataclasses import astuple
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.scene import load_scene
from solver.simulation import make_stepper
from tests.test_settle_routes import bits

SCENES = Path(__file__).resolve().parents[1] / "resources" / "scenes"
finite = st.floats(-1e3, 1e3, allow_nan=False)


@pytest.mark.parametrize(
    "name", ["bouncing_ball", "chain_forced", "soft_floor_ball", "wheel_curb_e03"]
)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_the_post_budget_is_the_budget_at_its_velocities(name, data):
    stepper = make_stepper(load_scene(SCENES / f"{name}.json"), method="event-driven")
    recorder, n = stepper.recorder, stepper.setup.N
    vectors = st.lists(finite, min_size=n, max_size=n).map(np.array)
    q = stepper.motion.q + data.draw(vectors) * 1e-3
    v_minus, v_plus = data.draw(vectors), data.draw(vectors)
    work = np.array(data.draw(st.lists(finite, min_size=3, max_size=3)))
    before = recorder.energy(q, v_minus, work)
    stepper.motion.impact_loss += data.draw(finite)  # the impact's loss booked in between
    after = recorder.energy_at(before, v_plus, work)
    assert bits(astuple(after)) == bits(astuple(recorder.energy(q, v_plus, work)))
