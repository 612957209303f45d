"""Bounce trains of a lone disk on a segment (solver/flight_phases.py, ``_bounce_train``).

After a frictionless bounce on a straight segment, the flights that follow
rise no higher than the first and together last no longer than the
geometric series of their durations; when the circle around that box keeps
every other feature more than ``GAP_TOL`` away, a flight of the train needs
only the bouncing pair's closing time. The runs with and without trains must
be the same bits: frames, events, energies. Other features are put at random
distances from the bounces (a wall beside them, a post above them, an arc
around them), so that the proof holds in some examples and fails in others,
and a proof that holds where it should not would show as a run that parts.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.flight_phases import FlightPhase
from solver.simulation import make_stepper
from tests.scene_data import G_ACC, gravity_scene


def run(scene, trains):
    """Frames and events of ``scene`` as bytes and values, and how many train flights it took."""
    used = []
    original = FlightPhase._bounce_train

    def counted(self, gaps, row):
        return original(self, gaps, row) if trains else None

    closing = FlightPhase._train_closing

    def counting(self, train):
        used.append(1)
        return closing(self, train)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(FlightPhase, "_bounce_train", counted)
        patch.setattr(FlightPhase, "_train_closing", counting)
        stepper = make_stepper(scene)
        frames, events = [], []
        while stepper.status == "running":
            out = stepper.step()
            frames += [
                (f.t, f.kind, f.q.tobytes(), f.v.tobytes(), f.energy, f.contacts)
                for f in out.frames
            ]
            events += [
                (
                    e.t,
                    e.type,
                    e.body,
                    e.other,
                    e.normal_impulse,
                    e.energy_change,
                    None if e.v_plus is None else e.v_plus.tobytes(),
                    e.message,
                )
                for e in out.events
            ]
    return stepper.status, frames, events, len(used)


def ball(restitution=0.5, drop=1.0, x=0.0, vx=0.0, extra=(), t_end=1.5):
    wheel = {
        "id": "ball",
        "type": "wheel",
        "mass": 1.0,
        "inertia": 0.005,
        "radius": 0.1,
        "position": [x, drop + 0.1],
        "velocity": [vx, 0.0],
    }
    floor = {"id": "ground", "type": "segment", "a": [-1.0, 0.0], "b": [1.0, 0.0]}
    return gravity_scene(
        [wheel], [floor, *extra], restitution=restitution, t_end=t_end, dt_out=0.05
    )


def test_the_bouncing_ball_takes_its_bounces_as_a_train_with_the_same_bits():
    """From the second flight on, each flight is the train's; the run is the same bits."""
    scene = ball()
    with_trains = run(scene, True)
    without = run(scene, False)
    assert with_trains[:3] == without[:3]
    assert without[3] == 0
    impacts = [e for e in with_trains[2] if e[1] == "impact"]
    assert len(impacts) == 10 and with_trains[3] >= len(impacts) - 1
    # the closed form: t∞ = 3 √(2/g) for e = 1/2 from 1 m
    (zeno,) = [e for e in with_trains[2] if e[1] == "zeno"]
    assert zeno[0] == pytest.approx(3.0 * math.sqrt(2.0 / G_ACC), abs=1e-14)


def test_a_wall_within_reach_stops_the_train():
    """A wall 5 cm beside a ball drifting towards it: no train, and it is hit."""
    wall = {"id": "wall", "type": "segment", "a": [0.35, 0.0], "b": [0.35, 2.0]}
    scene = ball(vx=0.2, extra=[wall])
    with_trains = run(scene, True)
    assert with_trains[:3] == run(scene, False)[:3]
    assert any(e[1] == "impact" and e[3] == "wall" for e in with_trains[2])


@st.composite
def bounces_near_features(draw):
    """A wheel bouncing on a tilted segment, drifting to a wall, an overhang or an arc near it."""
    tilt = math.radians(draw(st.floats(-20.0, 20.0)))
    tx, ty = math.cos(tilt), math.sin(tilt)
    floor = {"id": "floor", "type": "segment", "a": [-3 * tx, -3 * ty], "b": [3 * tx, 3 * ty]}
    radius = draw(st.floats(0.05, 0.2))
    drop = draw(st.floats(0.05, 0.6))
    near = draw(st.floats(0.0, 0.4))
    side = draw(st.sampled_from([1.0, -1.0]))
    kind = draw(st.sampled_from(["wall", "overhang", "arc"]))
    if kind == "wall":
        x = side * (radius + near)
        extra = {"id": "wall", "type": "segment", "a": [x, -2.0], "b": [x, 3.0]}
    elif kind == "overhang":  # a low roof beside the drop point, at a height the bounces reach
        x = side * (radius + near)
        height = draw(st.floats(0.05, 1.0)) * drop + 2.5 * radius
        extra = {"id": "roof", "type": "polyline", "points": [[x, height], [x + side, height]]}
    else:
        big = radius + near + drop + 0.2
        extra = {
            "id": "bowl",
            "type": "arc",
            "center": [0.0, 0.5],
            "radius": big,
            "start_deg": -45.0,
            "end_deg": 225.0,
        }
    wheel = {
        "id": "ball",
        "type": "wheel",
        "mass": draw(st.floats(0.2, 5.0)),
        "inertia": draw(st.floats(0.2, 1.0)) * 0.5 * radius**2,
        "radius": radius,
        "position": [0.0, drop + radius / math.cos(tilt)],
        "velocity": [side * draw(st.floats(0.3, 2.0)), draw(st.floats(-1.0, 1.0))],
        "angular_velocity": draw(st.floats(-5.0, 5.0)),
    }
    return gravity_scene(
        [wheel],
        [floor, extra],
        restitution=draw(st.floats(0.0, 0.95)),
        t_end=draw(st.floats(1.0, 2.0)),
        dt_out=0.05,
    )  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(bounces_near_features())
