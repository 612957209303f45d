"""The float routes of a Zeno end: the same bits as the routes they replace.

The end of a ball's bouncing (:meth:`solver.zeno_series.ZenoSummer.check_zeno`
through :meth:`~solver.zeno_series.ZenoSummer._end_bounces`) evaluates its
contact on a segment in floats (:meth:`~solver.zeno_series.ZenoSummer._segment_contact`
for :meth:`solver.contact_pairs.DiskKinematics.evaluate`), forms the state
where the series ends element by element (:func:`solver.zeno_series._series_end`
for the arrays' expressions) and reads whether the impacts are geometric
once per impact (:attr:`solver.zeno.ZenoWatch.geometric`), and projects no
velocities when none approach or separate. Each is compared here with the
route it replaces on random inputs, whole runs with the short routes on and
off by their bytes, and the resting ball with closed forms.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from solver.geometry import Segment
from solver.simulation import make_stepper
from solver.zeno import ZenoWatch
from solver.zeno_series import ZenoSummer, _series_end
from tests.scene_data import G_ACC, gravity_scene, uniform_wheel, wheels_and_beads_over
from tests.test_settle_routes import ball_scene, bits, run_of

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
scaled = st.builds(
    lambda x, p: x * 10.0**p, st.floats(-10.0, 10.0), st.integers(-300, 300)
) | st.sampled_from([0.0, -0.0, 5e-324])

CONTACT_FIELDS = ("g", "n", "t", "point", "dofs", "G_local", "H_local", "u_n", "u_t")
"""The fields compared by their bytes (signs of zero included); the rest by value."""


def assert_same_contact(made, evaluated):
    for field in CONTACT_FIELDS:
        assert bits(getattr(made, field)) == bits(getattr(evaluated, field)), field
    for field in ("gamma_n", "gamma_t"):
        assert bits(getattr(made, field)) == bits(getattr(evaluated, field)), field
    for field in ("key", "body", "other", "restitution", "friction", "N", "inside"):
        assert getattr(made, field) == getattr(evaluated, field), field
    for field in ("n", "t", "point"):
        assert not getattr(made, field).flags.writeable, field
    assert bits(made.G) == bits(evaluated.G) and bits(made.H) == bits(evaluated.H)


@settings(max_examples=60, deadline=None)
@given(
    st.tuples(st.floats(10.0, 14.0), st.floats(-1.0, 1.0)),
    st.floats(0.0, 2.0 * math.pi),
    st.floats(0.5, 8.0),
    st.floats(-0.2, 1.2),
    st.floats(-2.0, 2.0),
    st.floats(0.02, 0.5),
    st.floats(-9.0, 9.0),
    st.lists(scaled | finite, min_size=4, max_size=4),
)
def test_a_disk_in_a_segments_region_is_its_evaluation(
    start, angle, length, s, offset, radius, bead_x, velocities
):
    """A wheel and a bead (its x ``bead_x`` from the segment's start) near a segment of any
    slope, away from where the builder puts them: the float route against ``evaluate``, field
    by field; beyond the segment's ends or on its line it leaves the pair to ``evaluate``."""
    ax, ay = start
    b = (ax + length * math.cos(angle), ay + length * math.sin(angle))
    segment = {"id": "wall", "type": "segment", "a": [ax, ay], "b": list(b)}
    stepper, gaps = wheels_and_beads_over([segment], [radius], 1)
    ex, ey = b[0] - ax, b[1] - ay
    nx, ny = -ey / length, ex / length
    q = np.array(
        [ax + s * ex + offset * nx, ay + s * ey + offset * ny, 0.7, ax + bead_x], dtype=float
    )
    v = np.array(velocities)
    pairs = [p for p in gaps.pairs if isinstance(p.feature, Segment)]
    assert len(pairs) == 2  # the wheel's and the bead's
    for pair in pairs:
        made = stepper.zeno._segment_contact(pair, q, v)
        centre = stepper.system.disk_motion(q, v, pair.i)[0]
        if pair.feature.nearest(centre) is None or pair.feature.nearest(centre).d == 0.0:
            assert made is None
            continue
        assert made is not None
        assert_same_contact(made, stepper.setup.kin.evaluate(pair, q, v))
        # the same positions at other velocities: only the speeds formed again
        w = v[::-1].copy()
        assert_same_contact(
            stepper.zeno._segment_contact(pair, q, w, made), stepper.setup.kin.evaluate(pair, q, w)
        )


def test_other_pairs_are_left_to_the_evaluation():
    """A vertex, another disk and a velocity that is not finite: no float contact."""
    segment = {"id": "floor", "type": "segment", "a": [-20.0, 0.0], "b": [20.0, 0.0]}
    stepper, gaps = wheels_and_beads_over([segment], [0.5, 0.5], 0)
    q = np.array([0.0, 1.0, 0.0, 5.0, 1.0, 0.0])
    v = np.zeros(6)
    kinds = {type(p.feature).__name__ if p.j < 0 else "disk": p for p in gaps.pairs if p.i == 0}
    assert stepper.zeno._segment_contact(kinds["Vertex"], q, v) is None
    assert stepper.zeno._segment_contact(kinds["disk"], q, v) is None
    assert stepper.zeno._segment_contact(kinds["Segment"], q, np.array([math.inf, *v[1:]])) is None
    assert stepper.zeno._segment_contact(kinds["Segment"], q, v) is not None


@example(np.zeros(3).tolist(), [-0.0, 0.0, -0.0], [0.0, -9.81, 0.0], 1.0, -0.0, 0.0)
@given(
    st.lists(scaled | finite, min_size=3, max_size=3),
    st.lists(scaled | finite, min_size=3, max_size=3),
    st.lists(scaled | finite, min_size=3, max_size=3),
    st.floats(0.0, 10.0),
    scaled | finite,
    scaled | finite,
)
def test_the_series_end_is_the_arrays(q, v, a, T, free_gap, free_speed):
    """``q + T (v + ½ T a) − g d`` and ``v + T a − u d`` in floats, against the arrays,
    ``d`` a jump direction on a wheel's coordinates with zeros elsewhere (7 coordinates)."""
    q, v, a = np.array(q * 2 + [0.5]), np.array(v * 2 + [-0.0]), np.array(a * 2 + [0.0])
    direction = np.zeros(7)
    direction[[3, 4, 5]] = [0.6, -0.8, 0.0]
    got_q, got_v = _series_end(q, v, a, direction.tolist(), T, free_gap, free_speed)
    assert bits(got_q) == bits(q + T * (v + 0.5 * T * a) - free_gap * direction)
    assert bits(got_v) == bits(v + T * a - free_speed * direction)


@given(st.lists(st.tuples(st.floats(0.0, 3.0), st.sampled_from(["a", "b"])), max_size=12))
def test_the_geometric_answer_is_found_again_for_new_times(impacts):
    """Read after every impact (twice), :attr:`ZenoWatch.geometric` is the answer found anew
    from the times recorded, for sequences of one contact and of two."""
    watch = ZenoWatch()
    t = 0.0
    for step, key in impacts:
        t += step
        watch.record(t, frozenset({key}))
        fresh = ZenoWatch(watch.key, list(watch.times))
        expected = len(fresh.times) >= 4 and fresh._geometric()
        assert watch.geometric == expected
        assert watch.geometric == expected


def test_a_geometric_sequence_is_recognised_and_forgotten():
    """Flights halving in length are geometric; a reset forgets them."""
    watch = ZenoWatch()
    for t in (1.0, 2.0, 2.5, 2.75):
        watch.record(t, frozenset({"k"}))
    assert watch.geometric
    watch.reset()
    assert not watch.geometric
    for t in (1.0, 2.0, 3.0, 4.0):
        watch.record(t, frozenset({"k"}))
    assert not watch.geometric  # equal flights: ratio 1


@settings(max_examples=15, deadline=None)
@given(
    st.floats(0.05, 1.0),
    st.floats(0.1, 0.8),
    st.sampled_from([0.0, 10.0, -20.0]),
    st.sampled_from([0.0, 0.0, 0.8]),
    st.booleans(),
    st.floats(0.05, 1.5),
)
def test_runs_with_the_short_routes_are_the_general_runs(
    drop, restitution, slope, friction, corner, dt
):
    """Balls to rest on level ground (no velocity left to project at the Zeno point) and
    slopes, in a corner: the short routes on and off, frames and events by their bytes."""
    scene = ball_scene(drop, restitution, slope, friction, 1.6, dt, corner=corner)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ZenoSummer, "lean_zeno_end", False)
        evaluated = run_of(scene, True)
    assert run_of(scene, True) == evaluated


