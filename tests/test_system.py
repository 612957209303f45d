"""The compiled system: layout, forces as energy gradients, contact Jacobians."""

import numpy as np
import pytest

from solver.scene import parse_scene
from solver.system import System


def _scene(**extra):
    data = {
        "format": "impactgui-scene",
        "version": 1,
        "gravity": [0.3, -9.81],
        "contact": {"restitution": 0.4, "friction": 0.2},
        "boundaries": [
            {
                "id": "curb",
                "type": "polyline",
                "points": [[0, 0.6], [0, 0.05], [0.4, 0.05], [0.4, 0], [2, 0]],
            },
            {
                "id": "bump",
                "type": "arc",
                "center": [1.5, 0.0],
                "radius": 0.2,
                "start_deg": 0,
                "end_deg": 180,
                "restitution": 0.9,
            },
        ],
        "bodies": [
            {
                "id": "w",
                "type": "wheel",
                "mass": 10,
                "inertia": 0.05,
                "radius": 0.1,
                "position": [0.8, 0.2],
                "angle": 0.3,
                "velocity": [-5, -3],
                "angular_velocity": 2.0,
            },
            {
                "id": "b1",
                "type": "bead",
                "rail_y": 0.5,
                "mass": 2,
                "radius": 0.05,
                "x": 0.3,
                "vx": 1,
            },
            {
                "id": "b2",
                "type": "bead",
                "rail_y": 0.5,
                "mass": 3,
                "radius": 0.05,
                "x": 0.45,
                "vx": -1,
            },
        ],
        "springs": [
            {"a": "b1", "b": "b2", "stiffness": 800, "rest_length": 0.1, "damping": 3},
            {"a": "w", "anchor": [0.5, 0.6], "stiffness": 50, "rest_length": 0.2, "damping": 1},
            {"a": "b2", "anchor": [0.9, 0.5], "stiffness": 70, "rest_length": 0.0},
        ],
        "forces": [
            {"body": "b1", "type": "harmonic", "amplitude": [5, 2], "omega": 6.0, "phase": 0.1}
        ],
    }
    data.update(extra)
    return parse_scene(data)


def test_layout_follows_scene_order_and_mass_matrix_is_diagonal():
    system = System(_scene())
    assert [lab[0] for lab in system.dof_labels] == ["w", "b1", "b2"]
    assert system.N == 5
    np.testing.assert_array_equal(np.diag(system.M), [10, 10, 0.05, 2, 3])
    np.testing.assert_array_equal(system.q0, [0.8, 0.2, 0.3, 0.3, 0.45])
    np.testing.assert_array_equal(system.v0, [-5, -3, 2.0, 1, -1])
    np.testing.assert_array_equal(system.centres(system.q0), [[0.8, 0.2], [0.3, 0.5], [0.45, 0.5]])


def test_conservative_forces_are_minus_the_energy_gradient():
    system = System(_scene(forces=[]))
    rng = np.random.default_rng(1)
    q = system.q0 + 0.05 * rng.standard_normal(system.N)
    v = np.zeros(system.N)

    def potential(qq):
        _, pot, spring = system.energy(qq, v)
        return pot + spring

    h = 1e-6
    grad = np.array(
        [(potential(q + h * e) - potential(q - h * e)) / (2 * h) for e in np.eye(system.N)]
    )
    np.testing.assert_allclose(system.applied_force(0.0, q, v), -grad, rtol=1e-6, atol=1e-6)


def test_damping_power_equals_minus_the_power_of_damping_forces():
    system = System(_scene(forces=[]))
    q = system.q0
    v = system.v0
    undamped = System(
        _scene(
            forces=[],
            springs=[
                {"a": "b1", "b": "b2", "stiffness": 800, "rest_length": 0.1},
                {"a": "w", "anchor": [0.5, 0.6], "stiffness": 50, "rest_length": 0.2},
                {"a": "b2", "anchor": [0.9, 0.5], "stiffness": 70, "rest_length": 0.0},
            ],
        )
    )
    damping_force = system.applied_force(0, q, v) - undamped.applied_force(0, q, v)
    assert system.damping_power(q, v) == pytest.approx(-damping_force @ v, rel=1e-12)
    assert system.damping_power(q, v) > 0


def test_input_power_is_forcing_times_rail_velocity():
    system = System(_scene())
    t = 0.7
    force = np.array([5.0, 2.0]) * np.sin(6.0 * t + 0.1)
    # bead b1 moves along x only: the y component of the forcing does no work
    assert system.input_power(t, system.q0, system.v0) == pytest.approx(force[0] * 1.0, rel=1e-14)


