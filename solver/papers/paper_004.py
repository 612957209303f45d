"""Paper 004 (Grzesikiewicz, Zbiciak, Rutczyńska-Wdowiak: a wheel against a curb, Coulomb friction).

Its worked simulation: ``m = 10 kg``, ``J = 0.05 kg m²``, ``r = 0.1 m``,
``h = 5 cm``, ``l = 0.5 m``, ``g = 9.81``, ``μ = 0.4``, ``X₀ = (0.8, 0.2, 0)``,
``V₀ = (−5, −3, 0)``, ``t ∈ (0, 1] s``, plastic impacts (``β = 0``) and
``β = 0.3`` — the bundled ``wheel_curb_e0`` and ``wheel_curb_e03`` scenes. It
prints no numbers; the rows are what its formulas give with these
parameters: the first impact (on the lower floor, segment IV) from
eqs. (43)–(55), and the forces and accelerations at the singular point B
from (82)–(93), each against the program. Figures 10–14 are redrawn from
the two runs, the free flight to the first impact (a parabola) overlaid.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from solver.papers.common import (
    PaperOutput,
    Row,
    Run,
    bundled,
    new_figure,
    run,
    save_figure,
    with_scene,
)

TITLE = "Paper 004 — a wheel hitting a curb, with Coulomb friction"

m, J, r, h, G, MU = 10.0, 0.05, 0.1, 0.05, 9.81, 0.4
X0, Y0, VX0, VY0 = 0.8, 0.2, -5.0, -3.0
A = math.sqrt(r * r - (r - h) ** 2)  # (4b)
L1 = 0.4  # l − r
NOTE_46 = (
    "(46) writes λ̃ = [λ̃ − ρẋ⁺]⁺; the floor's normal speed is ẏ⁺ (G_IV = (0, 1, 0)), so "
    "λ̃ = −mẏ⁻ as the paper's next line says; the program uses ẏ⁺"
)
NOTE_92B = (
    "(92b) prints ẍ = −μg and φ̈ = −μmgr/J; with τ₁ = τ₂ = −1 the paper's own (82) and (84) "
    "give ẍ = +μg (the wheel drives away from the curb, +x, as its text says) and "
    "φ̈ = +μmgr/J (friction slows the spin)"
)
NOTE_93B = (
    "the paper's corner friction μ‖G‖λ₁τ₁H_III with its unnormalised H_III is ‖G‖ = 2 times "
    "Coulomb's μN (docs/MECHANICS.md §1); the program uses μN, so the two forces share the "
    "weight differently (both give ẍ = ÿ = 0, the wheel spinning in place, (93b))"
)


def _project(v_t: float, capacity: float) -> tuple[float, float]:
    """``τ = Π(τ + ρ v_t⁺)`` with ``v_t⁺ = v_t − capacity·τ``: returns ``(τ, v_t⁺)``."""
    if abs(v_t) <= capacity:
        return (v_t / capacity if capacity > 0 else 0.0), 0.0
    tau = math.copysign(1.0, v_t)
    return tau, v_t - capacity * tau


def first_impact(beta: float) -> dict[str, float]:
    """The first impact on the lower floor by eqs. (43)–(55), from the paper's initial state."""
    # free flight: y = Y0 + VY0 t − g t²/2 reaches r
    t1 = (VY0 + math.sqrt(VY0 * VY0 + 2 * G * (Y0 - r))) / G
    vx, vy, w = VX0, VY0 - G * t1, 0.0
    lam = -m * vy  # (44), (46) with ẏ⁺ = 0
    K = 1.0 / m + r * r / J  # (49)
    tau, _ = _project(vx + r * w, K * MU * lam)  # (47), (49)
    vx_p = vx - MU * lam * tau / m  # (43)
    vy_p = vy + lam / m  # (44)
    w_p = w - MU * lam * r * tau / J  # (45)
    out = {"t": t1, "vy_minus": vy, "lambda": lam, "tangent": -MU * lam * tau}
    if beta == 0.0:
        out.update(vx=vx_p, vy=vy_p, omega=w_p, normal=lam)
        return out
    lam_s = beta * lam  # (50)
    tau_s, _ = _project(vx_p + r * w_p, K * MU * lam_s)  # (54), (55)
    out.update(
        vx=vx_p - MU * lam_s * tau_s / m,  # (51)
        vy=vy_p + lam_s / m,  # (52)
        omega=w_p - MU * lam_s * r * tau_s / J,  # (53)
        normal=lam + lam_s,
        tangent=-MU * (lam * tau + lam_s * tau_s),
    )
    return out


