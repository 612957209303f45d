"""The free-flight path's impact of one frictionless disk on a segment (solver/flight_phases.py).

:meth:`FlightPhase._newton_impact` writes what the general
:meth:`EventHandler.impact` writes for that contact — the frames ``pre``
and ``post`` with their energies, the ``impact`` event with its stage
record, the velocities after, the energy booked as dissipated and the Zeno
bookkeeping — without the contact object and the law's result object. It
must give the same numbers bit for bit, and :meth:`_segment_normal` the
evaluation's ``G_local``. Wheels and beads (a bead's rail crossing a tilted
segment), any tilt, masses, restitution and spin, approaching or not.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.frames import StepOutput
from solver.simulation import make_stepper
from tests.scene_data import G_ACC, gravity_scene


def same(a, b):
    """Equal bit for bit: arrays element by element (signed zeros too), else ``==``."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return a == b


@st.composite
def touching_disks(draw):
    """A stepper whose one disk touches a tilted segment, with random velocities."""
    tilt = math.radians(draw(st.floats(-60.0, 60.0)))
    cx, cy = draw(st.floats(-1.0, 1.0)), draw(st.floats(-1.0, 1.0))
    half = draw(st.floats(0.5, 2.0))
    tx, ty = math.cos(tilt), math.sin(tilt)
    segment = {
        "id": "floor",
        "type": "segment",
        "a": [cx - half * tx, cy - half * ty],
        "b": [cx + half * tx, cy + half * ty],
    }
    radius = draw(st.floats(0.02, 0.3))
    mass = draw(st.floats(0.1, 10.0))
    along = draw(st.floats(-0.9, 0.9)) * half
    side = draw(st.sampled_from([1.0, -1.0]))
    # the centre on the segment's normal at the contact distance (to rounding)
    x = cx + along * tx - side * radius * ty
    y = cy + along * ty + side * radius * tx
    bead = draw(st.booleans()) and abs(tilt) > math.radians(5.0)
    if bead:
        body = {"id": "disk", "type": "bead", "rail_y": y, "mass": mass, "radius": radius, "x": x}
    else:
        body = {
            "id": "disk",
            "type": "wheel",
            "mass": mass,
            "inertia": draw(st.floats(0.1, 1.0)) * mass * radius**2,
            "radius": radius,
            "position": [x, y],
        }
    scene = gravity_scene(
        [body], [segment], restitution=draw(st.floats(0.0, 1.0)), friction=0.0, t_end=1.0
    )
    speeds = st.floats(-5.0, 5.0)
    velocity = [draw(speeds)] if bead else [draw(speeds), draw(speeds), draw(speeds) * 10.0]
    return scene, np.array(velocity)


def stepper_at(scene, velocity):
    stepper = make_stepper(scene)
    stepper.motion.v = velocity.copy()
    stepper.motion.impact_loss = 0.25  # energy dissipated before (J): both paths carry it on
    stepper.motion.t = 0.375
    for t in (0.125, 0.25):  # earlier impacts of the same contact, for the Zeno watch
        stepper.zeno.watch.record(t, frozenset({("disk", "floor")}))
        stepper.zeno.cluster.record(t, frozenset({("disk", "floor")}))
    return stepper


