"""Orbits through complete chattering: impacts accumulating, then sticking, then lift-off.

With ``e < 1`` and a force that keeps pressing a bead on its stop, the bead bounces ever
lower and the impacts accumulate; for a scene with springs or forcing the engine, once the
last impacts form a geometric sequence (or a shrinking run) that would rise less than
``ZENO_HEIGHT``, removes the separation speed right after the last impact and holds the bead
(a ``zeno`` event) until the holding force falls to 0 (``liftoff``). The program's map is
then smooth in the start state as long as the number of impacts before the capture does not
change, and its Jacobian is that of ordinary impacts followed, at the capture, by a plastic
sticking impact (docs/ORBITS.md).

Checked here against closed forms written in the test:

* the impact oscillator ``m ẍ + c ẋ + k x = F sin ωt`` at a low frequency: the bead is held
  on the stop ``x = s`` while ``F sin ωt > k s`` and lifts off where ``F sin ωt_L = k s`` on
  the falling side, ``ωt_L = π − asin(ks/F)``; after the lift-off it moves freely from
  ``(s, 0)``, so the orbit's section state is that free motion's (closed form) and the map
  forgets its start: ``Φ = 0``;
* two beads (tests/test_orbits_2dof.py's scene, e = 0.5, a slow strong force on a): bead b
  chatters, sticks and lifts off while a moves on; the test replays the orbit with its own
  phases (matrix exponentials of its augmented generator) and builds ``Φ`` from them and the
  saltation matrices (Newton's for each impact, the plastic sticking one at the capture);
  and central finite differences of the program's own map agree with ``Φ`` with the error
  falling as ``h²`` (a step-size study).
"""

import math

import numpy as np
import pytest
import scipy.linalg
from test_orbits import free_motion, oscillator
from test_orbits_2dof import GAP, L
from test_orbits_liftoff import T as T2
from test_orbits_liftoff import field, flow, generator, saltation, sticking_scene

from solver.errors import SolverError
from solver.orbits import find_orbit, run_map
from solver.scene import parse_scene, scene_to_dict

W1, S1, E1 = 0.2, 0.5, 0.5  # the oscillator: low frequency, stop at 0.5, e = 0.5
T1 = 2 * math.pi / W1
E2 = 0.5  # the two beads' restitution


def chattering_oscillator():
    d = scene_to_dict(oscillator(stop=S1, e=E1))
    d["forces"][0]["omega"] = W1
    return parse_scene(d)


def chattering_beads():
    d = scene_to_dict(sticking_scene())
    d["contact"]["restitution"] = E2
    return parse_scene(d)


@pytest.fixture(scope="module")
def one_bead():
    return find_orbit(chattering_oscillator(), transient=3 * T1)


@pytest.fixture(scope="module")
def two_beads():
    return find_orbit(chattering_beads(), transient=400.0)


def test_oscillator_chatters_sticks_and_lifts_off_as_the_closed_form_says(one_bead):
    kinds = [i.kind for i in one_bead.impacts]
    assert kinds[-1] == "liftoff" and set(kinds[:-1]) == {"impact"}
    assert len(kinds) >= 6  # a chattering sequence, not one plastic impact
    *bounces, lift = one_bead.impacts
    assert [i.captured for i in bounces] == [False] * (len(bounces) - 1) + [True]
    times = [i.t for i in bounces]
    gaps = np.diff(times)
    assert np.all(gaps[1:] < gaps[:-1])  # ever shorter flights: they accumulate
    # the last impact's rebound was removed: u_n⁺ = 0 (a sticking impact's row)
    assert float(bounces[-1].v_plus[0]) == 0.0
    for i in bounces[:-1]:
        assert float(i.v_plus[0]) == pytest.approx(-E1 * float(i.v_minus[0]), rel=1e-12)
    # lift-off where the force that held the bead on the stop falls to 0: F sin ωt = k s
    t_lift = (math.pi - math.asin(1.0 * S1 / 1.0)) / W1
    assert lift.t == pytest.approx(t_lift, abs=1e-7)
    # from there it moves freely from (s, 0): the orbit's section state (t = T ≡ 0)
    x, v = free_motion(t_lift, S1, 0.0, T1, W=W1)
    assert np.allclose(one_bead.state, [x, v], rtol=0, atol=1e-8)
    # the map forgets its start on the stop: Φ = 0, both multipliers 0 (superstable)
    assert np.all(one_bead.monodromy == 0.0)
    assert np.all(np.abs(one_bead.multipliers) == 0.0) and one_bead.stable


def test_oscillator_map_is_flat_near_the_orbit(one_bead):
    scene = chattering_oscillator()
    for dz in ([1e-4, 0.0], [0.0, 1e-4], [-3e-4, 2e-4]):
        run = run_map(scene, one_bead.state + dz, T1)
        assert np.allclose(run.z_end, one_bead.state, rtol=0, atol=1e-8)