def _first_impact_rows(wheel_run: Run, beta: float) -> list[Row]:
    formula = first_impact(beta)
    event = wheel_run.impacts()[0]
    item = f"first impact, β = {beta:g} ((43)–(55))"
    v = np.asarray(event.v_plus)
    v_minus = np.asarray(event.v_minus)
    return [
        Row(item, "t, s", formula["t"], event.t),
        Row(item, "ẏ⁻, m/s", formula["vy_minus"], float(v_minus[1])),
        Row(
            item,
            "normal impulse (1 + β)λ̃, N·s",
            formula["normal"],
            event.normal_impulse,
            NOTE_46 if beta == 0.0 else "",
        ),
        Row(item, "friction impulse along +x, N·s", formula["tangent"], event.tangent_impulse),
        Row(item, "ẋ after, m/s", formula["vx"], float(v[0])),
        Row(item, "ẏ after, m/s", formula["vy"], float(v[1])),
        Row(item, "φ̇ after, rad/s", formula["omega"], float(v[2])),
    ]


def _at_b(omega: float) -> tuple[dict[str, float], np.ndarray]:
    """Contact forces (by feature) and the acceleration of the wheel resting at B spinning at ω."""
    scene = bundled(
        "wheel_curb_e0",
        {
            "bodies[0].position[0]": L1 + A,
            "bodies[0].position[1]": r,
            "bodies[0].velocity[0]": 0.0,
            "bodies[0].velocity[1]": 0.0,
            "bodies[0].angular_velocity": omega,
        },
    )
    short = run(scene, t_end=1e-4, dt_out=1e-5)
    f0, f1 = short.trajectory.frames[0], short.trajectory.frames[1]
    forces = {"floor": 0.0, "corner": 0.0}
    for contact in f0.contacts:
        forces["corner" if "#v" in contact.other else "floor"] += contact.lam
    acceleration = (np.asarray(f1.v) - np.asarray(f0.v)) / (f1.t - f0.t)
    return forces, acceleration


def _point_b_rows() -> list[Row]:
    rows: list[Row] = []
    f_b = -A / math.sqrt(r * r - A * A)  # (80)
    norm_g = math.sqrt(1.0 + f_b * f_b)
    # φ̇ < 0: (92b)
    forces, acc = _at_b(-10.0)
    item = "point B, φ̇ < 0 ((92b))"
    rows += [
        Row(item, "corner force ‖G‖λ₁, N", 0.0, forces["corner"]),
        Row(item, "floor force λ₂, N", m * G, forces["floor"]),
        Row(item, "ẍ, m/s²", -MU * G, float(acc[0]), NOTE_92B),
        Row(item, "ÿ, m/s²", 0.0, float(acc[1])),
        Row(item, "φ̈, rad/s²", -MU * m * G * r / J, float(acc[2]), NOTE_92B),
    ]
    # φ̇ > 0: (91)–(93b) with the paper's own scaling
    gamma1 = 1.0 - MU * f_b * norm_g  # (92), τ₁ = 1
    gamma2 = MU * f_b + 1.0  # (91), τ₂ = 1
    lam1 = m * G * (1.0 - gamma2) / (norm_g**2 - gamma1 * gamma2)
    lam2 = m * G - gamma1 * lam1
    phi_dd = (-MU * norm_g * r * lam1 - MU * r * lam2) / J  # (84)
    forces, acc = _at_b(10.0)
    item = f"point B, φ̇ > 0 ((93b): ‖G‖² = {norm_g**2:.4g} > γ₁ = {gamma1:.4g})"
    rows += [
        Row(item, "corner force ‖G‖λ₁, N", norm_g * lam1, forces["corner"], NOTE_93B),
        Row(item, "floor force λ₂, N", lam2, forces["floor"], NOTE_93B),
        Row(item, "ẍ, m/s²", 0.0, float(acc[0])),
        Row(item, "ÿ, m/s²", 0.0, float(acc[1])),
        Row(item, "φ̈, rad/s²", phi_dd, float(acc[2]), NOTE_93B),
    ]
    return rows


def _flight(t: np.ndarray) -> tuple[np.ndarray, ...]:
    return X0 + VX0 * t, Y0 + VY0 * t - 0.5 * G * t * t, VX0 + 0 * t, VY0 - G * t


def _curb(ax: object) -> None:
    ax.plot([0.0, 0.0, L1, L1, 1.0], [0.6, h, h, 0.0, 0.0], color="0.3", lw=2)


def _positions_figure(wheel_run: Run, beta: float, number: int, folder: Path) -> tuple[str, str]:
    from matplotlib.patches import Circle

    c = wheel_run.columns
    figure = new_figure(size=(7.5, 4.0))
    (ax,) = figure.axes
    _curb(ax)
    for t_show in np.arange(0.0, 1.0001, 0.04):
        k = int(np.searchsorted(c["t"], t_show))
        k = min(k, len(c["t"]) - 1)
        x, y, phi = c["wheel.x"][k], c["wheel.y"][k], c["wheel.phi"][k]
        ax.add_patch(Circle((x, y), r, fill=False, color="C0", lw=0.8, alpha=0.8))
        ax.plot([x, x + r * math.cos(phi)], [y, y + r * math.sin(phi)], color="C3", lw=0.8)
    ax.plot(c["wheel.x"], c["wheel.y"], color="C0", lw=0.6, alpha=0.5)
    ax.set_aspect("equal")
    ax.set_xlim(-0.05, 0.95)
    ax.set_ylim(-0.02, 0.5)
    ax.set_xlabel("x, m")
    ax.set_ylabel("y, m")
    kind = "plastic collisions" if beta == 0.0 else "resilient-plastic collisions"
    ax.set_title(
        f"Paper 004, fig. {number}: wheel positions every 0.04 s ({kind}, β = {beta:g})",
        fontsize=10,
    )
    stem = f"fig-{number}-positions-beta-{beta:g}"
    save_figure(figure, folder, stem)
    return stem, (
        f"Paper 004, figure {number}: the sequence of wheel positions ({kind}, "
        f"β = {beta:g}); a red radius shows the rotation."
    )


