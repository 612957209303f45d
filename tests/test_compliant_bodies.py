"""Compliant body–body contacts (``contact.compliance``): beads, wheels, the Hertzian cradle.

The expected numbers are closed forms (the two-body linear contact: the
relative motion of the reduced mass μ is paper 003's half sine) and an
independent DOP853 integration of the Hertz chain written here.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from solver.scene import parse_scene
from solver.simulation import simulate

SCENES = Path(__file__).resolve().parents[1] / "resources" / "scenes"


def bead(i: int, m: float, r: float, x: float, v: float) -> dict:
    return {"id": f"b{i}", "type": "bead", "mass": m, "radius": r, "x": x, "rail_y": 0.0, "vx": v}


def wheel(i: int, m: float, r: float, x: float, v: float) -> dict:
    return {
        "id": f"w{i}",
        "type": "wheel",
        "mass": m,
        "inertia": 0.5 * m * r * r,
        "radius": r,
        "position": [x, 0.3],
        "velocity": [v, 0.0],
    }


def scene(bodies: list[dict], law: dict, t_end: float, dt_out: float, method: str = "event-driven"):
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 2,
            "gravity": [0.0, 0.0],
            "contact": {"compliance": law},
            "bodies": bodies,
            "solver": {"t_end": t_end, "dt_out": dt_out, "method": method},
        }
    )


def momentum(frame, masses: np.ndarray, ix: list[int]) -> float:
    return float(masses @ frame.v[ix])


def balance(run) -> np.ndarray:
    return np.array(
        [
            f.energy.kinetic + f.energy.potential + f.energy.spring + f.energy.dissipated
            for f in run.frames
        ]
    )


@pytest.mark.parametrize("kind", ["bead", "wheel"])
def test_two_equal_bodies_on_a_linear_contact_exchange_their_velocities(kind):
    """μ = m/2 on a spring k: contact time π√(μ/k), relative velocity reversed (paper 003)."""
    m, r, k, v = 0.5, 0.05, 4e4, 2.0
    make = bead if kind == "bead" else wheel
    run = simulate(
        scene([make(0, m, r, 0.0, v), make(1, m, r, 0.3, 0.0)], {"stiffness": k}, 0.3, 1e-3)
    )
    assert run.status == "finished", run.message
    (touch,) = [e for e in run.events if e.type == "touch"]
    (release,) = [e for e in run.events if e.type == "release"]
    assert touch.t == pytest.approx((0.3 - 2 * r) / v, abs=1e-12)
    assert release.t - touch.t == pytest.approx(math.pi * math.sqrt(0.5 * m / k), abs=1e-9)
    assert {touch.body, touch.other} == {f"{kind[0]}0", f"{kind[0]}1"}
    ix = [0, 3] if kind == "wheel" else [0, 1]  # each body's x velocity
    last = run.frames[-1]
    assert last.v[ix[0]] == pytest.approx(0.0, abs=1e-9)
    assert last.v[ix[1]] == pytest.approx(v, abs=1e-9)
    assert release.normal_impulse == pytest.approx(m * v, rel=1e-9)  # ∫F dt
    # equal and opposite forces: the momentum is kept to round-off on every frame (two
    # beads are a closed-form linear flow, whose modal sums keep it to 2.1e-14 N·s)
    for f in run.frames:
        assert m * (f.v[ix[0]] + f.v[ix[1]]) == pytest.approx(m * v, abs=1e-13)
    assert np.ptp(balance(run)) <= 1e-9 * 0.5 * m * v * v
    forces = [c.lam for f in run.frames for c in f.contacts]
    assert forces and min(forces) >= 0.0
    assert max(forces) <= v * math.sqrt(k * 0.5 * m) * (1 + 1e-9)  # the half sine's crest


# ------------------------------------------------------------------ the Hertzian cradle

E, NU, R_BALL, RHO = 210e9, 0.3, 0.02, 7850.0  # steel, radius 0.02 m
# Hertz, two equal spheres: k = (4/3) E* √R*, E* = E/(2(1 − ν²)), R* = R/2
K_HERTZ = 4.0 / 3.0 * (E / (2 * (1 - NU**2))) * math.sqrt(R_BALL / 2)


def hertz_chain(m: float, k: float, v: float, n: int) -> np.ndarray:
    """Final velocities of ``n`` touching balls, the first arriving at ``v``: DOP853 here.

    ``m ẍ_i = F_(i−1) − F_i``, ``F_i = k max(0, δ_i)^1.5``, ``δ_i = x_i − x_(i+1)``
    (the overlap of balls i and i+1 measured from touching), from the first
    touch to long after the last release.
    """

    def rhs(t, y):
        x, u = y[:n], y[n:]
        delta = np.maximum(x[:-1] - x[1:], 0.0)
        force = k * delta**1.5
        acc = np.zeros(n)
        acc[:-1] -= force / m
        acc[1:] += force / m
        return np.concatenate((u, acc))

    y0 = np.zeros(2 * n)
    y0[n] = v
    tau = 2.943 * (5 * (m / 2) * v * v / (4 * k)) ** 0.4 / v  # one contact's Hertz time
    sol = solve_ivp(
        rhs, (0.0, 20 * tau), y0, method="DOP853", rtol=3e-14, atol=1e-18, max_step=tau / 400
    )
    return sol.y[n:, -1]


def test_hertz_stiffness_of_the_preset_is_hertz_theory_for_steel():
    data = json.loads((SCENES / "newton_cradle_5_hertz.json").read_text())
    law = data["contact"]["compliance"]
    assert law["exponent"] == 1.5
    assert law["stiffness"] == pytest.approx(K_HERTZ, rel=1e-6)  # 1.538e10 N/m^1.5
    masses = [b["mass"] for b in data["bodies"]]
    assert masses == pytest.approx([4 / 3 * math.pi * R_BALL**3 * RHO] * 5, rel=1e-6)
    assert all(b["radius"] == R_BALL for b in data["bodies"])


def test_the_hertzian_cradle_keeps_momentum_and_energy_and_its_last_ball_leaves_with_nearly_v():
    run = simulate(parse_scene(json.loads((SCENES / "newton_cradle_5_hertz.json").read_text())))
    assert run.status == "finished", run.message
    data = json.loads((SCENES / "newton_cradle_5_hertz.json").read_text())
    m = data["bodies"][0]["mass"]
    v = data["bodies"][0]["vx"]
    masses = np.full(5, m)
    for f in run.frames:  # equal and opposite forces: round-off
        assert momentum(f, masses, list(range(5))) == pytest.approx(m * v, abs=1e-14)
    # no damping: the energy comes back to round-off, that of the overlaps here:
    # δ_m ≈ 5.4e-5 m is a difference of coordinates up to X = 0.22 m, known to
    # ε·X/δ_m ≈ 9e-13 (2.3e-12 measured; 4.7e-10 before the tolerances of
    # pressing phases were tightened)
    assert np.ptp(balance(run)) <= 5e-12 * 0.5 * m * v * v
    last = run.frames[-1]
    assert last.energy.spring == 0.0  # every contact released
    expected = hertz_chain(m, data["contact"]["compliance"]["stiffness"], v, 5)
    # 1.2e-12 measured (2.4e-10 before the tolerances of pressing phases were tightened)
    np.testing.assert_allclose(last.v, expected, atol=1e-11 * v)
    # what the staged law idealises: the last ball leaves with nearly V, the others
    # keep small velocities (dispersion of the Hertz chain)
    assert 0.95 * v < last.v[4] < v
    assert np.all(np.abs(last.v[:4]) < 0.15 * v)
    touches = [e for e in run.events if e.type == "release"]
    assert [(e.body, e.other) for e in touches][-1] == ("ball4", "ball5")


def test_the_time_stepper_takes_body_body_compliance_as_a_force():
    m, r, k, v = 0.5, 0.05, 4e4, 2.0
    data = scene([bead(0, m, r, 0.0, v), bead(1, m, r, 0.3, 0.0)], {"stiffness": k}, 0.3, 1e-3)
    run = simulate(data, method="time-stepping")
    assert run.status == "finished", run.message
    assert not [e for e in run.events if e.type == "impact"]
    assert run.frames[-1].v[1] == pytest.approx(v, rel=2e-2)
    assert run.frames[-1].v[0] == pytest.approx(0.0, abs=4e-2)


def test_too_many_bodies_with_contact_compliance_are_refused_by_name(tmp_path):
    from solver import cli

    bodies = [bead(i, 1.0, 0.01, 0.05 * i, 0.0) for i in range(51)]
    path = tmp_path / "scene.json"
    path.write_text(
        json.dumps(
            {
                "format": "impactgui-scene",
                "version": 2,
                "gravity": [0.0, 0.0],
                "contact": {"compliance": {"stiffness": 1e4}},
                "bodies": bodies,
                "solver": {"t_end": 0.1, "dt_out": 0.01},
            }
        )
    )
    import io

    stream = io.StringIO()
    status = cli.main(["run", str(path), "--out", str(tmp_path / "out")], stderr=stream)
    assert status == 2
    assert stream.getvalue().startswith(
        "contact.compliance: compliant contacts between bodies are computed for at most 50 disks"
    )
