"""Periodic orbits of a forced bead against a linear compliant stop, against closed forms here.

The bead: ``m ẍ + c₀ ẋ + k₀ x = F sin ωt`` in free flight; while it presses the stop
(its centre beyond ``x_s``) the stop adds ``−k (x − x_s) − c ẋ``, as long as that force
pushes. The motion is piecewise linear: the test writes each phase's flow as the matrix
exponential of its own augmented generator (state, sin ωt, cos ωt, 1), solves the
periodicity conditions for the touch time, touch speed and release time, and builds the
monodromy from the two phases' matrix exponentials and the saltation matrices derived in
docs/ORBITS.md: at the touch of a damped stop ``[[1, 0], [−c/m, 1]]`` (the force jumps from
0 to ``c ẋ``), at the release the identity (the force falls continuously to 0).
"""

import math

import numpy as np
import pytest
import scipy.linalg
import scipy.optimize
from hypothesis import example, given, settings
from hypothesis import strategies as st

from solver.errors import InputError
from solver.orbit_monodromy import monodromy
from solver.orbits import find_orbit, run_map
from solver.scene import parse_scene

M, C0, K0, F, W = 1.0, 0.1, 1.0, 1.0, 2.0
R, X_WALL = 0.2, 0.4
XS = X_WALL - R  # the bead's centre at the touch
T = 2 * math.pi / W


def compliant_oscillator(k=400.0, c=2.0, exponent=1, wall=X_WALL, slant=0.0, beads=1):
    bodies = [
        {"id": "mass", "type": "bead", "rail_y": 0.0, "mass": M, "radius": R, "x": 0.0, "vx": 0.0}
    ]
    springs = [{"a": "mass", "anchor": [0.0, 0.0], "stiffness": K0, "rest_length": 0.0}]
    springs[0]["damping"] = C0
    law = {"stiffness": k, "damping": c, "exponent": exponent}
    contact = {"restitution": 1.0, "friction": 0.0, "impact_law": "newton"}
    if beads == 2:
        bodies.append(dict(bodies[0], id="other", x=-1.0))
        springs.append(dict(springs[0], a="other", anchor=[-1.0, 0.0]))
        contact["compliance"] = law
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 2,
            "title": "bead against a compliant stop",
            "view": "side",
            "gravity": [0.0, 0.0],
            "contact": contact,
            "boundaries": [
                {
                    "id": "stop",
                    "type": "segment",
                    "a": [wall - slant, -0.5],
                    "b": [wall + slant, 0.5],
                    "compliance": law,
                }
            ],
            "bodies": bodies,
            "springs": springs,
            "forces": [
                {"body": "mass", "type": "harmonic", "amplitude": [F, 0.0], "omega": W, "phase": 0}
            ],
            "impulses": [],
            "solver": {"method": "event-driven", "t_end": 10.0, "dt_out": 0.01, "dt": 0.0001},
        }
    )


def generator(stiffness, damping, constant):
    """d/dt of (x, v, sin ωt, cos ωt, 1): m ẍ = −stiffness x − damping ẋ + F sin ωt + constant."""
    G = np.zeros((5, 5))
    G[0, 1] = 1.0
    G[1] = [-stiffness / M, -damping / M, F / M, 0.0, constant / M]
    G[2, 3], G[3, 2] = W, -W
    return G


def free():
    return generator(K0, C0, 0.0)


def pressing(k, c):
    return generator(K0 + k, C0 + c, k * XS)


def flow(G, x, v, t0, t1):
    w = scipy.linalg.expm(G * (t1 - t0)) @ [x, v, math.sin(W * t0), math.cos(W * t0), 1.0]
    return w[0], w[1]


def periodic_orbit(k, c, guess):
    """(t_touch, v_touch, t_release) of the one-contact orbit: the periodicity conditions."""

    def conditions(u):
        t1, v1, t2 = u
        xp, vp = flow(pressing(k, c), XS, v1, t1, t2)
        xf, vf = flow(free(), xp, vp, t2, t1 + T)
        return [k * (xp - XS) + c * vp, xf - XS, vf - v1]

    sol, _, ok, msg = scipy.optimize.fsolve(conditions, guess, xtol=1e-14, full_output=True)
    assert ok == 1, msg
    assert max(abs(r) for r in conditions(sol)) < 1e-12
    return sol


def closed_form_monodromy(k, c, t1, t2):
    """E_f(T − t2) · I · E_p(t2 − t1) · S_touch · E_f(t1), section at t = 0 (mod T)."""
    A_f = np.array([[0.0, 1.0], [-K0 / M, -C0 / M]])
    A_p = np.array([[0.0, 1.0], [-(K0 + k) / M, -(C0 + c) / M]])
    S_touch = np.array([[1.0, 0.0], [-c / M, 1.0]])
    S_release = np.eye(2)
    return (
        scipy.linalg.expm(A_f * (T - t2))
        @ S_release
        @ scipy.linalg.expm(A_p * (t2 - t1))
        @ S_touch
        @ scipy.linalg.expm(A_f * t1)
    )


