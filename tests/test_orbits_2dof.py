"""A two-degree-of-freedom impact oscillator continued through a period doubling.

Bead a on a spring k₁ to an anchor, bead b on a spring k₂ to a (rest length L),
dampers c on both, a harmonic force F sin ωt on a, and one rigid stop that b hits
(Newton's law, e). The test's closed form: between impacts the motion is the
linear flow ``z(t) = E(t − t₀)(z₀ − z_p(t₀)) + z_p(t)``, ``E(τ) = expm(A τ)``,
``z_p`` the forced periodic response ``q_p = Im(Q e^{iωt})``,
``Q = (K − ω² M + iω C)⁻¹ (F, 0)``; at an impact ``v_b ↦ −e v_b``.
"""

import csv
import io
import json
import math

import numpy as np
import scipy.linalg
from scipy.optimize import brentq, root

from solver.cli import main
from solver.scene import parse_scene, scene_to_dict

K1, K2, C, F, E, L, GAP = 1.0, 1.0, 0.05, 0.5, 0.8, 3.0, 0.2
MM = np.eye(2)
KK = np.array([[K1 + K2, -K2], [-K2, K2]])
CC = np.array([[2 * C, -C], [-C, C]])
A = np.block([[np.zeros((2, 2)), np.eye(2)], [-KK, -CC]])


def two_beads():
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 2,
            "title": "two beads, one stop",
            "view": "side",
            "gravity": [0.0, 0.0],
            "contact": {"restitution": E, "friction": 0.0, "impact_law": "newton"},
            "boundaries": [
                {
                    "id": "stop",
                    "type": "segment",
                    "a": [L + GAP + 0.05, -0.2],
                    "b": [L + GAP + 0.05, 0.2],
                }
            ],
            "bodies": [
                {"id": "a", "type": "bead", "rail_y": 0.0, "mass": 1.0, "radius": 0.05, "x": 0.0},
                {"id": "b", "type": "bead", "rail_y": 0.0, "mass": 1.0, "radius": 0.05, "x": L},
            ],
            "springs": [
                {"a": "a", "anchor": [0.0, 0.0], "stiffness": K1, "rest_length": 0.0, "damping": C},
                {"a": "a", "b": "b", "stiffness": K2, "rest_length": L, "damping": C},
            ],
            "forces": [
                {"body": "a", "type": "harmonic", "amplitude": [F, 0.0], "omega": 0.7, "phase": 0.0}
            ],
            "impulses": [],
            "solver": {"method": "event-driven", "t_end": 10.0, "dt_out": 0.01, "dt": 0.0001},
        }
    )


def forced(t, w):
    """z_p(t): the forced periodic response (x_a, y_b, v_a, v_b), y_b = x_b − L."""
    Q = np.linalg.solve(KK - w * w * MM + 1j * w * CC, np.array([F, 0.0]))
    phase = np.exp(1j * w * t)
    return np.r_[(Q * phase).imag, (1j * w * Q * phase).imag]


def flow(t0, z0, t, w):
    return scipy.linalg.expm(A * (t - t0)) @ (z0 - forced(t0, w)) + forced(t, w)


def state(row):
    """(x_a, y_b, v_a, v_b) of a branches.csv row."""
    return np.array(
        [float(row["a.x"]), float(row["b.x"]) - L, float(row["a.vx"]), float(row["b.vx"])]
    )


def replay(z0, impacts, w, span):
    """Each impact of the row checked against the closed form; the state after ``span``.

    Between impacts b stays off the stop (a grid of 200 points per flight, then its
    crest by ẏ_b = 0); at each impact y_b = GAP to 1e-10 and v_b⁻ is the CSV's.
    """
    t, z = 0.0, z0
    for t_i, u_minus in impacts:
        ts = np.linspace(t, t_i, 202)[1:-1]

        def along(s, t=t, z=z):
            return flow(t, z, s, w)

        ys = [along(s)[1] for s in ts]
        k = int(np.argmax(ys))
        if 0 < k < len(ts) - 1 and ys[k] > ys[k - 1] and ys[k] > ys[k + 1]:
            crest = brentq(lambda s: along(s)[3], ts[k - 1], ts[k + 1], xtol=1e-15)
            assert along(crest)[1] < GAP
        assert max(ys) < GAP
        z = flow(t, z, t_i, w)
        assert abs(z[1] - GAP) < 1e-10 and abs(z[3] + u_minus) < 1e-10
        z = z.copy()
        z[3] = -E * z[3]
        t = t_i
    return flow(t, z, span, w)


