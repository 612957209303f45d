"""One active contact with a fixed mode, as a function of the state (solver.fixed_mode).

The reference is the general route the stepper took before: the pair
evaluated in full (:meth:`solver.contact_pairs.DiskKinematics.evaluate`) and
its forces solved by :func:`solver.contact.solve_with_modes`. Both sum their
dot products in another order, so they agree to rounding: ``ε·cond`` of the
contact's Delassus block. A run of paper 004's wheel with and without the
closed form has the same events and end state to rounding.
"""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from solver.contact import solve_with_modes
from solver.contact_pairs import DiskKinematics
from solver.fixed_mode import OneContactReaction
from solver.flight import SmoothMotion
from solver.scene import load_scene
from solver.simulation import make_stepper
from solver.system import System
from tests.scene_data import gravity_scene

SCENES = Path(__file__).resolve().parents[1] / "resources" / "scenes"

WHEEL = {"type": "wheel", "mass": 2.0, "inertia": 0.01, "radius": 0.1, "angle": 0.0}
SCENE = gravity_scene(
    [
        {**WHEEL, "id": "w1", "position": [0.5, 0.3], "velocity": [0.0, 0.0]},
        {**WHEEL, "id": "w2", "position": [1.5, 0.3], "velocity": [0.0, 0.0], "mass": 5.0},
        {"id": "b1", "type": "bead", "rail_y": 0.4, "mass": 3.0, "radius": 0.15, "x": 2.5,
         "vx": 0.0},
    ],
    [
        {"id": "curb", "type": "polyline", "points": [[0.0, 0.6], [0.0, 0.05], [0.4, 0.05],
                                                        [0.4, 0.0], [3.0, 0.0]]},
        {"id": "bowl", "type": "arc", "center": [1.5, 1.0], "radius": 0.8, "start_deg": 200.0,
         "end_deg": 340.0},
        {"id": "ramp", "type": "segment", "a": [2.0, 1.2], "b": [3.0, 0.7]},
    ],
    friction=0.4,
)  # fmt: skip
SYSTEM = System(SCENE)
KIN = DiskKinematics(SYSTEM)
PAIRS = KIN.candidates(SYSTEM.q0, 100.0, np.arange(SYSTEM.n_disks))
M_INV = 1.0 / np.asarray(SYSTEM.M_diag, dtype=float)


