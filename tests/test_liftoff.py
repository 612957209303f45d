"""Lift-off of beads pressed together after a plastic impact (MECHANICS §2, §4).

Two or three beads on one rail start touching, each on its own spring, the
left ones faster than the right ones: at t = 0 a plastic impact gives them
one velocity. The springs' rest positions overlap, so the block moves on
pressed together, a rigid body of mass ``Σ m`` on a spring ``Σ k``, until
the force of one of its contacts reaches zero. That force is, from the
balance of the beads left of the contact, ``λ_c = Σ_{i≤c} (F_i − m_i ẍ)``:
a constant plus one oscillation, whose first zero is a closed form.
"""

from __future__ import annotations

import csv
import math
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from solver.record import write_csv
from solver.scene import parse_scene
from solver.simulation import simulate

RADIUS = 0.05
SPACING = 2.0 * RADIUS  # centre distance of touching beads (m)


def block_scene(masses, stiffnesses, offsets, velocities, t_end):
    """Touching beads at ``x_i = i · SPACING``, each on a spring of rest length 1 m.

    The spring of bead ``i`` holds it at rest at ``x_i + offsets[i]``: its
    anchor lies 1 m to the left (the last bead's 1 m to the right).
    """
    n = len(masses)
    bodies, springs = [], []
    for i in range(n):
        x = i * SPACING
        rest = x + offsets[i]
        side = 1.0 if i == n - 1 else -1.0
        bodies.append(
            {
                "id": f"b{i}",
                "type": "bead",
                "rail_y": 0.0,
                "mass": masses[i],
                "radius": RADIUS,
                "x": x,
                "vx": velocities[i],
            }
        )
        springs.append(
            {
                "a": f"b{i}",
                "anchor": [rest + side, 0.0],
                "stiffness": stiffnesses[i],
                "rest_length": 1.0,
                "damping": 0.0,
            }
        )
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 2,
            "view": "side",
            "gravity": [0.0, -9.81],
            "contact": {"restitution": 0.0, "friction": 0.0, "impact_law": "staged"},
            "boundaries": [],
            "bodies": bodies,
            "springs": springs,
            "forces": [],
            "impulses": [],
            "solver": {"method": "event-driven", "t_end": t_end, "dt_out": 0.002},
        }
    )


def block_contact_forces(masses, stiffnesses, offsets, velocities):
    """Contact forces of the pressed block as ``λ_c(τ) = α_c + β_c cos Wτ + γ_c sin Wτ``.

    Returns ``(W, alpha, beta, gamma)``: W (rad/s), the others (N), one per contact.
    """
    m = np.asarray(masses, dtype=float)
    k = np.asarray(stiffnesses, dtype=float)
    d = np.asarray(offsets, dtype=float)
    V = float(m @ np.asarray(velocities)) / m.sum()  # plastic impact: one velocity
    W = math.sqrt(k.sum() / m.sum())
    # bead 0 at X(τ) = X_eq + (0 − X_eq) cos Wτ + V/W sin Wτ; bead i at X + i·SPACING
    X_eq = float(k @ d) / k.sum()
    # F_i = −k_i (X − d_i) and ẍ = −W² (X − X_eq): λ_c = Σ_{i≤c} (k_i d_i − m_i W² X_eq)
    # + Σ_{i≤c} (m_i W² − k_i) X, with X = X_eq − X_eq cos Wτ + V/W sin Wτ
    alpha, beta, gamma = [], [], []
    for c in range(len(m) - 1):
        mc, kc = m[: c + 1], k[: c + 1]
        slope = float(mc.sum() * W * W - kc.sum())
        base = float(kc @ d[: c + 1] - mc.sum() * W * W * X_eq)
        alpha.append(base + slope * X_eq)
        beta.append(-slope * X_eq)
        gamma.append(slope * V / W)
    return W, np.array(alpha), np.array(beta), np.array(gamma)


def first_zero(W: float, alpha: float, beta: float, gamma: float) -> float:
    """First τ > 0 (s) with ``α + β cos Wτ + γ sin Wτ = 0`` (``inf`` if none)."""
    R = math.hypot(beta, gamma)
    if not abs(alpha) < R:
        return math.inf
    phi = math.atan2(gamma, beta)
    turn = math.acos(-alpha / R)
    roots = []
    for angle in (phi + turn, phi - turn):
        angle = math.fmod(angle, 2.0 * math.pi)
        roots.append((angle + 2.0 * math.pi if angle <= 0.0 else angle) / W)
    return min(roots)


