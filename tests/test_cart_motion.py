"""Axle carts rolling between scheduled impulses (paper 001, MECHANICS §7 '001 example').

Reference motion, derived by hand: without applied forces the wheel rates
``a, b`` stay constant (the reduced mass matrix in ``a, b`` is constant and
the constraint-curvature term ``Ċ u`` points along the axle, where ``C`` has
no component), so C moves at speed ``V = r (a + b)/2`` along
``n = (−sin phi, cos phi)`` while ``phi`` turns at ``Ω = r (b − a)/(2 l)``:

    phi(t) = phi0 + Ω t,
    xC(t) = xC0 + (V/Ω)(cos phi(t) − cos phi0),   yC(t) = yC0 + (V/Ω)(sin phi(t) − sin phi0).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.cart_motion import COORD_NAMES, RATE_NAMES, CartStepper, initial_velocity
from solver.errors import InputError
from solver.nonholonomic import AxleCart

SQRT2 = np.sqrt(2.0)


def run(stepper):
    frames, events = [], []
    while stepper.status == "running":
        out = stepper.step()
        frames.extend(out.frames)
        events.extend(out.events)
    return frames, events


def circular_rolling(cart, q0, rates, t):
    """The closed-form pose of the module docstring at time ``t`` (Ω ≠ 0)."""
    a, b = rates
    V = cart.wheel_radius * (a + b) / 2
    Omega = cart.wheel_radius * (b - a) / (2 * cart.half_length)
    phi = q0[2] + Omega * t
    return np.array(
        [
            q0[0] + V / Omega * (np.cos(phi) - np.cos(q0[2])),
            q0[1] + V / Omega * (np.sin(phi) - np.sin(q0[2])),
            phi,
            q0[3] + a * t,
            q0[4] + b * t,
        ]
    )


def test_free_rolling_conserves_energy_and_constraints_over_ten_seconds():
    cart = AxleCart(axle_mass=2.0, half_length=0.3, wheel_mass=1.0, wheel_radius=0.1)
    q0 = np.array([0.5, -0.2, 0.4, 0.0, 1.0])
    rates = (3.0, 5.0)
    stepper = CartStepper(
        [(cart, q0, initial_velocity(cart, q0, rates))], [], t_end=10.0, dt_out=0.05, cart_ids=["c"]
    )
    frames, events = run(stepper)
    assert stepper.status == "finished" and events == []
    assert [f.t for f in frames] == pytest.approx(np.arange(201) * 0.05, abs=1e-12)
    kinetic = np.array([f.energy.kinetic for f in frames])
    assert np.ptp(kinetic) <= 1e-9 * kinetic[0]
    assert max(np.max(np.abs(cart.constraint_matrix(f.q) @ f.v)) for f in frames) <= 1e-10
    for frame in frames[::20]:
        np.testing.assert_allclose(frame.q, circular_rolling(cart, q0, rates, frame.t), atol=1e-9)


def test_equal_wheel_rates_roll_straight_at_wheel_radius_times_rate():
    cart = AxleCart(1.0, 0.25, 0.5, 0.2)
    phi = 2.0
    q0 = np.array([1.0, 1.0, phi, 0.0, 0.0])
    stepper = CartStepper([(cart, q0, initial_velocity(cart, q0, (4.0, 4.0)))], [], 2.0, 0.5, ["c"])
    frames, _ = run(stepper)
    last = frames[-1]
    forward = np.array([-np.sin(phi), np.cos(phi)])
    np.testing.assert_allclose(last.q[:2], q0[:2] + 0.2 * 4.0 * 2.0 * forward, atol=1e-10)
    assert last.q[2] == pytest.approx(phi, abs=1e-12)
    np.testing.assert_allclose(last.v, [*(0.8 * forward), 0.0, 4.0, 4.0], atol=1e-12)


def test_opposite_wheel_rates_spin_the_cart_in_place():
    cart = AxleCart(1.0, 0.25, 0.5, 0.2)
    q0 = np.array([1.0, -1.0, 0.0, 0.0, 0.0])
    stepper = CartStepper(
        [(cart, q0, initial_velocity(cart, q0, (-2.0, 2.0)))], [], 3.0, 1.0, ["c"]
    )
    frames, _ = run(stepper)
    for frame in frames:
        np.testing.assert_allclose(frame.q[:2], q0[:2], atol=1e-12)
        assert frame.q[2] == pytest.approx(0.2 * 2.0 / 0.25 * frame.t, abs=1e-10)


@pytest.mark.parametrize(("S", "omega"), [(2.0, 0.5), (1.0, -1.5)])
def test_spec_001_impulse_applied_mid_run_gives_the_closed_form_jump(S, omega):
    m = r = 0.5
    cart = AxleCart(axle_mass=m, half_length=r, wheel_mass=m, wheel_radius=r)
    t_hit = 1.3
    q0 = np.array([0.0, 0.0, np.pi / 4 - omega * t_hit, 0.0, 0.0])
    v0 = initial_velocity(cart, q0, (0.0, 2.0 * omega))  # wheel A still, axle turning at omega
    hit = np.array([np.sin(np.pi / 4), -np.cos(np.pi / 4)]) * S  # perpendicular, at C
    stepper = CartStepper(
        [(cart, q0, v0)],
        [{"time": t_hit, "body": "cart", "point": 0.0, "vector": hit}],
        t_end=2.0,
        dt_out=0.1,
        cart_ids=["cart"],
    )
    frames, events = run(stepper)
    pre = next(f for f in frames if f.kind == "pre")
    post = next(f for f in frames if f.kind == "post")
    assert pre.t == post.t == t_hit
    assert pre.q[2] == pytest.approx(np.pi / 4, abs=1e-10)
    l = r
    before = [-SQRT2 / 2 * l * omega, SQRT2 / 2 * l * omega, omega, 0.0, 2 * omega]
    after = [
        SQRT2 / 8 * S / m - SQRT2 / 2 * l * omega,
        -SQRT2 / 8 * S / m + SQRT2 / 2 * l * omega,
        omega,
        -S / (4 * m * r),
        -S / (4 * m * r) + 2 * omega,
    ]
    np.testing.assert_allclose(pre.v, before, atol=1e-10)
    np.testing.assert_allclose(post.v, after, atol=1e-10)
    (event,) = events
    assert (event.type, event.body, event.t) == ("impulse", "cart", t_hit)
    assert event.normal_impulse == pytest.approx(S, rel=1e-15)
    # Kelvin: ΔT = S·(vC⁺ + vC⁻)/2 for an impulse at C.
    work = hit @ (np.array(after[:2]) + np.array(before[:2])) / 2
    assert event.energy_change == pytest.approx(work, abs=1e-10)
    balance = np.array([f.energy.balance for f in frames])
    assert np.ptp(balance) <= 1e-10
    assert frames[-1].energy.input == pytest.approx(work, abs=1e-10)
    np.testing.assert_allclose(frames[-1].v[3:], after[3:], atol=1e-10)


def test_sample_at_an_impulse_time_comes_after_the_post_frame():
    cart = AxleCart(1.0, 0.5, 1.0, 0.1)
    q0 = np.zeros(5)
    impulses = [
        {"time": 0.0, "body": "c", "point": 0.5, "vector": (0.0, 1.0)},
        {"time": 0.5, "body": "c", "point": -0.2, "vector": (1.0, 1.0)},
    ]
    stepper = CartStepper([(cart, q0, np.zeros(5))], impulses, 1.0, 0.5, ["c"])
    frames, events = run(stepper)
    assert [(f.t, f.kind) for f in frames] == [
        (0.0, "pre"),
        (0.0, "post"),
        (0.0, "sample"),
        (0.5, "pre"),
        (0.5, "post"),
        (0.5, "sample"),
        (1.0, "sample"),
    ]
    assert [e.t for e in events] == [0.0, 0.5]
    np.testing.assert_array_equal(frames[2].v, frames[1].v)
    with pytest.raises(RuntimeError, match="finished"):
        stepper.step()


def test_impulse_moves_only_the_cart_it_hits():
    carts = [
        (AxleCart(1.0, 0.5, 1.0, 0.1), np.array([0.0, 0.0, 0.0, 0.0, 0.0]), np.zeros(5)),
        (AxleCart(2.0, 0.3, 0.5, 0.2), np.array([3.0, 0.0, 1.0, 0.0, 0.0]), np.zeros(5)),
    ]
    stepper = CartStepper(
        carts,
        [{"time": 0.25, "body": "b", "point": 0.1, "vector": (0.0, 2.0)}],
        0.5,
        0.25,
        ["a", "b"],
    )
    assert stepper.dof_labels == [("a", COORD_NAMES, RATE_NAMES), ("b", COORD_NAMES, RATE_NAMES)]
    frames, _ = run(stepper)
    np.testing.assert_array_equal(frames[-1].v[:5], np.zeros(5))
    assert np.any(frames[-1].v[5:] != 0.0)


@pytest.mark.parametrize(
    ("v0", "impulse", "t_end", "ids", "names"),
    [
        (np.array([1.0, 0, 0, 0, 0]), [], 1.0, ["c"], r"carts\[0\].v0"),
        (
            np.zeros(5),
            [{"time": 0.1, "body": "x", "point": 0.0, "vector": (1, 0)}],
            1.0,
            ["c"],
            r"impulses\[0\].body",
        ),
        (
            np.zeros(5),
            [{"time": 0.1, "body": "c", "point": 0.9, "vector": (1, 0)}],
            1.0,
            ["c"],
            r"impulses\[0\].point",
        ),
        (
            np.zeros(5),
            [{"time": -1, "body": "c", "point": 0.0, "vector": (1, 0)}],
            1.0,
            ["c"],
            r"impulses\[0\].time",
        ),
        (
            np.zeros(5),
            [{"time": 0.1, "body": "c", "point": 0.0, "vector": (1, "x")}],
            1.0,
            ["c"],
            r"impulses\[0\].vector \(N·s\) must be two numbers",
        ),
        (
            np.zeros(5),
            [{"time": 0.1, "body": "c", "point": 0.0, "vector": (1, np.inf)}],
            1.0,
            ["c"],
            r"impulses\[0\].vector \(N·s\) must be two finite numbers",
        ),
        (np.zeros(5), [], 0.0, ["c"], "t_end"),
        (np.zeros(5), [], 1.0, ["c", "d"], "cart_ids"),
    ],
)
def test_cart_stepper_refuses_bad_input_naming_the_field(v0, impulse, t_end, ids, names):
    cart = AxleCart(1.0, 0.5, 1.0, 0.1)
    with pytest.raises(InputError, match=names):
        CartStepper([(cart, np.zeros(5), v0)], impulse, t_end, 0.1, ids)


def test_world_point_impulse_is_projected_onto_the_axle_at_the_impulse_time():
    cart = AxleCart(1.0, 0.5, 1.0, 0.1)
    q0 = np.array([0.2, -0.1, 0.7, 0.0, 0.0])
    v0 = initial_velocity(cart, q0, (4.0, 1.0))
    t_hit = 0.3
    # where the cart will be at t_hit: the closed-form rolling pose
    q_hit = circular_rolling(cart, q0, (4.0, 1.0), t_hit)
    along = 0.35
    world = q_hit[:2] + along * np.array([np.cos(q_hit[2]), np.sin(q_hit[2])])
    vector = (0.4, -1.3)

    def final_velocity(point):
        stepper = CartStepper(
            [(cart, q0, v0)],
            [{"time": t_hit, "body": "c", "point": point, "vector": vector}],
            0.5,
            0.1,
            ["c"],
        )
        frames, _ = run(stepper)
        assert stepper.status == "finished"
        return frames[-1].v

    np.testing.assert_allclose(final_velocity(tuple(world)), final_velocity(along), atol=1e-9)


def test_world_point_off_the_axle_fails_the_run_with_a_message():
    cart = AxleCart(1.0, 0.5, 1.0, 0.1)
    q0 = np.zeros(5)
    stepper = CartStepper(
        [(cart, q0, np.zeros(5))],
        [{"time": 0.1, "body": "c", "point": (2.0, 0.0), "vector": (0.0, 1.0)}],
        0.5,
        0.1,
        ["c"],
    )
    frames, events = run(stepper)
    assert stepper.status == "failed"
    assert events[-1].type == "error"
    assert "beyond its half-length" in events[-1].message
    assert [f.t for f in frames] == [0.0]
    assert stepper.t == pytest.approx(0.1)


def test_impulse_added_during_a_run_acts_at_the_current_time():
    cart = AxleCart(1.0, 0.5, 1.0, 0.1)
    q0 = np.array([0.0, 0.0, 0.3, 0.0, 0.0])
    v0 = initial_velocity(cart, q0, (2.0, 1.0))
    scheduled = CartStepper(
        [(cart, q0, v0)],
        [{"time": 0.2, "body": "c", "point": 0.1, "vector": (1.0, 0.5)}],
        0.5,
        0.1,
        ["c"],
    )
    live = CartStepper([(cart, q0, v0)], [], 0.5, 0.1, ["c"])
    while live.t < 0.2 - 1e-12:
        live.step()
    live.add_impulse("c", 0.1, (1.0, 0.5))
    frames_live, events_live = run(live)
    frames_ref, _ = run(scheduled)
    assert [e.type for e in events_live] == ["impulse"]
    assert events_live[0].t == pytest.approx(0.2)
    np.testing.assert_allclose(frames_live[-1].q, frames_ref[-1].q, atol=1e-10)
    np.testing.assert_allclose(frames_live[-1].v, frames_ref[-1].v, atol=1e-10)
    with pytest.raises(InputError, match="body"):
        live_again = CartStepper([(cart, q0, v0)], [], 0.5, 0.1, ["c"])
        live_again.add_impulse("nope", 0.0, (1.0, 0.0))


def test_bundled_cart_scene_runs_from_its_system_and_matches_the_maggi_jump():
    from solver.nonholonomic import impulsive_response
    from solver.scene import load_scene
    from solver.simulation import simulate

    trajectory = simulate(load_scene("resources/scenes/axle_cart.json"))
    assert trajectory.status == "finished"
    (event,) = [e for e in trajectory.events if e.type == "impulse"]
    pre = next(f for f in trajectory.frames if f.kind == "pre")
    body = trajectory.system.scene.bodies[0]
    cart = AxleCart(body.axle_mass, body.half_length, body.wheel_mass, body.wheel_radius)
    impulse = trajectory.system.scene.impulses[0]
    assert impulse.frame == "body" and event.t == 4.0
    # body axes at the strike: e along the axle, n the rolling direction; S = -n, at C
    phi = pre.q[2]
    e, n = np.array([np.cos(phi), np.sin(phi)]), np.array([-np.sin(phi), np.cos(phi)])
    world = impulse.vector[0] * e + impulse.vector[1] * n
    np.testing.assert_allclose(world, [np.sqrt(0.5), -np.sqrt(0.5)], atol=1e-9)
    expected = impulsive_response(
        cart.mass_matrix(pre.q),
        cart.constraint_matrix(pre.q),
        cart.generalized_impulse(pre.q, impulse.point[0], world),
        pre.v,
    )
    np.testing.assert_allclose(event.v_plus, expected, atol=1e-12)
    for frame in trajectory.frames[-5:]:
        assert np.max(np.abs(cart.constraint_matrix(frame.q) @ frame.v)) < 1e-10


def _preset_with(*strikes):
    """The bundled axle-cart scene object with ``strikes`` added to its impulses."""
    import json

    data = json.loads(open("resources/scenes/axle_cart.json").read())
    data["impulses"] = [*strikes, *data["impulses"]]
    return data


def test_preset_impulse_still_acts_after_a_strike_has_moved_the_cart():
    # issue 10 bug 2: a strike at 1 s used to leave the preset's fixed world point
    # (0, 0) 0.24 m off the axle at 4 s, and the run failed at 3.99 s
    from solver.scene import parse_scene
    from solver.simulation import simulate

    strike = {
        "time": 1.0,
        "body": "cart",
        "point": [0.05, 0.0],
        "vector": [0.3, 0.8],
        "frame": "body",
    }
    trajectory = simulate(parse_scene(_preset_with(strike)))
    assert trajectory.status == "finished", trajectory.message
    assert [e.t for e in trajectory.events if e.type == "impulse"] == [1.0, 4.0]
    pre = [f for f in trajectory.frames if f.kind == "pre"][1]
    assert np.linalg.norm(pre.q[:2]) > 0.1, "the strike moved the cart off its circle"


def test_body_frame_impulse_equals_the_world_impulse_at_the_pose_it_meets():
    # the same strike given in world axes at the pose the cart has at 1 s, and in body axes
    from solver.scene import parse_scene
    from solver.simulation import simulate

    cart = AxleCart(1.0, 0.1, 1.0, 0.1)
    q0, rates = np.array([0.0, 0.0, np.pi / 4, 0.0, 0.0]), (0.0, np.pi)
    q1 = circular_rolling(cart, q0, rates, 1.0)
    e = np.array([np.cos(q1[2]), np.sin(q1[2])])
    n = np.array([-np.sin(q1[2]), np.cos(q1[2])])
    s, body_vector = -0.04, np.array([0.5, -0.7])
    world_point = q1[:2] + s * e
    world_vector = body_vector[0] * e + body_vector[1] * n
    world = {"time": 1.0, "body": "cart", "point": list(world_point), "vector": list(world_vector)}
    body = {"time": 1.0, "body": "cart", "point": [s, 0.0], "vector": list(body_vector)}
    body["frame"] = "body"
    jumps = []
    for strike in (world, body):
        data = _preset_with(strike)
        data["impulses"] = [strike]
        trajectory = simulate(parse_scene(data))
        (event,) = [e for e in trajectory.events if e.type == "impulse"]
        jumps.append(event.v_plus)
    np.testing.assert_allclose(jumps[0], jumps[1], atol=1e-9)


def test_strike_in_body_frame_reads_the_point_and_vector_off_the_pose():
    from solver.cart_motion import strike_in_body_frame

    cart = AxleCart(1.0, 0.1, 1.0, 0.1)
    q = np.array([1.0, 2.0, np.pi / 2, 0.3, 0.4])  # axle along +y, rolling towards -x
    point, vector = strike_in_body_frame(cart, q, (1.0, 2.05), (-2.0, 1.0))
    assert point == [pytest.approx(0.05), 0.0]
    assert vector == [pytest.approx(1.0), pytest.approx(2.0)]
    with pytest.raises(InputError, match="beyond the half-length"):
        strike_in_body_frame(cart, q, (1.0, 2.2), (1.0, 0.0))
    with pytest.raises(InputError, match="zero"):
        strike_in_body_frame(cart, q, (1.0, 2.0), (0.0, 0.0))


def test_body_frame_points_must_lie_on_the_axle_and_need_version_2():
    from solver.scene import SceneError, parse_scene

    off = {"time": 1.0, "body": "cart", "point": [0.0, 0.02], "vector": [1, 0], "frame": "body"}
    with pytest.raises(SceneError) as error:
        parse_scene(_preset_with(off))
    assert error.value.problems[0].startswith("impulses[0].point: a body-frame point must lie")
    old = _preset_with({**off, "point": [0.0, 0.0]})
    old["version"] = 1
    with pytest.raises(SceneError, match=r"impulses\[0\].frame: needs version 2"):
        parse_scene(old)
    del old["impulses"][0]["frame"]
    old["impulses"] = old["impulses"][:1]
    assert parse_scene(old).impulses[0].frame == "world"


def test_impulse_added_inside_a_cut_phase_acts_on_the_rolled_state(monkeypatch):
    # a step cut at its slice leaves the integrator past t; an impulse scheduled between t
    # and the integrator's steps acts on the state rolled to its time (not extrapolated)
    from scipy.integrate import solve_ivp

    import solver.event_tolerances as tolerances
    from solver.cart_motion import ATOL, RTOL

    monkeypatch.setattr(tolerances, "STEP_WALL_SLICE_S", 0.0)
    cart = AxleCart(1.0, 0.5, 1.0, 0.1)
    q0 = np.array([0.0, 0.0, 0.3, 0.0, 0.0])
    v0 = initial_velocity(cart, q0, (2.0, 1.0))
    stepper = CartStepper([(cart, q0, v0)], [], 20.0, 10.0, ["c"])
    stepper.step()  # the sample at 0
    for _ in range(6):
        assert not stepper.step().frames  # cut: the integrator is past t = 0
    assert stepper.t == 0.0 and stepper.reached > 1.0
    stepper.add_impulse("c", 0.1, (1.0, 0.5), time=0.5)
    frames, events = run(stepper)
    assert [e.type for e in events] == ["impulse"]
    pre = next(f for f in frames if f.kind == "pre")
    rolled = solve_ivp(
        stepper._rhs, (0.0, 0.5), np.r_[q0, v0[3:]], method="DOP853", rtol=RTOL, atol=ATOL
    )
    np.testing.assert_allclose(pre.q, rolled.y[:5, -1], rtol=0, atol=1e-10)


@settings(max_examples=200, deadline=None)
@given(
    st.floats(1e-3, 1e2),
    st.floats(1e-3, 1e2),
    st.floats(-1e3, 1e3),
)
def test_the_steppers_wheel_rate_basis_is_maggis_basis_bit_for_bit(half_length, radius, phi):
    # the stepper's basis skips maggi_basis's checks (rank, condition of A2), not its arithmetic
    from solver.cart_rolling import WHEEL_RATES, wheel_rate_basis
    from solver.nonholonomic import maggi_basis

    cart = AxleCart(1.0, half_length, 1.0, radius)
    q = np.array([0.3, -0.2, phi, 1.0, 2.0])
    fast = wheel_rate_basis(cart, q)
    assert np.array_equal(fast, maggi_basis(cart.constraint_matrix(q), WHEEL_RATES))
    assert np.abs(cart.constraint_matrix(q) @ fast).max() <= 1e-12 * (1 + np.abs(fast).max())


def test_a_cart_whose_dependent_block_is_singular_is_refused_when_the_stepper_is_made():
    cart = AxleCart(1.0, 1e-300, 1.0, 0.1)  # det A2 = 2 l: singular in floating point
    q0 = np.zeros(5)
    with pytest.raises(InputError, match="singular"):
        CartStepper([(cart, q0, np.zeros(5))], [], 1.0, 0.1, ["c"])