@st.composite
def states(draw):
    """A pair of the scene, a mode, and a state anywhere near the scene (m, m/s, rad/s)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    q = np.array(SYSTEM.q0, dtype=float)
    v = rng.normal(scale=3.0, size=SYSTEM.N)
    q += rng.uniform(-1.0, 1.0, size=SYSTEM.N)
    pair = draw(st.sampled_from(PAIRS))
    mode = draw(st.sampled_from(("stick", "slip+", "slip-")))
    return pair, mode, q, v


def general_route(drawn):
    """The drawn state's contact, the general route's answer and its Delassus condition number."""
    pair, mode, q, v = drawn
    f = SYSTEM.applied_force(0.0, q, v)
    contact = KIN.evaluate(pair, q, v)
    general = solve_with_modes([contact], [mode], M_INV, f)
    rows = np.array([contact.G, contact.H] if mode == "stick" else [contact.G])
    condition = float(np.linalg.cond(rows @ (M_INV[:, None] * rows.T)))
    return f, contact, general, condition


@given(states())
def test_forces_equal_the_general_route(drawn):
    pair, mode, q, v = drawn
    f, contact, general, condition = general_route(drawn)
    one = OneContactReaction(SYSTEM, pair, mode, M_INV).forces(q, v, f * M_INV)
    if one is None:  # a singular system (a bead sticking on a wall): the general route answers
        assert condition > 1e11
        return
    assume(condition < 1e10)
    tol = 1e-14 * max(condition, 1e3)
    scale = 1.0 + float(np.max(np.abs(general.qdd)))
    np.testing.assert_allclose(one.qdd, general.qdd, rtol=0.0, atol=tol * scale)
    force = 1.0 + abs(float(general.lam[0]))
    assert abs(one.lam - general.lam[0]) <= tol * force
    assert abs(one.friction_force - general.friction_force[0]) <= tol * force
    speed = 1.0 + float(np.max(np.abs(v)))
    assert abs(one.u_t - contact.u_t) <= 1e-14 * speed


@given(states())
def test_contact_state_equals_the_general_route(drawn):
    """What an output frame reports: λ, τ, mode, speeds, point and normal."""
    pair, mode, q, v = drawn
    f, contact, general, condition = general_route(drawn)
    state = OneContactReaction(SYSTEM, pair, mode, M_INV).contact_state(q, v, f * M_INV)
    if state is None:
        assert condition > 1e11
        return
    assume(condition < 1e10)
    tol = 1e-14 * max(condition, 1e3)
    assert abs(state.lam - general.lam[0]) <= tol * (1.0 + abs(float(general.lam[0])))
    scale = 1.0 + float(np.max(np.abs(general.qdd)))
    if abs(general.a_t[0]) > 1e-6 * scale or mode != "stick":  # away from the mode's threshold
        assert state.mode == general.modes[0]
        assert abs(state.tau - general.tau[0]) <= 1e-9
    speed = 1.0 + float(np.max(np.abs(v)))
    assert abs(state.u_n - contact.u_n) <= 1e-14 * speed
    assert abs(state.u_t - contact.u_t) <= 1e-14 * speed
    np.testing.assert_allclose(state.point, contact.point, rtol=0.0, atol=1e-14)
    np.testing.assert_allclose(state.normal, contact.n, rtol=0.0, atol=1e-15)
    assert (state.body, state.other, state.friction) == (pair.body, pair.other, pair.friction)


@given(states())
def test_inside_is_the_region_test_of_the_evaluation(drawn):
    pair, mode, q, v = drawn
    reaction = OneContactReaction(SYSTEM, pair, mode, M_INV)
    assert reaction.inside(q) == KIN.evaluate(pair, q, v).inside


def test_the_kinds_of_pair_are_all_drawn():
    """The scene holds every kind: corners, segments, an arc, wheel–wheel, wheel–bead."""
    kinds = {type(pair.feature).__name__ if pair.j < 0 else "disk" for pair in PAIRS}
    assert kinds == {"Vertex", "Segment", "Arc", "disk"}
    assert any(pair.j >= 0 and SYSTEM.disk_dofs.iy[pair.j] < 0 for pair in PAIRS)


def test_a_disk_on_the_corner_itself_has_no_answer():
    """No normal: the general route answers (and reports the failure)."""
    vertex = next(p for p in PAIRS if p.other == "curb#v2" and p.body == "w1")
    q = np.array(SYSTEM.q0, dtype=float)
    q[:2] = vertex.feature.p
    reaction = OneContactReaction(SYSTEM, vertex, "stick", M_INV)
    assert reaction.forces(q, np.zeros(SYSTEM.N), M_INV * SYSTEM.applied_force(0.0, q, q)) is None


def run(scene_file: str, closed_form: bool, monkeypatch: pytest.MonkeyPatch):
    """Events and last frame of a bundled scene, with or without the fixed-mode closed form."""
    with monkeypatch.context() as patch:
        if not closed_form:
            patch.setattr(SmoothMotion, "fixed_mode", lambda self: None)
        stepper = make_stepper(load_scene(SCENES / scene_file), t_end=1.0, dt_out=0.01)
        events, frames = [], []
        while stepper.status == "running":
            out = stepper.step()
            events += out.events
            frames += out.frames
    assert stepper.status == "finished"
    return events, frames


@pytest.mark.parametrize("scene_file", ["wheel_curb_e03.json", "wheel_curb_e0.json"])
def test_a_run_equals_the_general_route(scene_file, monkeypatch):
    """Paper 004's wheel rolls and slides over the curb's corner: the same run to rounding.

    The frames' contact states included (those of the corner phases come from the closed form).
    """
    events, frames = run(scene_file, True, monkeypatch)
    general_events, general_frames = run(scene_file, False, monkeypatch)
    assert [(e.type, e.other) for e in events] == [(e.type, e.other) for e in general_events]
    np.testing.assert_allclose(
        [e.t for e in events], [e.t for e in general_events], rtol=0.0, atol=1e-12
    )
    assert len(frames) == len(general_frames)
    for frame, general in zip(frames, general_frames, strict=True):
        np.testing.assert_allclose(frame.q, general.q, rtol=0.0, atol=1e-11)
        np.testing.assert_allclose(frame.v, general.v, rtol=0.0, atol=1e-10)
        assert [(c.other, c.mode) for c in frame.contacts] == [
            (c.other, c.mode) for c in general.contacts
        ]
        for contact, other in zip(frame.contacts, general.contacts, strict=True):
            assert abs(contact.lam - other.lam) <= 1e-10 * (1.0 + abs(other.lam))
            assert abs(contact.tau - other.tau) <= 1e-10
            np.testing.assert_allclose(
                (contact.u_n, contact.u_t, *contact.point, *contact.normal),
                (other.u_n, other.u_t, *other.point, *other.normal),
                rtol=0.0,
                atol=1e-10,
            )
