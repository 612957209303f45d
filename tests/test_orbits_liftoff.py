"""Orbits with a sticking phase: a plastic impact that holds bead b on its stop, then lift-off.

Two beads (tests/test_orbits_2dof.py's scene) with Newton's law e = 0 and a slow, strong
force on a: b hits the stop, leaves, hits it again and stays there (the force keeps
pushing it on) until the contact force falls to 0 and it lifts off. The test writes the
motion itself — each phase a matrix exponential of its own augmented generator
``(x_a, y_b, v_a, v_b, sin ωt, cos ωt, 1)``, ``y_b = x_b − L``; while b is held its rows are
zero — and the monodromy from those phases' ``expm`` and the saltation matrices of
docs/ORBITS.md: at an impact ``R + (f⁺ − R f⁻) ∇hᵀ / (∇h·f⁻)`` with ``f⁺`` the held motion's
field when b sticks (here ``[[1,0,0,0],[0,0,0,0],[0,−c,1,0],[0,0,0,0]]``: a's damper feels
b's lost speed), and the identity at the lift-off (the holding force falls continuously to 0).
"""

import math

import numpy as np
import pytest
import scipy.linalg
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_orbits_2dof import GAP, K1, K2, C, L, two_beads

from solver.errors import SolverError
from solver.orbits import find_orbit, run_map, shifted_scene
from solver.scene import parse_scene, scene_to_dict

W, FA = 0.4, 1.0
T = 2 * math.pi / W


def sticking_scene():
    d = scene_to_dict(two_beads())
    d["contact"]["restitution"] = 0.0
    d["forces"][0]["omega"] = W
    d["forces"][0]["amplitude"][0] = FA
    return parse_scene(d)


def generator(held):
    """d/dt of (x_a, y_b, v_a, v_b, sin ωt, cos ωt, 1); ``held``: b's rows zero."""
    G = np.zeros((7, 7))
    G[0, 2] = G[1, 3] = 1.0
    G[2, :4] = [-(K1 + K2), K2, -2 * C, C]
    G[2, 4] = FA
    G[3, :4] = [K2, -K2, C, -C]
    G[4, 5], G[5, 4] = W, -W
    if held:
        G[1] = G[3] = 0.0
    return G


def flow(z, t0, t1, held=False):
    w = np.r_[z, math.sin(W * t0), math.cos(W * t0), 1.0]
    return (scipy.linalg.expm(generator(held) * (t1 - t0)) @ w)[:4]


def field(z, t, held=False):
    return (generator(held) @ np.r_[z, math.sin(W * t), math.cos(W * t), 1.0])[:4]


def saltation(R, f_minus, f_plus):
    grad = np.array([0.0, 1.0, 0.0, 0.0])  # h = y_b − GAP
    return R + np.outer(f_plus - R @ f_minus, grad) / (grad @ f_minus)


@pytest.fixture(scope="module")
def orbit():
    return find_orbit(sticking_scene(), transient=400.0)