@pytest.mark.parametrize("restitution", [0.3, 0.5, 0.7])
def test_a_ball_thrown_along_a_floor_rests_where_the_closed_forms_say(restitution):
    """Dropped from h = 0.8 m moving at 0.4 m/s along a frictionless floor: the bounces end at
    t∞ = √(2h/g)(1 + e)/(1 − e), on the floor (y = r), still at 0.4 m/s, pressing with m g."""
    h, vx, r = 0.8, 0.4, 0.1
    ball = uniform_wheel("ball", r, 0.0, h + r) | {"velocity": [vx, 0.0]}
    floor = {"id": "floor", "type": "segment", "a": [-10.0, 0.0], "b": [10.0, 0.0]}
    t_inf = math.sqrt(2.0 * h / G_ACC) * (1.0 + restitution) / (1.0 - restitution)
    t_end = t_inf + 0.25
    stepper = make_stepper(
        gravity_scene([ball], [floor], restitution=restitution, t_end=t_end, dt_out=t_end)
    )
    events, frames = [], []
    while stepper.status == "running":
        out = stepper.step()
        events += out.events
        frames += out.frames
    assert stepper.status == "finished", stepper.message
    (zeno,) = [e for e in events if e.type == "zeno"]
    assert zeno.t == pytest.approx(t_inf, rel=1e-13)
    last = frames[-1]
    assert last.t == t_end
    assert last.q[:2].tolist() == pytest.approx([vx * t_end, r], rel=1e-12, abs=1e-12)
    assert last.v[:2].tolist() == pytest.approx([vx, 0.0], rel=1e-12, abs=1e-12)
    (contact,) = last.contacts
    assert contact.lam == pytest.approx(G_ACC, rel=1e-12)
    mass = 1.0
    dissipated = mass * G_ACC * h  # all of the fall: the horizontal motion is kept
    assert last.energy.dissipated == pytest.approx(dissipated, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from([0.0, 0.0, 12.0, -25.0]),
    st.floats(-0.5, 0.5),
    st.lists(scaled | finite, min_size=3, max_size=3),
)
def test_a_sample_at_the_evaluated_state_reads_the_evaluation(slope, x, velocities):
    """A ball on a segment at a state its active contact was evaluated at: the sample's
    contact state from that evaluation is the one of disk_segment_contact, by its bytes."""
    stepper = make_stepper(ball_scene(0.5, 0.5, slope, 0.0, 1.0, 0.1))
    tilt = math.radians(slope)
    stepper.motion.q = np.array([x * math.cos(tilt) - 0.1 * math.sin(tilt),
                           x * math.sin(tilt) + 0.1 * math.cos(tilt), 0.3])  # fmt: skip
    stepper.motion.v = np.array(velocities)
    (pair,) = [p for p in stepper.pairs.all_candidates().pairs if isinstance(p.feature, Segment)]
    stepper.motion.active = {pair.key: (pair, "stick")}
    stepper.smooth.constant_motion()  # evaluates the active contact at (q, v) and keeps it
    assert stepper.contacts.kept[0][1:] == (stepper.motion.q.tobytes(), stepper.motion.v.tobytes())
    q, v = stepper.motion.q.copy(), stepper.motion.v.copy()
    read = stepper.recorder._sample_contact_row(0.5, q, v)
    stepper.contacts.kept = None
    (made,) = stepper.recorder._sample_contact_row(0.5, q, v)
    (state,) = read
    assert bits([state.lam, state.tau, state.u_n, state.u_t, *state.point, *state.normal]) == bits(
        [made.lam, made.tau, made.u_n, made.u_t, *made.point, *made.normal]
    )
    assert (state.body, state.other, state.mode, state.friction) == (
        made.body, made.other, made.mode, made.friction,
    )  # fmt: skip