@settings(max_examples=150, deadline=None)
@given(touching_disks())
def test_the_flight_impact_writes_the_general_impacts_numbers_bit_for_bit(case):
    scene, velocity = case
    fast, general = stepper_at(scene, velocity), stepper_at(scene, velocity)
    (pair,) = [p for p in fast.pairs.all_candidates().pairs if p.other == "floor"]
    a = fast.smooth.free_accelerations(fast.t, fast.motion.q, fast.motion.v)
    G, dofs, u, a_n, gap = fast.flight_phase._segment_normal(pair, a)
    contact = general.setup.kin.evaluate(pair, general.motion.q, general.motion.v)
    assert contact.inside and G is not None
    assert same(G, contact.G_local) and same(dofs, contact.dofs)
    # the speed and acceleration along the normal decide only: to rounding
    assert u == contact.u_n or abs(u - contact.u_n) <= 1e-15 * (1.0 + np.abs(velocity).max())
    assert abs(a_n - float(contact.G @ a)) <= 1e-15 * G_ACC
    assert abs(gap - contact.g) <= 1e-15 * (1.0 + np.abs(fast.motion.q).max())
    fast_out, general_out = StepOutput(), StepOutput()
    fast.flight_phase._newton_impact(fast_out, pair, G, dofs)
    general.handler.impact(general_out, [contact])

    assert same(fast.motion.v, general.motion.v)
    assert same(fast.motion.impact_loss, general.motion.impact_loss)
    assert (
        fast.zeno.watch.times == general.zeno.watch.times
        and fast.zeno.watch.key == general.zeno.watch.key
    )
    assert fast.zeno.cluster.times == general.zeno.cluster.times
    assert fast.zeno.cluster.last == general.zeno.cluster.last
    assert len(fast_out.frames) == len(general_out.frames) == 2
    for f, g in zip(fast_out.frames, general_out.frames, strict=True):
        assert (f.t, f.kind, f.contacts) == (g.t, g.kind, g.contacts)
        assert same(f.q, g.q) and same(f.v, g.v)
        assert f.energy == g.energy
    assert len(fast_out.events) == len(general_out.events)
    if not general_out.events:  # a contact not approaching: no impulse, no event
        assert float(contact.u_n) >= -1e-12
        return
    (f,), (g,) = fast_out.events, general_out.events
    for name in ("t", "type", "body", "other", "normal_impulse", "tangent_impulse", "stages"):
        assert same(getattr(f, name), getattr(g, name)), name
    assert same(f.energy_change, g.energy_change)
    assert same(f.v_minus, g.v_minus) and same(f.v_plus, g.v_plus)
    fs, gs = f.impact_stages, g.impact_stages
    assert same(fs.dofs, gs.dofs) and same(fs.G_local, gs.G_local) and fs.column == gs.column
    (fst,), (gst,) = fs.stages, gs.stages
    for name in ("y", "w", "lam", "tangent_impulse"):
        assert same(getattr(fst, name), getattr(gst, name)), name


def test_a_ball_bouncing_on_a_tilted_segment_keeps_newtons_law():
    """An independent check of the numbers: a 2 kg wheel meets a 30° slope at (1, −2) m/s.

    Newton's law on the normal n = (−sin 30°, cos 30°): u⁺ = −e u⁻, the
    tangential velocity and the spin unchanged, impulse m (1 + e)|u⁻|
    (the normal passes through the centre), energy change
    −(1 − e²) m u⁻²/2.
    """
    tilt = math.radians(30.0)
    n = np.array((-math.sin(tilt), math.cos(tilt)))
    radius, e, mass = 0.1, 0.6, 2.0
    centre = radius * n
    body = {
        "id": "disk",
        "type": "wheel",
        "mass": mass,
        "inertia": 0.01,
        "radius": radius,
        "position": centre.tolist(),
    }
    segment = {
        "id": "floor",
        "type": "segment",
        "a": [-math.cos(tilt), -math.sin(tilt)],
        "b": [math.cos(tilt), math.sin(tilt)],
    }
    scene = gravity_scene([body], [segment], restitution=e, friction=0.0)
    velocity = np.array((1.0, -2.0, 3.0))
    stepper = stepper_at(scene, velocity)
    (pair,) = [p for p in stepper.pairs.all_candidates().pairs if p.other == "floor"]
    a = stepper.smooth.free_accelerations(0.0, None, None)
    G, dofs, u, _, gap = stepper.flight_phase._segment_normal(pair, a)
    assert abs(gap) < 1e-15  # placed touching
    out = StepOutput()
    stepper.flight_phase._newton_impact(out, pair, G, dofs)
    u_minus = float(n @ velocity[:2])
    tangent = np.array((n[1], -n[0]))
    assert u == np.float64(u_minus) or abs(u - u_minus) < 1e-15
    v_plus = stepper.motion.v
    assert (
        float(n @ v_plus[:2]) == np.float64(-e * u_minus)
        or abs(float(n @ v_plus[:2]) + e * u_minus) < 1e-15
    )
    assert abs(float(tangent @ v_plus[:2]) - float(tangent @ velocity[:2])) < 1e-15
    assert v_plus[2] == 3.0
    (event,) = out.events
    assert abs(event.normal_impulse - mass * (1.0 + e) * abs(u_minus)) < 1e-14
    assert abs(event.energy_change + 0.5 * (1.0 - e * e) * mass * u_minus**2) < 1e-14
