"""Paper 000 (Grzesikiewicz, Wakulicz: impact in a system of many degrees of freedom).

Its examples 1–4 print exact fractions: ex. 1 (one Poisson stage, a rigid
body on three constraints), ex. 2 (the one-stage model's inadmissible answer
for four balls), ex. 3 (the staged model's tables ``y_k``, ``w_k``, ``λ^(k)``
for the same balls), ex. 4 (the one-parameter family of energy-conserving
admissible answers for three balls, eqs. 40–42). Each row's ``computed``
comes from :func:`solver.impact.resolve_impact`, the bundled ``four_balls``
scene's run, or :mod:`solver.impact_family`.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import numpy as np

from solver.impact import resolve_impact
from solver.impact_family import admissible_family, example_4
from solver.papers.common import (
    PaperOutput,
    Row,
    bundled,
    new_figure,
    run,
    save_figure,
    vector_rows,
    with_scene,
)

TITLE = "Paper 000 — impact in a system of many degrees of freedom (staged Poisson restitution)"


def _f(*values: str | int) -> list[float]:
    return [float(Fraction(v)) for v in values]


G1 = np.array([[-1.0, 0.0, 0.0], [0.0, 1.0, 1.0], [1.0, -1.0, 1.0]])
G4B = np.array([[-1.0, 0.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, -1.0], [0.0, 0.0, 1.0]])
G3B = np.array([[-1.0, 0.0], [1.0, -1.0], [0.0, 1.0]])


def _example_1() -> list[Row]:
    v_minus = np.array([1.0, 0.0, 0.0])  # V = 1
    result = resolve_impact(np.eye(3), G1, v_minus, 1.0, law="poisson")
    stage = result.stages[0]
    item = "ex. 1 (V = 1)"
    return [
        *vector_rows(item, "GT_v_minus", _f(-1, 0, 0), G1.T @ v_minus),
        *vector_rows(item, "lambda_I", _f("2/3", "1/3", 0), stage.lam),
        *vector_rows(item, "V_0", _f("1/3", "1/3", "1/3"), stage.w),
        *vector_rows(item, "v_plus", _f("-1/3", "2/3", "2/3"), result.v_plus),
        *vector_rows(item, "GT_v_plus", _f(1, 0, "4/3"), G1.T @ result.v_plus),
    ]


def _example_2() -> list[Row]:
    v_minus = np.array(_f(1, 0, 0, "1/3"))
    result = resolve_impact(np.eye(4), G4B, v_minus, 1.0, law="poisson")
    stage = result.stages[0]
    item = "ex. 2 (poisson)"
    return [
        *vector_rows(item, "v_0", _f("1/3", "1/3", "1/3", "1/3"), stage.w),
        *vector_rows(item, "lambda", _f("2/3", "1/3", 0), stage.lam),
        *vector_rows(item, "v_plus", _f("-1/3", "2/3", "2/3", "1/3"), result.v_plus),
        *vector_rows(item, "GT_v_plus", _f(1, 0, "-1/3"), G4B.T @ result.v_plus),
        Row(item, "admissible (1 yes, 0 no)", 0.0, float(result.admissible)),
    ]


Y = [_f(1, 0, 0, "1/3"), _f("-1/3", "2/3", "2/3", "1/3"), _f("-1/3", "4/9", "4/9", "7/9")]
W = [_f("1/3", "1/3", "1/3", "1/3"), _f("-1/3", "5/9", "5/9", "5/9")]
LAMBDA = [_f("2/3", "1/3", 0), _f(0, "1/9", "2/9")]


def _example_3() -> list[Row]:
    v_minus = np.array(Y[0])
    result = resolve_impact(np.eye(4), G4B, v_minus, 1.0, law="staged")
    stages = result.stages
    item = "ex. 3 (staged)"
    rows = [Row(item, "stages K", 2.0, float(len(stages)))]
    for k in range(2):
        rows += vector_rows(item, f"y_{k}", Y[k], stages[k].y)
    rows += vector_rows(item, "y_2", Y[2], result.v_plus)
    for k in range(2):
        rows += vector_rows(item, f"w_{k}", W[k], stages[k].w)
    for k in range(2):
        rows += vector_rows(item, f"lambda^({k})", LAMBDA[k], stages[k].lam)
    rows += vector_rows(item, "GT_v_plus", _f("7/9", 0, "1/3"), G4B.T @ result.v_plus)
    rows += vector_rows(item, "lambda (29)", _f("4/3", "8/9", "4/9"), result.impulse)
    rows.append(Row(item, "energy change (35), J", 0.0, result.energy_change))
    # the same impact in a run of the bundled scene of four touching balls
    balls = run(bundled("four_balls"), t_end=0.1)
    first = balls.impacts()[0]
    rows += with_scene(
        vector_rows("ex. 3 (run four_balls)", "v_plus", Y[2], first.v_plus), "four_balls"
    )
    return rows


def _example_4() -> tuple[list[Row], object]:
    v_minus = np.array([1.0, 0.0, 0.0])
    staged = resolve_impact(np.eye(3), G3B, v_minus, 1.0, law="staged")
    sequential = resolve_impact(np.eye(3), G3B, v_minus, 1.0, law="sequential")
    family = admissible_family(np.eye(3), G3B, v_minus)
    z = family.impulse[:, 0]
    s = 1.0 - 1.0 / z
    item = "ex. 4"
    energy = 0.5 * np.sum(family.v_plus**2, axis=1) - 0.5
    rows = [
        *vector_rows(f"{item} staged (z = 4/3)", "v_plus", _f("-1/3", "2/3", "2/3"), staged.v_plus),
        *vector_rows(
            f"{item} staged (z = 4/3)",
            "lambda",
            _f("4/3", "1/3"),
            staged.impulse,
            note=[
                "",
                "the paper prints 1/3; its own formula (z + √(4z − 3z²))/2 at z = 4/3 "
                "gives 2/3, as the program (the impulse balancing the momentum change)",
            ],
        ),
        *vector_rows(
            f"{item} family at z = 1 (sequential law)",
            "v_plus",
            _f(0, 0, 1),
            sequential.v_plus,
        ),
        Row(f"{item} family", "z min", 1.0, float(z.min())),
        Row(f"{item} family", "z max", float(Fraction(4, 3)), float(z.max())),
        Row(
            f"{item} family",
            "s min (42)",
            0.0,
            float(s.min()),
            "(42) states −1/2 ≤ s < 1; its roots meet 1/2 ≤ t ≤ 1 + s only for 0 ≤ s ≤ 1/4, "
            "as the paper then says",
        ),
        Row(f"{item} family", "s max (42)", 0.25, float(s.max())),
        Row(f"{item} family", "largest |energy change|, J", 0.0, float(np.abs(energy).max())),
        Row(
            f"{item} family",
            "largest distance to the closed form",
            0.0,
            float(np.abs(family.v_plus - example_4(np.clip(z, 1.0, 4.0 / 3.0))[1]).max()),
        ),
    ]
    rows = [
        replace(row, scene="newton_cradle_3_sequential")
        if "sequential" in row.item
        else replace(row, scene="newton_cradle_3_staged")
        for row in rows
    ]
    return rows, (family, staged, sequential)


def _family_figure(folder: Path, data: object) -> tuple[str, str]:
    family, staged, sequential = data  # type: ignore[misc]
    z_line = np.linspace(1.0, 4.0 / 3.0, 400)
    impulse_line, v_line = example_4(z_line)
    figure = new_figure(1, 2, size=(10.0, 4.2))
    left, right = figure.axes
    colours = ("C0", "C1", "C2")
    z = family.impulse[:, 0]
    for k in range(3):
        left.plot(z_line, v_line[:, k], color=colours[k], label=f"$\\dot x_{k + 1}(t+0)$ (42)")
        left.plot(z[::4], family.v_plus[::4, k], "o", color=colours[k], ms=3, alpha=0.7)
    for k in range(2):
        right.plot(z_line, impulse_line[:, k], color=colours[k], label=f"$\\lambda_{k + 1}$ (42)")
        right.plot(z[::4], family.impulse[::4, k], "o", color=colours[k], ms=3, alpha=0.7)
    for ax, values, name in (
        (left, (staged.v_plus, sequential.v_plus), "velocity after, m/s"),
        (right, (staged.impulse, sequential.impulse), "impulse, N·s"),
    ):
        ax.plot([4 / 3] * len(values[0]), values[0], "k*", ms=11, label="staged law")
        ax.plot([1.0] * len(values[1]), values[1], "ks", ms=7, mfc="none", label="sequential law")
        ax.set_xlabel("z = μ₁ (paper 000, after (42))")
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    figure.suptitle(
        "Paper 000, example 4 (eqs. 40–42): the energy-conserving admissible answers; "
        "lines: closed form, dots: solver.impact_family",
        fontsize=10,
    )
    stem = "example-4-family"
    save_figure(figure, folder, stem)
    return stem, (
        "Example 4, eqs. (40)–(42): every energy-conserving admissible answer for three balls "
        "(z from 1 to 4/3), sampled by solver.impact_family over the closed form; the staged "
        "law gives the end z = 4/3, the sequential law the end z = 1."
    )


def build(folder: Path) -> PaperOutput:
    """Rows of examples 1–4 and the figure of example 4's family."""
    output = PaperOutput("000", TITLE)
    output.rows += _example_1()
    output.rows += _example_2()
    output.rows += _example_3()
    rows, data = _example_4()
    output.rows += rows
    output.figures.append(_family_figure(folder, data))
    output.figure_scenes["example-4-family"] = "newton_cradle_3_staged"
    return output
