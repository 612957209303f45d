"""Springs as arrays (solver.spring_set): the same forces, energy and damping power as a loop."""

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from solver.scene import parse_scene
from solver.system import System

finite = st.floats(-3.0, 3.0, allow_nan=False)


def _loop_force_on_a(spring, ca, cb, va, vb):
    """The spring law written out for one spring (independent of the engine)."""
    k, rest, damping = spring["stiffness"], spring["rest_length"], spring["damping"]
    dx, dy = ca[0] - cb[0], ca[1] - cb[1]
    rx, ry = va[0] - vb[0], va[1] - vb[1]
    if rest == 0.0:
        return np.array([-k * dx - damping * rx, -k * dy - damping * ry])
    length = math.hypot(dx, dy)
    ex, ey = (dx / length, dy / length) if length > 0 else (0.0, 0.0)
    rate = ex * rx + ey * ry
    scale = k * (length - rest) + damping * rate
    return np.array([-scale * ex, -scale * ey])


@st.composite
def spring_scenes(draw):
    """Two wheels and two beads (rails at different heights), springs between any of them."""
    bodies = [
        {
            "id": f"w{k}",
            "type": "wheel",
            "mass": draw(st.floats(0.5, 5.0)),
            "inertia": 0.01,
            "radius": 0.1,
            "position": [10.0 * k + draw(finite), draw(finite)],
            "velocity": [draw(finite), draw(finite)],
        }
        for k in range(2)
    ] + [
        {
            "id": f"b{k}",
            "type": "bead",
            "rail_y": 10.0 + 10.0 * k + draw(finite),
            "mass": draw(st.floats(0.5, 5.0)),
            "radius": 0.05,
            "x": draw(finite),
            "vx": draw(finite),
        }
        for k in range(2)
    ]
    ids = [b["id"] for b in bodies]
    springs = []
    for _ in range(draw(st.integers(1, 12))):
        a = draw(st.sampled_from(ids))
        spring = {
            "a": a,
            "stiffness": draw(st.floats(0.1, 500.0)),
            "rest_length": draw(st.sampled_from([0.0, 0.3, draw(st.floats(0.0, 2.0))])),
            "damping": draw(st.sampled_from([0.0, draw(st.floats(0.0, 5.0))])),
        }
        b = draw(st.sampled_from([None] + [i for i in ids if i != a]))
        if b is None:
            spring["anchor"] = [draw(finite), draw(finite)]
        else:
            spring["b"] = b
        springs.append(spring)
    return {
        "format": "impactgui-scene",
        "version": 1,
        "gravity": [0.0, -9.81],
        "bodies": bodies,
        "springs": springs,
    }


def _centres(data):
    out = {}
    for b in data["bodies"]:
        if b["type"] == "wheel":
            out[b["id"]] = (np.array(b["position"]), np.array(b["velocity"]))
        else:
            out[b["id"]] = (np.array([b["x"], b["rail_y"]]), np.array([b["vx"], 0.0]))
    return out


@given(spring_scenes())
def test_forces_energy_and_damping_power_equal_a_loop_over_springs(data):
    system = System(parse_scene(data))
    centres = _centres(data)
    f = system.applied_force(0.0, system.q0, system.v0)
    expected = {
        i: np.array(b["mass"]) * np.array([0.0, -9.81])
        for i, b in ((b["id"], b) for b in data["bodies"])
    }
    energy = power = 0.0
    for s in data["springs"]:
        ca, va = centres[s["a"]]
        cb, vb = centres[s["b"]] if "b" in s else (np.array(s["anchor"]), np.zeros(2))
        force = _loop_force_on_a(s, ca, cb, va, vb)
        expected[s["a"]] = expected[s["a"]] + force
        if "b" in s:
            expected[s["b"]] = expected[s["b"]] - force
        length = math.hypot(*(ca - cb))
        energy += 0.5 * s["stiffness"] * (length - s["rest_length"]) ** 2
        rel = va - vb
        if s["rest_length"] == 0.0:
            power += s["damping"] * float(rel @ rel)
        elif length > 0:
            power += s["damping"] * float((ca - cb) @ rel / length) ** 2
    scale = 1.0 + sum(abs(v).sum() for v in expected.values())
    for body_id, force in expected.items():
        dofs = system.body_slices[body_id]
        got = f[dofs]
        if data["bodies"][[b["id"] for b in data["bodies"]].index(body_id)]["type"] == "bead":
            assert abs(got[0] - force[0]) <= 1e-12 * scale
        else:
            assert np.all(np.abs(got[:2] - force) <= 1e-12 * scale)
    assert abs(system.energy(system.q0, system.v0)[2] - energy) <= 1e-12 * (1.0 + energy)
    assert abs(system.damping_power(system.q0, system.v0) - power) <= 1e-12 * (1.0 + power)


def test_many_duplicated_springs_act_as_one_spring_of_summed_stiffness():
    """3000 copies of one spring between two beads: force and energy are 3000 times one copy's."""
    spring = {"a": "b0", "b": "b1", "stiffness": 2.0, "rest_length": 0.5, "damping": 0.1}
    bodies = [
        {
            "id": "b0",
            "type": "bead",
            "rail_y": 0.0,
            "mass": 1.0,
            "radius": 0.05,
            "x": 0.0,
            "vx": 0.3,
        },
        {
            "id": "b1",
            "type": "bead",
            "rail_y": 0.0,
            "mass": 1.0,
            "radius": 0.05,
            "x": 0.8,
            "vx": -0.1,
        },
    ]
    base = {"format": "impactgui-scene", "version": 1, "gravity": [0.0, 0.0], "bodies": bodies}
    many = System(parse_scene({**base, "springs": [spring] * 3000}))
    one = System(
        parse_scene({**base, "springs": [{**spring, "stiffness": 6000.0, "damping": 300.0}]})
    )
    q, v = many.q0, many.v0
    # stretch 0.3 m, closing rate 0.4 m/s: F_a = +(6000·0.3 − 300·0.4) N toward b1
    np.testing.assert_allclose(many.applied_force(0.0, q, v), [1680.0, -1680.0], rtol=1e-12)
    np.testing.assert_allclose(one.applied_force(0.0, q, v), [1680.0, -1680.0], rtol=1e-12)
    assert math.isclose(many.energy(q, v)[2], 0.5 * 6000.0 * 0.3**2, rel_tol=1e-12)
    assert math.isclose(many.damping_power(q, v), 300.0 * 0.4**2, rel_tol=1e-12)
    Q = np.array([[0.0, 0.8], [0.1, 0.4], [0.2, 0.2]])
    np.testing.assert_allclose(
        many.spring_set.rail_energies(Q, np.zeros(2)),
        0.5 * 6000.0 * (np.abs(Q[:, 1] - Q[:, 0]) - 0.5) ** 2,
        rtol=1e-12,
    )