def test_two_beads_chattering_orbit_and_monodromy_against_the_closed_form(two_beads):
    orbit = two_beads
    *bounces, lift = orbit.impacts
    assert lift.kind == "liftoff" and all(i.kind == "impact" for i in bounces)
    assert len(bounces) >= 6 and [i.captured for i in bounces][-2:] == [False, True]
    assert {i.body for i in orbit.impacts} == {"b"}
    z = orbit.state - [0.0, L, 0.0, 0.0]  # (x_a, y_b, v_a, v_b), y_b = x_b − L
    t = 0.0
    Phi = np.eye(4)
    A_free, A_held = generator(False)[:4, :4], generator(True)[:4, :4]
    for n, impact in enumerate(bounces):
        z_minus = flow(z, t, impact.t)
        Phi = scipy.linalg.expm(A_free * (impact.t - t)) @ Phi
        assert z_minus[1] == pytest.approx(GAP, abs=1e-10) and z_minus[3] > 0.0
        assert z_minus[3] == pytest.approx(float(impact.v_minus[1]), abs=1e-9)
        last = n == len(bounces) - 1
        R = np.diag([1.0, 1.0, 1.0, 0.0 if last else -E2])  # the capture: e = 0
        z, t = R @ z_minus, impact.t
        if last:
            assert field(z, t)[3] > 0.0  # the force presses b on the stop: it is held
            S = saltation(R, field(z_minus, t), field(z, t, held=True))
        else:
            S = saltation(R, field(z_minus, t), field(z, t))
        Phi = S @ Phi
    # held until the holding force falls to 0 (the engine ends the hold about 1e-9 below)
    z_lift = flow(z, t, lift.t, held=True)
    assert abs(field(z_lift, lift.t)[3]) < 1e-8
    Phi = scipy.linalg.expm(A_free * (T2 - lift.t)) @ scipy.linalg.expm(A_held * (lift.t - t)) @ Phi
    z_end = flow(z_lift, lift.t, T2)
    assert np.allclose(z_end, orbit.state - [0.0, L, 0.0, 0.0], rtol=0, atol=1e-8)
    assert np.allclose(orbit.monodromy, Phi, rtol=0, atol=1e-8)
    assert np.allclose(
        np.sort_complex(orbit.multipliers), np.sort_complex(np.linalg.eigvals(Phi)), atol=1e-8
    )
    # b is forgotten at the capture: two multipliers 0; a's motion gives the other two
    assert np.sum(np.abs(orbit.multipliers) < 1e-12) == 2
    assert np.all(np.abs(orbit.multipliers[:2]) > 0.01)
    # the capture's saltation is the sticking one, not Newton's with e = 0.5: that would
    # change Φ by far more than the tolerance
    impact = bounces[-1]
    z_minus = flow(*_before(orbit, len(bounces) - 1), impact.t)
    R_newton = np.diag([1.0, 1.0, 1.0, -E2])
    wrong = saltation(R_newton, field(z_minus, impact.t), field(R_newton @ z_minus, impact.t))
    assert np.max(np.abs(wrong - S)) > 1e-1


def _before(orbit, index):
    """The closed-form state right after impact ``index − 1`` (or at the section) and its time."""
    z, t = orbit.state - [0.0, L, 0.0, 0.0], 0.0
    for impact in orbit.impacts[:index]:
        z = np.diag([1.0, 1.0, 1.0, -E2]) @ flow(z, t, impact.t)
        t = impact.t
    return z, t


def test_two_beads_monodromy_against_finite_differences_step_study(two_beads):
    scene = chattering_beads()
    errors = {}
    for h in (1e-3, 1e-4, 1e-5):
        fd = np.zeros((4, 4))
        for j in range(4):
            dz = np.zeros(4)
            dz[j] = h
            plus, minus = (
                run_map(scene, two_beads.state + dz, T2),
                run_map(scene, two_beads.state - dz, T2),
            )
            assert len(plus.impacts) == len(minus.impacts) == len(two_beads.impacts)
            fd[:, j] = (plus.z_end - minus.z_end) / (2 * h)
        errors[h] = float(np.max(np.abs(fd - two_beads.monodromy)))
    # central differences: the error falls as h² while truncation dominates
    assert 50 < errors[1e-3] / errors[1e-4] < 200
    assert errors[1e-5] < 1e-8


def test_a_zeno_end_without_an_impact_before_it_is_refused():
    from solver.orbits import _capture

    class Zeno:
        t, body, other = 1.0, "b", "stop"
        message = "geometric bouncing accumulates at t = 1 s; resting contact"

    with pytest.raises(SolverError, match="Zeno end of b and stop"):
        _capture([], Zeno(), np.eye(2))
    Zeno.message = "bouncing accumulates at t = 1 s after 3 more bounces summed in closed form"
    from solver.orbit_monodromy import Impact

    hit = Impact(0.9, np.array([0.0, 1.0]), np.array([0.0, -0.5]), body="b", other="stop")
    with pytest.raises(SolverError, match="other than the capture"):
        _capture([hit], Zeno(), np.eye(2))


def test_branch_through_changing_bounce_counts(tmp_path):
    """Along ω the number of bounces before the capture changes (9, 10, 9): no grazing —
    the held phase forgets the bounces — so the branch goes on, every orbit the closed
    form's (free motion from (s, 0) at the lift-off, ωt_L = π − asin(ks/F)), Φ = 0."""
    import csv

    from test_orbits import _cli

    path = "forces[0].omega"
    args = ("--vary", f"{path}=0.2:0.3", "--step", "0.01", "--transient", "100")
    code, err = _cli(tmp_path, chattering_oscillator(), *args, "--max-points", "15")
    assert code == 0, err
    rows = list(csv.DictReader(open(tmp_path / "out" / "branches.csv")))
    assert len(rows) == 15 and "grazing" not in err
    assert [r["bifurcation"] for r in rows] == [""] * 14 + ["end"]
    assert {"9", "10"} <= {r["n_impacts"] for r in rows}
    for row in rows:
        w = float(row[path])
        t_lift = (math.pi - math.asin(S1)) / w
        x, v = free_motion(t_lift, S1, 0.0, 2 * math.pi / w, W=w)
        assert abs(float(row["mass.x"]) - x) < 1e-8 and abs(float(row["mass.vx"]) - v) < 1e-8
        assert row["stable"] == "1" and abs(float(row["mu_1_re"])) < 1e-12