def test_trains_give_the_runs_without_them_bit_for_bit(scene):
    with_trains = run(scene, True)
    without = run(scene, False)
    assert with_trains[0] == without[0]
    assert with_trains[1] == without[1]
    assert with_trains[2] == without[2]


@st.composite
def drifting_to_a_wall(draw):
    """A low bounce drifting to a wall it reaches after its first bounce, before the bounces end.

    The bounces accumulate at ``t∞ = √(2h/g)(1 + e)/(1 − e)``; the wall is put
    at a share of the drift by then that the first flight does not reach.
    """
    radius = draw(st.floats(0.05, 0.15))
    drop = draw(st.floats(0.02, 0.3))
    e = draw(st.floats(0.3, 0.8))
    speed = draw(st.floats(0.3, 1.0))
    t_inf = math.sqrt(2.0 * drop / G_ACC) * (1.0 + e) / (1.0 - e)
    near = draw(st.floats(0.6, 0.95)) * speed * t_inf
    side = draw(st.sampled_from([1.0, -1.0]))
    x = side * (radius + near)
    wall = {"id": "wall", "type": "segment", "a": [x, -1.0], "b": [x, 2.0]}
    floor = {"id": "floor", "type": "segment", "a": [-3.0, 0.0], "b": [3.0, 0.0]}
    wheel = {
        "id": "ball",
        "type": "wheel",
        "mass": 1.0,
        "inertia": 0.5 * radius**2,
        "radius": radius,
        "position": [0.0, drop + radius],
        "velocity": [side * speed, 0.0],
    }
    return gravity_scene([wheel], [floor, wall], restitution=e, t_end=t_inf + 0.1, dt_out=0.05)


@settings(max_examples=40, deadline=None)
@given(drifting_to_a_wall())
def test_a_train_never_flies_through_a_wall_it_drifts_to(scene):
    with_trains = run(scene, True)
    without = run(scene, False)
    assert with_trains[:3] == without[:3]
    assert any(e[1] == "impact" and e[3] == "wall" for e in without[2])


def test_the_train_bounds_hold_the_bounces():
    """The box of a train holds every later bounce of the ball: heights and times of the run."""
    scene = ball(restitution=0.7, vx=0.05)
    stepper = make_stepper(scene)
    boxes = []
    original = FlightPhase._bounce_train

    def recording(self, gaps, row):
        train = original(self, gaps, row)
        if train is not None:
            u = float(self.m.v[1])
            boxes.append((self.m.t, u, float(self.m.q[0])))
        return train

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(FlightPhase, "_bounce_train", recording)
        states = []
        while stepper.status == "running":
            out = stepper.step()
            states += [(f.t, f.q.copy()) for f in out.frames]
    assert boxes
    t0, u, x0 = boxes[0]
    T = 2.0 * u / ((1.0 - 0.7) * G_ACC)
    H = u * u / (2.0 * G_ACC)
    for t, q in states:
        if t0 <= t <= t0 + T:
            assert q[1] <= 0.1 + H + 1e-12
            assert abs(q[0] - x0) <= 0.05 * T + 1e-12
    assert np.isfinite(T)


@settings(max_examples=25, deadline=None)
@given(bounces_near_features())
def test_flights_that_skip_the_candidate_search_give_the_same_bits(scene):
    """A train kept within ``margin/8`` of the search point asks for candidates once."""
    skipping = run(scene, True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(FlightPhase, "_keeps_candidates", lambda self, train: False)
        asking = run(scene, True)
    assert skipping[:3] == asking[:3]


@pytest.mark.parametrize(("drop", "kept"), [(1.0, True), (3.0, False)])
def test_a_train_keeps_its_candidates_only_within_its_cover_and_margin(drop, kept):
    """Every kept flight of a train starts inside the cover and within ``margin/8``.

    That is what lets a train's flight skip the candidate search: the search
    point's distance is measured here as the search measures it (numpy's
    hypot). The bounces of a 3 m drop reach beyond ``margin/8``: not kept.
    """
    stepper = make_stepper(ball(drop=drop, vx=0.05, t_end=4.0))
    starts = []
    original = FlightPhase.train_phase

    def recording(self, out):
        train = self._train
        if train is not None and self.m.v is self._bounced:
            x, y = self.s.system.centres(self.m.q)[0]
            x0, y0 = self.pairs.pairs_found_at[0]
            moved = float(np.hypot(x - x0, y - y0))
            starts.append((train is self._kept_candidates, x, y, train.cover, moved))
        return original(self, out)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(FlightPhase, "train_phase", recording)
        while stepper.status == "running":
            stepper.step()
    assert len(starts) >= 5
    assert any(k for k, *_ in starts) == kept
    for k, x, y, (cx, cy, radius), moved in starts:
        assert math.hypot(x - cx, y - cy) <= radius
        if k:
            assert moved <= 0.125 * stepper.pairs.margin