def period_one(w, guess):
    """(t*, x_a, v_a, v_b⁻) of the one-impact period-1 orbit at ω = w (closed form, root)."""

    def conditions(u):
        t_star, xa, va, vb = u
        after = np.array([xa, GAP, va, -E * vb])
        end = flow(t_star, after, t_star + 2 * math.pi / w, w)
        return end - np.array([xa, GAP, va, vb])

    solution = root(conditions, guess, tol=1e-14).x
    assert np.max(np.abs(conditions(solution))) < 1e-11
    return solution


def monodromy(w, u):
    """Closed-form Φ of the one-impact orbit, section at the impact: E(T) S."""
    t_star, xa, va, vb = u
    z_minus = np.array([xa, GAP, va, vb])
    z_plus = np.array([xa, GAP, va, -E * vb])
    force = np.array([F * math.sin(w * t_star), 0.0])
    a_minus = force - KK @ z_minus[:2] - CC @ z_minus[2:]
    a_plus = force - KK @ z_plus[:2] - CC @ z_plus[2:]
    f_minus, f_plus = np.r_[z_minus[2:], a_minus], np.r_[z_plus[2:], a_plus]
    R = np.diag([1.0, 1.0, 1.0, -E])
    grad = np.array([0.0, 1.0, 0.0, 0.0])
    S = R + np.outer(f_plus - R @ f_minus, grad) / vb
    return scipy.linalg.expm(A * 2 * math.pi / w) @ S


def test_two_bead_branch_through_a_period_doubling_and_its_doubled_branch(tmp_path):
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(scene_to_dict(two_beads())))
    err = io.StringIO()
    args = ["--vary", "forces[0].omega=0.7:0.66", "--step", "0.05", "--transient", "200"]
    out = ["--out", str(tmp_path / "out"), "--max-points", "30", "--follow-doubling"]
    code = main(["orbits", str(path), *args, *out], stderr=err)
    assert code == 0, err.getvalue()
    rows = list(csv.DictReader(open(tmp_path / "out" / "branches.csv")))
    impacts = list(csv.DictReader(open(tmp_path / "out" / "orbit_impacts.csv")))
    single = [r for r in rows if r["branch"] == "0"]
    doubled = [r for r in rows if r["branch"] == "1"]

    def impacts_of(row):
        return [
            (float(i["t"]), float(i["u_n_minus"]))
            for i in impacts
            if i["branch"] == row["branch"] and i["point"] == row["point"]
        ]

    # every orbit of both branches is periodic by the closed form, its impacts b's on the stop
    for row in rows:
        w = float(row["forces[0].omega"])
        span = int(row["period"]) * 2 * math.pi / w
        z0 = state(row)
        assert np.allclose(replay(z0, impacts_of(row), w, span), z0, rtol=0, atol=1e-9)
        assert all(i["body"] == "b" and i["other"] == "stop" for i in impacts)

    # the period doubling: the closed-form multiplier crosses −1 within 2e-8 of the row's ω
    pd = next(r for r in single if r["bifurcation"] == "period_doubling")
    w_pd = float(pd["forces[0].omega"])
    ((t_star, u_minus),) = impacts_of(pd)
    at_impact = flow(0.0, state(pd), t_star, w_pd)
    guess = [t_star, at_impact[0], at_impact[2], -u_minus]
    signs = []
    for w in (w_pd - 2e-8, w_pd + 2e-8):
        phi = monodromy(w, period_one(w, guess))
        signs.append(np.sign(np.linalg.det(phi + np.eye(4))))
    assert signs[0] == -signs[1]

    # the doubled branch: period 2, two impacts, joined at the doubling
    assert len(doubled) >= 4 and all(r["period"] == "2" for r in doubled)
    assert doubled[0]["forces[0].omega"] == pd["forces[0].omega"]
    assert np.array_equal(state(doubled[0]), state(pd))
    spread = []
    for row in doubled[1:]:
        (_, u1), (_, u2) = impacts_of(row)
        spread.append(((u1 - u2) ** 2, float(row["forces[0].omega"]) - w_pd))
    assert all(du > 0 and dw > 0 for du, dw in spread)  # on the side ω > ω_PD
    ratios = [du / dw for du, dw in spread[:3]]
    assert max(ratios) < 1.2 * min(ratios)  # (u₁ − u₂)² ∝ ω − ω_PD near the doubling
