"""Lift-off where the contact force is round-off of much larger forces (fuzz scene 2698, seed 2026).

The bundled ``two_masses_plastic`` (paper 002: m₁ = 200 kg, m₂ = 100 kg, each on
its own spring, rest positions touching) with stiff springs. Writing
``x₁ = −0.05 + d₁``, ``x₂ = 0.05 + d₂``, the gap is ``d₂ − d₁``: the beads meet
wherever ``d₁ = d₂``, stick (plastic impact) and move as one,
``(m₁ + m₂) d̈ = −2K d``, pressed by ``λ = K d / 3`` until ``d = 0``, where both
springs are at rest length: the lift-off always happens where λ is the
difference of spring forces that are zero, i.e. round-off of ``K·1 m``. With
K = 3.9e7 N/m (fuzz scene 2698: the springs copied 4920 times) that round-off
(a few 1e-9 N) is above the 1e-12 N that decided whether the contact presses:
the lift-off was found again at the same instant until exit 3, "200 events in
a row without time advancing", or a few ulps later phase after phase.

The motion is linear and homogeneous between events, so each cycle is the
last one scaled: from a lift-off at speed ``v`` the beads part
(``dᵢ = v sin(ωᵢ t)/ωᵢ``, ``ωᵢ² = K/mᵢ``) until ``d₁ = d₂`` after ``τ_sep``,
stick with the momentum-weighted speed, and lift off again after ``τ_stuck``
(the next zero of ``d``) at ``r v``. Lift-offs are ``τ_sep + τ_stuck`` apart,
impacts ``τ_sep`` after each lift-off, and the impact losses fall by ``r²``.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq

from solver import cli
from solver.scene import parse_scene
from solver.simulation import simulate

SCENE = Path(__file__).resolve().parents[1] / "resources" / "scenes" / "two_masses_plastic.json"
M1, M2, K0 = 200.0, 100.0, 8000.0
COPIES = 4920  # fuzz scene 2698: every spring 4920 times


def cycle(K):
    """(τ_sep, τ_stuck, r) of one cycle from a lift-off, in closed form (see the module)."""
    w1, w2, wc = math.sqrt(K / M1), math.sqrt(K / M2), math.sqrt(2.0 * K / (M1 + M2))

    def apart(t):  # d₁ − d₂ after a lift-off at v = 1
        return math.sin(w1 * t) / w1 - math.sin(w2 * t) / w2

    grid = np.linspace(1e-3, 2.0 * math.pi, 4001) / w1
    k = next(i for i in range(len(grid) - 1) if apart(grid[i]) * apart(grid[i + 1]) < 0)
    tau_sep = brentq(apart, grid[k], grid[k + 1], xtol=1e-15, rtol=1e-15)
    d = math.sin(w1 * tau_sep) / w1
    V = (M1 * math.cos(w1 * tau_sep) + M2 * math.cos(w2 * tau_sep)) / (M1 + M2)
    tau_stuck = (math.atan2(-d * wc, V) % math.pi) / wc  # d cos(wc t) + V/wc sin(wc t) = 0
    r = V * math.cos(wc * tau_stuck) - d * wc * math.sin(wc * tau_stuck)
    return tau_sep, tau_stuck, r


def stiff_scene(t_end, copies=1):
    data = json.loads(SCENE.read_text(encoding="utf-8"))
    if copies == 1:
        for spring in data["springs"]:
            spring["stiffness"] *= COPIES
    else:
        data["springs"] = [copy.deepcopy(s) for s in data["springs"] for _ in range(copies)]
    data["solver"]["t_end"] = t_end
    return data


def test_cycles_with_a_round_off_lift_off_follow_the_closed_form():
    trajectory = simulate(parse_scene(stiff_scene(0.6)))
    assert trajectory.status == "finished", trajectory.message
    tau_sep, tau_stuck, r = cycle(K0 * COPIES)
    lift = np.array([e.t for e in trajectory.events if e.type == "liftoff"])
    impacts = [e for e in trajectory.events if e.type == "impact"]
    assert len(lift) >= 45  # 0.6 s / 12.5 ms, every one
    np.testing.assert_allclose(np.diff(lift), tau_sep + tau_stuck, rtol=0, atol=1e-12)
    hits = np.array([e.t for e in impacts])
    after = hits[np.searchsorted(hits, lift[:-1])]  # the impact after each lift-off
    # a gap's root is as sharp as the gap's slope allows: the speeds fall by r a cycle
    np.testing.assert_allclose(after[:20] - lift[:20], tau_sep, rtol=0, atol=1e-12)
    np.testing.assert_allclose(after - lift[:-1], tau_sep, rtol=0, atol=1e-10)
    losses = np.array([e.energy_change for e in impacts[2:22]])  # cycles from a lift-off
    np.testing.assert_allclose(losses[1:] / losses[:-1], r * r, rtol=1e-8)


def test_the_fuzz_scene_with_its_copied_springs_answers_through_the_cli(tmp_path):
    # a smaller copy of scene 2698 (its t_end 2 s): on the old code exit 3 at t = 0.036 s
    scene = tmp_path / "scene.json"
    scene.write_text(json.dumps(stiff_scene(0.1, copies=COPIES)), encoding="utf-8")
    assert cli.main(["run", str(scene), "--out", str(tmp_path / "out")]) == 0
    rows = (tmp_path / "out" / "events.csv").read_text().splitlines()
    assert sum(",liftoff," in row for row in rows) == 8


@pytest.mark.parametrize("scale", [1.0, 30.0, 300.0])
def test_a_stiffer_scene_with_faster_beads_is_the_same_motion_sooner(scale):
    # K·s² and v·s: x(t) of the scene is x(s·t) of the bundled one; the events agree to
    # round-off (the first 30 s: later the amplitudes reach round-off themselves)
    base = json.loads(SCENE.read_text(encoding="utf-8"))
    base["solver"].update(t_end=30.0, dt_out=0.05)
    fast = copy.deepcopy(base)
    for spring in fast["springs"]:
        spring["stiffness"] *= scale * scale
    for body in fast["bodies"]:
        body["vx"] *= scale
    fast["solver"].update(t_end=30.0 / scale, dt_out=0.05 / scale)
    slow_run, fast_run = simulate(parse_scene(base)), simulate(parse_scene(fast))
    assert fast_run.status == slow_run.status == "finished", fast_run.message
    slow = [(e.type, e.t) for e in slow_run.events if e.type in ("impact", "liftoff")]
    quick = [(e.type, e.t * scale) for e in fast_run.events if e.type in ("impact", "liftoff")]
    assert [k for k, _ in quick] == [k for k, _ in slow]
    np.testing.assert_allclose([t for _, t in quick], [t for _, t in slow], rtol=1e-9)