def test_sticking_orbit_against_the_closed_form(orbit):
    kinds = [i.kind for i in orbit.impacts]
    assert kinds == ["impact", "impact", "liftoff"]
    first, second, lift = orbit.impacts
    assert [first.body, second.body, lift.body] == ["b", "b", "b"]
    to_test = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])
    z0 = orbit.state - [0.0, L, 0.0, 0.0]  # (x_a, y_b, v_a, v_b)
    R = np.diag([1.0, 1.0, 1.0, 0.0])  # Newton's law, e = 0, on b
    A_free = generator(False)[:4, :4]
    A_held = generator(True)[:4, :4]
    # first impact: b reaches the stop, leaves at 0 speed (the force pulls it back off)
    z1 = flow(z0, 0.0, first.t)
    assert z1[1] == pytest.approx(GAP, abs=1e-10) and z1[3] > 0.0
    assert z1[3] == pytest.approx(float(first.v_minus[1]), abs=1e-9)
    f_minus = field(z1, first.t)
    z1p = R @ z1
    S1 = saltation(R, f_minus, field(z1p, first.t))
    assert field(z1p, first.t)[3] < 0.0  # b's acceleration away from the stop: it leaves
    # second impact: b arrives again and is held
    z2 = flow(z1p, first.t, second.t)
    assert z2[1] == pytest.approx(GAP, abs=1e-10) and z2[3] > 0.0
    assert z2[3] == pytest.approx(float(second.v_minus[1]), abs=1e-9)
    z2p = R @ z2
    assert field(z2p, second.t)[3] > 0.0  # the force pushes b on: it sticks
    S2 = saltation(R, field(z2, second.t), field(z2p, second.t, held=True))
    expected = np.eye(4)
    expected[1, 1] = expected[3, 3] = 0.0
    expected[2, 1] = -C
    assert np.allclose(S2, expected, rtol=0, atol=1e-12)
    # held until the holding force b's free acceleration would need falls to 0
    z3 = flow(z2p, second.t, lift.t, held=True)
    # (to 1e-8: the engine ends the hold a threshold of about 1e-9 N/kg below zero)
    assert abs(field(z3, lift.t)[3]) < 1e-8
    for s in np.linspace(second.t, lift.t, 30)[1:-1]:
        assert field(flow(z2p, second.t, s, held=True), s)[3] > 0.0  # pushing on the stop
    assert np.allclose(lift.q - [0.0, L], z3[:2], atol=1e-9)
    # free again, back to the section state after T: the orbit is the closed form's
    z_end = flow(z3, lift.t, T)
    assert np.allclose(z_end, z0, rtol=0, atol=1e-9)
    Phi = (
        scipy.linalg.expm(A_free * (T - lift.t))
        @ np.eye(4)  # lift-off
        @ scipy.linalg.expm(A_held * (lift.t - second.t))
        @ S2
        @ scipy.linalg.expm(A_free * (second.t - first.t))
        @ S1
        @ scipy.linalg.expm(A_free * first.t)
    )
    assert np.allclose(to_test @ orbit.monodromy, Phi, rtol=0, atol=1e-8)
    mu = np.linalg.eigvals(Phi)
    assert np.allclose(np.sort_complex(orbit.multipliers), np.sort_complex(mu), atol=1e-8)
    # b's state is forgotten at the sticking: two multipliers 0, a's motion gives the others
    assert np.sum(np.abs(orbit.multipliers) < 1e-12) == 2
    assert np.all(np.abs(orbit.multipliers[:2]) > 0.01)


def test_sticking_monodromy_against_finite_differences(orbit):
    scene = sticking_scene()
    h = 1e-6
    fd = np.zeros((4, 4))
    for j in range(4):
        dz = np.zeros(4)
        dz[j] = h
        fd[:, j] = (
            run_map(scene, orbit.state + dz, T).z_end - run_map(scene, orbit.state - dz, T).z_end
        ) / (2 * h)
    assert np.allclose(orbit.monodromy, fd, rtol=0, atol=1e-7)


def test_section_inside_the_sticking_phase(orbit):
    """The same orbit seen from a section while b is held: the run starts held (a ``held``
    event at t = 0), the map is defined on the held states and its Jacobian is taken there
    (b's columns zero); the multipliers are the section-0 orbit's, Φ is the closed form's."""
    first, second, lift = orbit.impacts
    ts = 0.5 * (second.t + lift.t)
    scene = sticking_scene()
    inside = find_orbit(scene, transient=400.0, t_section=ts)
    assert [i.kind for i in inside.impacts] == ["held", "liftoff", "impact", "impact"]
    # the closed-form replay of the section-0 orbit up to ts: held there, b at the stop
    z0 = orbit.state - [0.0, L, 0.0, 0.0]
    R = np.diag([1.0, 1.0, 1.0, 0.0])
    z1p = R @ flow(z0, 0.0, first.t)
    z2 = flow(z1p, first.t, second.t)
    z2p = R @ z2
    z_ts = flow(z2p, second.t, ts, held=True)
    assert z_ts[1] == pytest.approx(GAP, abs=1e-10) and z_ts[3] == 0.0
    assert np.allclose(inside.state - [0.0, L, 0.0, 0.0], z_ts, rtol=0, atol=1e-9)
    # Φ from the section: held to the lift-off, free, the two impacts, held to T
    A_free, A_held = generator(False)[:4, :4], generator(True)[:4, :4]
    S1 = saltation(R, field(flow(z0, 0.0, first.t), first.t), field(z1p, first.t))
    S2 = saltation(R, field(z2, second.t), field(z2p, second.t, held=True))
    s1, s2, t_lift = first.t + T - ts, second.t + T - ts, lift.t - ts
    Pi = np.diag([1.0, 0.0, 1.0, 0.0])  # onto the held states: b's columns zero
    Phi = (
        scipy.linalg.expm(A_held * (T - s2))
        @ S2
        @ scipy.linalg.expm(A_free * (s2 - s1))
        @ S1
        @ scipy.linalg.expm(A_free * (s1 - t_lift))
        @ scipy.linalg.expm(A_held * t_lift)
        @ Pi
    )
    assert np.allclose(inside.monodromy, Phi, rtol=0, atol=1e-8)
    assert np.allclose(inside.multipliers, orbit.multipliers, rtol=0, atol=1e-8)
    # finite differences of the program's own map in a's coordinates (b's are held)
    base = shifted_scene(scene, ts)
    h = 1e-5
    for j in (0, 2):
        dz = np.zeros(4)
        dz[j] = h
        fd = (
            run_map(base, inside.state + dz, T).z_end - run_map(base, inside.state - dz, T).z_end
        ) / (2 * h)
        assert np.allclose(fd, inside.monodromy[:, j], rtol=0, atol=1e-7)