def _comparison_figures(runs: dict[float, Run], folder: Path) -> list[tuple[str, str]]:
    out = []
    t1 = first_impact(0.0)["t"]
    tf = np.linspace(0.0, t1, 50)
    fx, fy, fvx, fvy = _flight(tf)
    styles = {0.0: ("C0", "-", "plastic, β = 0"), 0.3: ("C1", "--", "β = 0.3")}
    # figure 12: paths of the centre
    figure = new_figure(size=(7.5, 4.0))
    (ax,) = figure.axes
    _curb(ax)
    for beta, wheel_run in runs.items():
        colour, line, label = styles[beta]
        ax.plot(
            wheel_run.columns["wheel.x"],
            wheel_run.columns["wheel.y"],
            line,
            color=colour,
            label=label,
        )
    ax.plot(fx, fy, "k:", lw=2, label="free flight (parabola) to the first impact")
    ax.set_aspect("equal")
    ax.set_xlabel("x, m")
    ax.set_ylabel("y, m")
    ax.legend(fontsize=8)
    ax.set_title("Paper 004, fig. 12: paths of the wheel's centre", fontsize=10)
    save_figure(figure, folder, "fig-12-paths")
    out.append(
        (
            "fig-12-paths",
            "Paper 004, figure 12: trajectories of the wheel's centre, "
            "plastic (solid) and β = 0.3 (dashed).",
        )
    )
    # figures 13 and 14: time responses
    for number, keys, closed, labels in (
        (13, ("wheel.x", "wheel.y", "wheel.phi"), (fx, fy, 0 * tf), ("x, m", "y, m", "φ, rad")),
        (
            14,
            ("wheel.vx", "wheel.vy", "wheel.omega"),
            (fvx, fvy, 0 * tf),
            ("ẋ, m/s", "ẏ, m/s", "φ̇, rad/s"),
        ),
    ):
        figure = new_figure(3, 1, size=(7.0, 7.5))
        for ax, key, ref, label in zip(figure.axes, keys, closed, labels, strict=True):
            for beta, wheel_run in runs.items():
                colour, line, name = styles[beta]
                ax.plot(wheel_run.t, wheel_run.columns[key], line, color=colour, label=name)
            ax.plot(tf, ref, "k:", lw=2, label="free flight")
            ax.set_ylabel(label)
            ax.grid(alpha=0.3)
        figure.axes[0].legend(fontsize=8)
        figure.axes[-1].set_xlabel("t, s")
        what = "positions and angle" if number == 13 else "velocities and angular velocity"
        figure.suptitle(f"Paper 004, fig. {number}: time responses, {what}", fontsize=10)
        stem = f"fig-{number}-time-responses"
        save_figure(figure, folder, stem)
        out.append(
            (
                stem,
                f"Paper 004, figure {number}: {what} of the wheel, plastic (solid) "
                "and β = 0.3 (dashed), the free flight dotted.",
            )
        )
    return out


def build(folder: Path) -> PaperOutput:
    """Rows of the first impact for both β and of point B; figures 10–14."""
    output = PaperOutput("004", TITLE)
    runs = {0.0: run(bundled("wheel_curb_e0")), 0.3: run(bundled("wheel_curb_e03"))}
    for beta, wheel_run in runs.items():
        scene = "wheel_curb_e0" if beta == 0.0 else "wheel_curb_e03"
        output.rows += with_scene(_first_impact_rows(wheel_run, beta), scene)
        phi = wheel_run.columns["wheel.phi"][wheel_run.t < wheel_run.impacts()[0].t]
        output.rows.append(
            Row(
                f"figs. 13–14, β = {beta:g}",
                "largest |φ| before the first impact, rad",
                0.0,
                float(np.max(np.abs(phi))),
            )
        )
    output.rows += _point_b_rows()
    output.figures.append(_positions_figure(runs[0.0], 0.0, 10, folder))
    output.figures.append(_positions_figure(runs[0.3], 0.3, 11, folder))
    output.figures += _comparison_figures(runs, folder)
    for stem, _caption in output.figures:
        output.figure_scenes[stem] = "wheel_curb_e0" if "beta-0." not in stem else "wheel_curb_e03"
    return output