@pytest.mark.parametrize(
    "k,c,transient", [(400.0, 2.0, 120.0), (400.0, 0.0, 120.0), (100.0, 1.0, 300.0)]
)
def test_orbit_and_multipliers_against_the_closed_form(k, c, transient):
    orbit = find_orbit(compliant_oscillator(k, c), transient=transient)
    kinds = [i.kind for i in orbit.impacts]
    assert kinds == ["touch", "release"] and len(orbit.contacts) == 1
    touch, release = orbit.impacts
    t1, v1, t2 = periodic_orbit(k, c, [touch.t, float(touch.v_minus[0]), release.t])
    assert 0.0 < t1 < t2 < T and v1 > 0.0
    # the program's orbit: its touch, release and section state are the closed form's
    assert touch.t == pytest.approx(t1, abs=1e-9) and release.t == pytest.approx(t2, abs=1e-9)
    assert float(touch.v_minus[0]) == pytest.approx(v1, abs=1e-9)
    x_sec, v_sec = flow(free(), *flow(pressing(k, c), XS, v1, t1, t2), t2, T)
    assert np.allclose(orbit.state, [x_sec, v_sec], rtol=0, atol=1e-10)
    # the free flight stays off the stop, the press pushes throughout
    for s in np.linspace(0.0, 1.0, 41)[1:-1]:
        xp, vp = flow(pressing(k, c), XS, v1, t1, t1 + s * (t2 - t1))
        assert xp > XS and k * (xp - XS) + c * vp > 0.0
        assert flow(free(), x_sec, v_sec, 0.0, s * t1)[0] < XS
    # the monodromy and its multipliers against the closed form
    Phi = closed_form_monodromy(k, c, t1, t2)
    assert np.allclose(orbit.monodromy, Phi, rtol=0, atol=1e-8)
    mu = np.linalg.eigvals(Phi)
    mu = mu[np.argsort(-np.abs(mu), kind="stable")]
    assert np.allclose(np.sort_complex(orbit.multipliers), np.sort_complex(mu), atol=1e-8)
    # Liouville: det Φ = exp(−∫ tr A), the touch's saltation has determinant 1
    assert np.linalg.det(orbit.monodromy) == pytest.approx(
        math.exp(-C0 * T / M - c * (t2 - t1) / M), rel=1e-9
    )
    if c > 0.0:  # the touch's jump matters: without it the product is off
        wrong = closed_form_monodromy(k, 0.0, t1, t2)
        assert np.max(np.abs(wrong - orbit.monodromy)) > 1e-3


def test_monodromy_against_finite_differences_of_the_simulation():
    """Φ at the orbit and at states off it (two contacts a period, a start inside the stop)."""
    scene = compliant_oscillator()
    orbit = find_orbit(scene, transient=120.0)
    h = 1e-6
    for z in (orbit.state, np.array([0.0, 0.0]), np.array([0.21, 0.3]), np.array([-0.4, 1.0])):
        run = run_map(scene, z, T)
        assert {i.kind for i in run.impacts} == {"touch", "release"}
        Phi = monodromy(scene, z, run.impacts, T)
        fd = np.zeros((2, 2))
        for j in range(2):
            dz = np.zeros(2)
            dz[j] = h
            fd[:, j] = (run_map(scene, z + dz, T).z_end - run_map(scene, z - dz, T).z_end) / (2 * h)
        assert np.allclose(Phi, fd, rtol=0, atol=1e-5 * (1 + np.max(np.abs(Phi))))


@settings(max_examples=12, deadline=None)
@example(x=XS, v=0.5, k=400.0, c=2.0)  # starts exactly at the touch, closing
@example(x=0.201, v=-0.5, k=400.0, c=2.0)  # inside, leaving, k δ + c δ̇ < 0: released
@given(
    x=st.floats(-0.8, 0.25),
    v=st.floats(-1.5, 1.5),
    k=st.floats(200.0, 2000.0),
    c=st.floats(0.0, 5.0),
)
def test_determinant_is_liouvilles_law(x, v, k, c):
    """det Φ = exp(−(c₀ T + c τ)/m), τ the time the bead presses the stop in the span
    (from the run's touches and releases; pressing from the start when it starts inside
    and moving in). Fails if a phase's flow or a touch's saltation were wrong in trace."""
    scene = compliant_oscillator(k, c)
    z = np.array([x, v])
    run = run_map(scene, z, T)
    # the engine's rule at a phase start: overlapping or touching, and pushing or closing
    pressing_since = 0.0 if (x >= XS and (k * (x - XS) + c * v > 0.0 or v > 0.0)) else None
    tau = 0.0
    for event in run.impacts:
        if event.kind == "touch":
            pressing_since = event.t
        else:
            assert pressing_since is not None
            tau += event.t - pressing_since
            pressing_since = None
    if pressing_since is not None:
        tau += T - pressing_since
    Phi = monodromy(scene, z, run.impacts, T)
    assert np.linalg.det(Phi) == pytest.approx(math.exp(-(C0 * T + c * tau) / M), rel=1e-8)


def test_unsupported_compliance_is_refused_naming_the_field():
    with pytest.raises(InputError, match=r"`boundaries\[0\]\.compliance\.exponent`"):
        find_orbit(compliant_oscillator(exponent=1.5))
    with pytest.raises(InputError, match=r"`boundaries\[0\]`: .*vertical"):
        find_orbit(compliant_oscillator(slant=0.05))
    with pytest.raises(InputError, match=r"`contact\.compliance`"):
        find_orbit(compliant_oscillator(beads=2))


def test_cli_refuses_a_hertz_stop_with_exit_2_naming_the_field(tmp_path):
    from test_orbits import _cli

    code, err = _cli(
        tmp_path, compliant_oscillator(exponent=1.5), "--vary", "forces[0].omega=2:2.1"
    )
    assert code == 2 and "`boundaries[0].compliance.exponent`" in err
    assert "Traceback" not in err