def contact_forces_written(scene, t_end):
    """The lambda column of ``contacts.csv`` (N) of the run, with the run's events."""
    run = simulate(scene, t_end=t_end)
    assert run.status == "finished", run.message
    with tempfile.TemporaryDirectory() as folder:
        files = write_csv(run, folder)
        with Path(files["contacts"]).open(newline="") as handle:
            lam = np.array([float(row["lambda"]) for row in csv.DictReader(handle)])
    return lam, run.events


@st.composite
def pressed_blocks(draw):
    n = draw(st.sampled_from([2, 3]))
    masses = draw(st.lists(st.floats(1.0, 100.0), min_size=n, max_size=n))
    stiffnesses = draw(st.lists(st.floats(500.0, 5000.0), min_size=n, max_size=n))
    # rest positions that overlap: the left beads are held right of the right ones
    offsets = sorted(
        draw(st.lists(st.floats(-0.05, 0.05), min_size=n, max_size=n, unique=True)),
        reverse=True,
    )
    v_last = draw(st.floats(-1.0, 1.0))
    steps = draw(st.lists(st.floats(0.05, 1.0), min_size=n - 1, max_size=n - 1))
    velocities = [v_last + sum(steps[i:]) for i in range(n - 1)] + [v_last]
    return masses, stiffnesses, offsets, velocities


@settings(max_examples=60)
@given(pressed_blocks())
def test_pressed_beads_lift_off_where_their_contact_force_reaches_zero(block):
    W, alpha, beta, gamma = block_contact_forces(*block)
    pressed = alpha + beta  # λ_c just after the impact
    force_scale = 1.0 + float(np.max(np.abs(alpha) + np.hypot(beta, gamma)))
    assume(np.all(pressed > 1e-3 * force_scale))
    zeros = [first_zero(W, *abc) for abc in zip(alpha, beta, gamma, strict=True)]
    contact = int(np.argmin(zeros))
    t_lift = zeros[contact]
    assume(t_lift < 20.0)
    # the engine ends the phase where λ = −1e-9 (1 + the largest |λ| then): a zero
    # crossed so slowly that this threshold moves it by 5e-10 s or more is left out
    a, b, c = alpha[contact], beta[contact], gamma[contact]
    rate = W * (c * math.cos(W * t_lift) - b * math.sin(W * t_lift))
    largest = np.abs(alpha + beta * math.cos(W * t_lift) + gamma * math.sin(W * t_lift)).max()
    assume(1e-9 * (1.0 + largest) < 5e-10 * abs(rate))
    assume(all(z - t_lift > 1e-6 for i, z in enumerate(zeros) if i != contact))
    assert abs(a + b * math.cos(W * t_lift) + c * math.sin(W * t_lift)) < 1e-9 * force_scale

    t_end = t_lift + 0.5  # re-impacts and new lift-offs after the first
    lam, events = contact_forces_written(block_scene(*block, t_end=t_end), t_end)
    assert lam.size
    assert lam.min() >= -1e-9 * force_scale
    lift = next(event for event in events if event.type == "liftoff")
    assert abs(lift.t - t_lift) < 1e-9
    assert {lift.body, lift.other} == {f"b{contact}", f"b{contact + 1}"}


def test_a_bead_lifted_off_meets_the_pressed_pair_again():
    """The plastic re-impact leaves u_n = −3e-15 m/s on the contact the LCP releases.

    That rounding is no closing: the gap opens and b0 hits the pair once more
    (the engine used to stall at the re-impact, 200 events at one instant).
    """
    block = (
        [14.0, 1.0, 1.5],
        [3451.0, 4234.5, 3670.25],
        [1e-12, 0.0, -0.03125],
        [0.3125, 0.25, -0.25],
    )
    W, alpha, beta, gamma = block_contact_forces(*block)
    t_lift = first_zero(W, alpha[0], beta[0], gamma[0])
    lam, events = contact_forces_written(block_scene(*block, t_end=1.0), 1.0)
    assert lam.min() >= -1e-9 * (1.0 + float(np.max(np.abs(alpha) + np.hypot(beta, gamma))))
    lift = next(event for event in events if event.type == "liftoff")
    assert abs(lift.t - t_lift) < 1e-9
    assert sum(event.t > 0.22 and event.type == "impact" for event in events) >= 4
