"""Paper 001 (Sun You-lie: impulsive motion of a nonholonomic system without multipliers).

Its example: an axle of length ``2l`` and mass ``M`` on two wheels (mass
``m``, radius ``r``) rolling without slip, ``φ = π/4``, ``M = m``, ``l = r``,
the axle turning at ``ω`` and wheel A not spinning, hit at its centre by an
impulse ``S`` perpendicular to it. The paper prints the velocities before
and after as formulas and its matrix ``[C]`` (2.6); the rows evaluate them at
the bundled ``axle_cart`` scene's numbers (``m = M = 1 kg``, ``l = r = 0.1 m``,
``ω = π/2 rad/s``, ``S = 1 N·s``; the scene turns the axle by whole turns to
``φ = π/4`` at the impulse, ``t = 4 s``) against that run, and against the
classical form with multipliers (:func:`solver.nonholonomic.multiplier_response`).
The paper's figures are drawings of the cart, not plots: nothing to redraw.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from solver.nonholonomic import AxleCart, maggi_basis, multiplier_response
from solver.papers.common import PaperOutput, Row, bundled, run, vector_rows

TITLE = "Paper 001 — impulsive motion of a nonholonomic system (Maggi's equations)"

M = m = 1.0
L = R = 0.1
OMEGA = math.pi / 2
S = 1.0
ROOT2 = math.sqrt(2.0)

SLIP_Y0 = (
    "the paper prints ẏ_C0 = −√2/2·lω, which violates its own constraint (b)′ "
    "(ẏ_C − l cos φ φ̇ − r cos φ θ̇_A = 0 gives +√2/2·lω); the program keeps the constraint"
)
SLIP_Y = (
    "follows the slip in ẏ_C0: with ẏ_C0 = +√2/2·lω the paper's own equations give "
    "ẏ_C = −√2/8·S/m + √2/2·lω, which the program computes"
)


def _printed_before() -> list[float]:
    return [-ROOT2 / 2 * L * OMEGA, -ROOT2 / 2 * L * OMEGA, OMEGA, 0.0, 2 * OMEGA]


def _printed_after() -> list[float]:
    return [
        ROOT2 / 8 * S / m - ROOT2 / 2 * L * OMEGA,
        -ROOT2 / 8 * S / m - ROOT2 / 2 * L * OMEGA,
        OMEGA,
        -S / (4 * m * R),
        -S / (4 * m * R) + 2 * OMEGA,
    ]


NAMES = ("xC_dot", "yC_dot", "phi_dot", "thetaA_dot", "thetaB_dot")


def _rows() -> list[Row]:
    cart_run = run(bundled("axle_cart"), t_end=4.5)
    event = cart_run.events("impulse")[0]
    before, after = np.asarray(event.v_minus), np.asarray(event.v_plus)
    rows: list[Row] = []
    scene = "axle_cart"
    item = "example, before the impulse (run axle_cart)"
    for k, name in enumerate(NAMES):
        note = SLIP_Y0 if name == "yC_dot" else ""
        rows.append(Row(item, name, _printed_before()[k], float(before[k]), note, scene))
    item = "example, after the impulse (run axle_cart)"
    for k, name in enumerate(NAMES):
        note = SLIP_Y if name == "yC_dot" else ""
        rows.append(Row(item, name, _printed_after()[k], float(after[k]), note, scene))
    # the classical equations with multipliers, at φ = π/4 exactly
    cart = AxleCart(axle_mass=M, half_length=L, wheel_mass=m, wheel_radius=R)
    q = np.array([0.0, 0.0, math.pi / 4, 0.0, 0.0])
    normal = np.array([-math.sin(math.pi / 4), math.cos(math.pi / 4)])
    impulse = cart.generalized_impulse(q, 0.0, -S * normal)
    v_minus = np.array([-ROOT2 / 2 * L * OMEGA, ROOT2 / 2 * L * OMEGA, OMEGA, 0.0, 2 * OMEGA])
    v_plus, _sigma = multiplier_response(
        cart.mass_matrix(q), cart.constraint_matrix(q), impulse, v_minus
    )
    item = "example, after (multiplier form)"
    for k, name in enumerate(NAMES):
        note = SLIP_Y if name == "yC_dot" else ""
        rows.append(Row(item, name, _printed_after()[k], float(v_plus[k]), note))
    # [C] of (2.6) in the paper's order q = (x_C, θ_B, y_C, φ, θ_A), independent x_C and θ_B
    order = [0, 4, 1, 2, 3]
    C = maggi_basis(cart.constraint_matrix(q), independent=[0, 4])[order]
    printed_C = [[1, 0], [0, 1], [-1, 0], [ROOT2 / R, 1], [-2 * ROOT2 / R, -1]]
    for i in range(5):
        rows += vector_rows("[C] (2.6), l = r = 0.1 m", f"C[{i}]", printed_C[i], C[i])
    inertia = cart.mass_matrix(q)[2, 2] / (m * R * R)
    rows.append(Row("ΔP (3.3)′", "φ coefficient / (m r²)", 17 / 6, float(inertia)))
    return rows


def build(folder: Path) -> PaperOutput:
    """The example's velocities before and after, its ``[C]`` and the axle's inertia."""
    del folder  # no figures: the paper draws the cart, it plots nothing
    return PaperOutput("001", TITLE, _rows())