def with_stop_for_a(x_stop, e):
    """The sticking scene with a stop for a at ``x_stop`` (its centre's position), own ``e``."""
    d = scene_to_dict(sticking_scene())
    edge = x_stop + 0.05
    d["boundaries"].append(
        {"id": "left", "type": "segment", "a": [edge, -0.2], "b": [edge, 0.2], "restitution": e}
    )
    return parse_scene(d)


def test_impact_of_one_bead_while_the_other_is_held():
    """a bounces on its own stop (e = 0.8) while b is held on its stop: the impact's reset is
    the free one (its impulse M⁻¹n is M-orthogonal to b's held row), its fields the held
    motion's. Checked by a replay with the test's own phases and by finite differences."""
    scene = with_stop_for_a(0.3, 0.8)
    orbit = find_orbit(scene, transient=400.0)
    events = [(i.kind, i.body) for i in orbit.impacts]
    stick = max(k for k, e in enumerate(events) if e == ("impact", "b"))
    lift = events.index(("liftoff", "b"), stick)
    during = [e for e in events[stick + 1 : lift] if e == ("impact", "a")]
    assert len(during) == 1  # a hits its stop while b is held
    # replay: free flights, Newton at a's stop (e = 0.8) and b's (e = 0), b held from its
    # sticking impact to the lift-off; Φ from the phases and saltation matrices
    z = orbit.state - [0.0, L, 0.0, 0.0]
    t, held = 0.0, False
    Phi = np.eye(4)
    grad_a = np.array([1.0, 0.0, 0.0, 0.0])
    for k, impact in enumerate(orbit.impacts):
        A = generator(held)[:4, :4]
        z_minus = flow(z, t, impact.t, held)
        Phi = scipy.linalg.expm(A * (impact.t - t)) @ Phi
        t = impact.t
        if impact.kind == "liftoff":
            assert abs(field(z_minus, t, held=True)[3]) < 1e-8
            z, held = z_minus, False
            continue
        if impact.body == "a":
            assert z_minus[0] == pytest.approx(0.3, abs=1e-9)
            R = np.diag([1.0, 1.0, -0.8, 1.0])
            z = R @ z_minus
            f_minus, f_plus = field(z_minus, t, held), field(z, t, held)
            S = R + np.outer(f_plus - R @ f_minus, grad_a) / (grad_a @ f_minus)
        else:
            assert z_minus[1] == pytest.approx(GAP, abs=1e-9)
            R = np.diag([1.0, 1.0, 1.0, 0.0])
            z = R @ z_minus
            after = [i for i in orbit.impacts[k + 1 :] if i.body == "b"]
            sticks = bool(after) and after[0].kind == "liftoff"
            S = saltation(R, field(z_minus, t), field(z, t, held=sticks))
            held = sticks
        Phi = S @ Phi
    Phi = scipy.linalg.expm(generator(held)[:4, :4] * (T - t)) @ Phi
    assert np.allclose(flow(z, t, T, held), orbit.state - [0.0, L, 0.0, 0.0], atol=1e-8)
    assert np.allclose(orbit.monodromy, Phi, rtol=0, atol=1e-8)
    errors = []
    for h in (1e-4, 1e-5):
        fd = np.zeros((4, 4))
        for j in range(4):
            dz = np.zeros(4)
            dz[j] = h
            plus, minus = run_map(scene, orbit.state + dz, T), run_map(scene, orbit.state - dz, T)
            fd[:, j] = (plus.z_end - minus.z_end) / (2 * h)
        errors.append(float(np.max(np.abs(fd - orbit.monodromy))))
    assert errors[0] < 1e-6 and errors[1] < 1e-8