def _contact_by_other(contacts, other):
    return next(c for c in contacts if c.other == other)


@pytest.mark.parametrize(
    ("position", "other"),
    [
        ((0.8, 0.1 + 1e-3), "curb#s3"),  # flat lower ground
        ((0.45, 0.09), "curb#v3"),  # the sharp corner of the curb
        ((1.5 + 0.25 * np.cos(1.0), 0.25 * np.sin(1.0)), "bump"),  # outside the arc
        ((1.5 + 0.05, 0.02), "bump"),  # inside the arc
    ],
)
def test_contact_jacobians_match_finite_differences_of_the_gap(position, other):
    scene = _scene(springs=[], forces=[])
    system = System(scene)
    q = system.q0.copy()
    q[0:2] = position
    v = np.array([0.7, -0.4, 3.0, 0.0, 0.0])
    qdd = np.array([0.2, 0.5, -1.0, 0.0, 0.0])
    c0 = _contact_by_other(system.contacts(q, v, margin=0.2), other)

    def state(h):
        return q + h * v + 0.5 * h * h * qdd, v + h * qdd

    h = 1e-5
    gaps = [_contact_by_other(system.contacts(*state(s), margin=0.3), other).g for s in (-h, 0, h)]
    slips = [_contact_by_other(system.contacts(*state(s), margin=0.3), other).u_t for s in (-h, h)]
    assert c0.G @ v == pytest.approx(c0.u_n, abs=1e-12)
    assert (gaps[2] - gaps[0]) / (2 * h) == pytest.approx(c0.u_n, abs=1e-7)
    second = (gaps[2] - 2 * gaps[1] + gaps[0]) / h**2
    assert second == pytest.approx(c0.G @ qdd + c0.gamma_n, abs=2e-3)
    assert (slips[1] - slips[0]) / (2 * h) == pytest.approx(c0.H @ qdd + c0.gamma_t, abs=1e-6)
    expected_restitution = 0.9 if other == "bump" else 0.4
    assert c0.restitution == expected_restitution
    assert c0.friction == 0.2


def test_bead_bead_contact_is_relative_motion_along_the_rail():
    scene = _scene(springs=[], forces=[])
    system = System(scene)
    q = system.q0.copy()
    q[4] = q[3] + 0.1  # the beads touch
    v = system.v0
    contact = _contact_by_other(system.contacts(q, v, margin=1e-9), "b2")
    assert contact.body == "b1"
    assert contact.g == pytest.approx(0.0, abs=1e-15)
    # normal from b2 to b1 is -x: the gap closes when b1 moves right or b2 left
    np.testing.assert_allclose(contact.G, [0, 0, 0, -1, 1])
    assert contact.u_n == pytest.approx(v[4] - v[3])
    assert contact.u_n < 0


def test_top_view_cart_starts_rolling_without_slip():
    scene = parse_scene(
        {
            "format": "impactgui-scene",
            "version": 1,
            "view": "top",
            "gravity": [0, 0],
            "bodies": [
                {
                    "id": "cart",
                    "type": "axle_cart",
                    "axle_mass": 1,
                    "half_length": 0.2,
                    "wheel_mass": 1,
                    "wheel_radius": 0.2,
                    "position": [0, 0],
                    "angle": 0.0,
                    "wheel_rates": [3.0, 3.0],
                }
            ],
        }
    )
    system = System(scene)
    # equal wheel rates roll straight along the rolling direction (-sin phi, cos phi) at r*rate
    np.testing.assert_allclose(system.v0, [0.0, 0.6, 0.0, 3.0, 3.0], atol=1e-14)
    assert system.contacts(system.q0, system.v0, 1.0) == []


def test_one_disks_motion_is_its_row_of_all_centres_and_velocities():
    system = System(_scene())
    rng = np.random.default_rng(3)
    Q, V = rng.normal(size=(4, system.N)), rng.normal(size=(4, system.N))
    for k in range(system.n_disks):
        C, Cdot, omega = system.disk_motions(Q, V, k)
        for row, (q, v) in enumerate(zip(Q, V, strict=True)):
            c, cdot, om = system.disk_motion(q, v, k)
            assert list(c) == C[row].tolist() == system.centres(q)[k].tolist()
            assert list(cdot) == Cdot[row].tolist() == system.centre_velocities(v)[k].tolist()
            assert om == omega[row] == system.angular_velocities(v)[k]