def test_both_beads_held_forget_everything():
    """a chatters onto its stop and is held, then b sticks on its stop while a is held: a
    plastic impact while another bead is held. Both positions and speeds are forgotten
    (each held phase pins its bead): Φ = 0, as finite differences of the map say."""
    scene = with_stop_for_a(0.25, 0.5)
    orbit = find_orbit(scene, transient=400.0)
    kinds = [(i.kind, i.body) for i in orbit.impacts]
    assert ("liftoff", "a") in kinds and kinds[-1] == ("liftoff", "b")
    capture = next(i for i in orbit.impacts if i.captured)
    assert capture.body == "a"
    later_b = [i for i in orbit.impacts if i.body == "b" and i.kind == "impact" and i.t > capture.t]
    assert len(later_b) == 1  # b's sticking impact, while a is held
    assert np.all(orbit.monodromy == 0.0)
    for j in range(4):
        dz = np.zeros(4)
        dz[j] = 1e-5
        assert np.allclose(run_map(scene, orbit.state + dz, T).z_end, orbit.state, atol=1e-9)


def test_an_impulse_through_a_held_contact_is_refused():
    from solver.orbit_monodromy import Impact, _Phases
    from solver.system import System

    system = System(sticking_scene())
    phases = _Phases(system, np.zeros(2), np.zeros(2), [])
    phases.stuck["b", "stop"] = (np.array([0.0, 1.0]), 3.2)
    # an impulse on b (a bead–bead impact of a on held b): shared with the held contact
    hit = Impact(1.0, np.array([1.0, 0.0]), np.array([-0.5, 1.5]), body="a", other="b")
    with pytest.raises(SolverError, match="reaches a contact held"):
        phases.held_rows(hit)
    # an impulse on a alone leaves b's held contact alone
    own = Impact(1.0, np.array([1.0, 0.0]), np.array([-0.8, 0.0]), body="a", other="left")
    assert np.allclose(phases.held_rows(own), [[0.0, 1.0]])


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(fraction=st.floats(0.02, 0.98))
def test_any_section_inside_the_sticking_phase_gives_the_same_multipliers(orbit, fraction):
    """Law: the multipliers do not depend on the section, inside the held phase too."""
    first, second, lift = orbit.impacts
    ts = second.t + fraction * (lift.t - second.t)
    z0 = orbit.state - [0.0, L, 0.0, 0.0]
    R = np.diag([1.0, 1.0, 1.0, 0.0])
    z2p = R @ flow(R @ flow(z0, 0.0, first.t), first.t, second.t)
    z_ts = flow(z2p, second.t, ts, held=True) + np.array([0.0, L, 0.0, 0.0])
    z_ts[1], z_ts[3] = L + GAP, 0.0  # exactly at the stop, at rest: held from the start
    inside = find_orbit(sticking_scene(), z_ts, t_section=ts)
    assert inside.impacts[0].kind == "held"
    assert np.allclose(inside.state, z_ts, rtol=0, atol=1e-8)
    assert np.allclose(inside.multipliers, orbit.multipliers, rtol=0, atol=1e-8)


def test_a_section_with_a_bead_resting_on_another_bead_is_refused():
    from types import SimpleNamespace

    from solver.orbits import _held
    from solver.system import System

    system = System(sticking_scene())
    resting = SimpleNamespace(body="b", other="a", normal=(1.0, 0.0))
    with pytest.raises(SolverError, match="b rests on a at the section"):
        _held(system, np.zeros(4), resting)
    on_stop = SimpleNamespace(body="b", other="stop", normal=(-1.0, 0.0))
    assert np.allclose(_held(system, np.zeros(4), on_stop).normal, [0.0, -1.0])
