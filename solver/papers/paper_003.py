"""Paper 003 (Cempel: equations of motion of systems with impact forces).

The paper prints formulas, not numbers: the impact force ``(1 + R) m ẋ|ẋ|
δ(x − x₁)``, the rigid stop's motion (28), the periodic motions of a mass
between two stops (40)–(41) and of a mass on a spring against a stop
(44)–(47), and the elastic stop's contact (10). The rows evaluate them with
the bundled scenes' numbers (``m = 1 kg``, ``V = 1 m/s``, ``k = 100 N/m``,
``λ = 10 1/s``, free travel ``x₁ − x₂ = 1 m`` between the stops) against
runs; ``printed`` is the paper's formula evaluated. The elastic stop
(eqs. 1–12) is the bundled ``elastic_stop`` scene with the paper's numbers:
a compliant stop, its contact time, exit velocity and peak force.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from solver.papers.common import PaperOutput, Row, Run, bundled, new_figure, run, save_figure

TITLE = "Paper 003 — equations of motion of systems with impact forces (Cempel)"

LAM = 10.0  # √(k/m), k = 100 N/m, m = 1 kg
V = 1.0
NOTE_44 = (
    "(44) holds with V read as the speed of arrival at the stop; with V = ẋ(0) the departure "
    "velocity, as (42) states (V = −1 m/s here), it gives (2/λ)(π + arctan 2) = 0.8497 s: the sign "
    "under the arctangent slips. General: T = (2/λ)(π − atan2(u/λ, d)), d from the stop to the "
    "rest point (docs/REFERENCES.md)"
)
NOTE_44_NEAR = (
    "stop on the far side of the rest point (the spring presses the mass onto it, x₁ = −0.05 m): "
    "(44) gives 0.8497 s for either reading of V; the motion's period is the other branch of the "
    "arctangent, T = (2/λ)·arctan(u/(λ|x₁|)) = 0.2214 s, which the program finds"
)
NOTE_17 = (
    "the postulate (17) lim kτ²/(2m) = 1 contradicts τ = π/λ (10): kτ²/(2m) = π²/2 for every k. "
    "The impulse (18), 2m ẋ(T), is right nonetheless: the half-sine force k(x − x₁) "
    "integrates to 2kV/λ² = 2mV (docs/PHYSICS.md)"
)


def _amplitude(spring_run: Run) -> float:
    """The largest ``√(x² + (ẋ/λ)²)`` over the run (the rest point at ``x = 0``)."""
    c = spring_run.columns
    return float(np.max(np.hypot(c["mass.x"], c["mass.vx"] / LAM)))


def _period(times: list[float]) -> float:
    return float(np.mean(np.diff(times)))


def _rows_and_runs() -> tuple[list[Row], dict[str, Run]]:
    rows: list[Row] = []
    runs: dict[str, Run] = {}
    # (40): mass between two stops, R = 1
    between = runs["between"] = run(bundled("mass_between_stops"))
    right = [e.t for e in between.impacts() if e.other == "right"]
    item = "(40) mass between stops, x₁ − x₂ = 1 m, V₁ = 1 m/s"
    rows.append(Row(item, "period T = 2(x₁ − x₂)/V₁, s", 2.0, _period(right)))
    rows.append(Row(item, "impulse (18) 2mV, N·s", 2.0, between.impacts()[0].normal_impulse))
    energy = between.columns["E_total"]
    rows.append(Row(item, "energy change over the run, J", 0.0, float(energy[-1] - energy[0])))
    # (29): R < 1, energy lost per impact
    lossy = run(bundled("mass_between_stops", {"contact.restitution": 0.5}), t_end=0.75)
    first = lossy.impacts()[0]
    after = int(np.searchsorted(lossy.t, first.t, side="right"))
    dissipated = float(lossy.columns["E_dissipated"][after])
    item = "(29) R = 0.5, m = 1 kg, ẋ(T) = 1 m/s"
    rows.append(Row(item, "impulse (1 + R) m ẋ(T), N·s", 1.5, first.normal_impulse))
    rows.append(Row(item, "energy lost (1 − R²)/2 m ẋ²(T), J", 0.375, dissipated))
    # (46): stop at the spring's rest point
    at_rest = runs["at_rest"] = run(bundled("mass_spring_stop_at_rest"))
    times = [e.t for e in at_rest.impacts()]
    item = "(46) spring and stop at its rest point, λ = 10 1/s, V = 1 m/s"
    rows.append(Row(item, "period T = π/λ, s", math.pi / LAM, _period(times)))
    rows.append(Row(item, "first impact t, s", math.pi / LAM, times[0]))
    rows.append(Row(item, "amplitude V/λ, m", V / LAM, _amplitude(at_rest)))
    rows.append(Row(item, "impulse 2mV, N·s", 2.0, at_rest.impacts()[0].normal_impulse))
    # (44): stop 0.05 m beyond the rest point
    offset = runs["offset"] = run(bundled("mass_spring_stop_offset"))
    times = [e.t for e in offset.impacts()]
    x1 = 0.05
    T44 = (2.0 / LAM) * (math.pi - math.atan(V / (LAM * x1)))
    item = "(44) spring and stop at x₁ = 0.05 m, V = 1 m/s"
    rows.append(Row(item, "period T, s", T44, _period(times), NOTE_44))
    T = _period(times)
    rows.append(
        Row(
            item,
            "V = −λ x₁ tg(λT/2) at the run's T, m/s",
            V,
            -LAM * x1 * math.tan(LAM * T / 2.0),
            NOTE_44,
        )
    )
    amplitude = math.sqrt(x1**2 * LAM**2 + V**2) / LAM
    rows.append(Row("(47) same", "amplitude √(x₁²λ² + V²)/λ, m", amplitude, _amplitude(offset)))
    near = run(
        bundled(
            "mass_spring_stop_offset",
            {"boundaries[0].a[0]": 0.0, "boundaries[0].b[0]": 0.0, "bodies[0].x": -0.05},
        )
    )
    times = [e.t for e in near.impacts()]
    T44_near = (2.0 / LAM) * (math.pi - math.atan(V / (LAM * -x1)))
    rows.append(
        Row("(44) stop at x₁ = −0.05 m", "period T, s", T44_near, _period(times), NOTE_44_NEAR)
    )
    # (10), (17): the elastic stop
    item = "(10) elastic stop k = 100 N/m, m = 1 kg, V = 1 m/s"
    stop = run(
        bundled(
            "elastic_stop",
            {"bodies[0].mass": 1.0, "bodies[0].vx": V, "boundaries[0].compliance.stiffness": 100.0},
        ),
        t_end=2.0,
    )
    runs["elastic"] = stop
    (touch,), (release,) = stop.events("touch"), stop.events("release")
    rows.append(Row(item, "contact time τ = π/λ, s", math.pi / LAM, release.t - touch.t))
    rows.append(Row(item, "velocity after ẋ(T + τ), m/s", -V, float(stop.columns["mass.vx"][-1])))
    rows.append(
        Row(
            item,
            "peak force V√(km), N",
            V * math.sqrt(100.0),
            release.peak_force,
            "the largest force at the nodes where the contact's impulse is integrated: the "
            "sampled half sine, below its crest by the sampling",
        )
    )
    rows.append(
        Row(
            "(17) postulate",
            "kτ²/(2m) with τ = π/λ",
            1.0,
            100.0 * (math.pi / LAM) ** 2 / 2.0,
            NOTE_17,
        )
    )
    return rows, runs


def _two_panel(title: str) -> tuple[object, object, object]:
    figure = new_figure(2, 1, size=(7.0, 5.6))
    top, bottom = figure.axes
    figure.suptitle(title, fontsize=10)
    return figure, top, bottom


def _figures(runs: dict[str, Run], folder: Path) -> list[tuple[str, str]]:
    out = []
    # figures 4 and 5: the rigid stop, (28), on the first impact of the mass between two stops
    c = runs["between"].columns
    t = c["t"]
    keep = t <= 1.0
    T = 0.5
    x0 = c["mass.x"][0]
    x28 = x0 + V * t - 2 * V * (t - T) * (t > T)
    v28 = V - 2 * V * (t > T)
    figure, top, bottom = _two_panel("Paper 003, figs. 4 and 5: a rigid stop, eq. (28)")
    top.plot(t[keep], c["mass.x"][keep], label="run")
    top.plot(t[keep], x28[keep], "k--", lw=1, label="(28)")
    bottom.plot(t[keep], c["mass.vx"][keep], label="run")
    bottom.plot(t[keep], v28[keep], "k--", lw=1, label="(28)")
    _save(
        figure,
        folder,
        "fig-4-5-rigid-stop",
        "Paper 003, figures 4 and 5: displacement and velocity "
        "of a mass hitting a rigid stop (R = 1), run against eq. (28).",
        out,
    )
    # figures 10 and 11: (46)
    c = runs["at_rest"].columns
    t = c["t"]
    x46 = -(V / LAM) * np.abs(np.sin(LAM * t))
    v46 = -V * np.cos(LAM * t) * np.where(np.sin(LAM * t) >= 0.0, 1.0, -1.0)  # sgn(0⁺) = 1
    figure, top, bottom = _two_panel(
        "Paper 003, figs. 10 and 11: spring and stop at its rest point, eq. (46)"
    )
    top.plot(t, c["mass.x"], label="run")
    top.plot(t, x46, "k--", lw=1, label="(46)")
    bottom.plot(t, c["mass.vx"], label="run")
    bottom.plot(t, v46, "k--", lw=1, label="(46)")
    _save(
        figure,
        folder,
        "fig-10-11-spring-stop",
        "Paper 003, figures 10 and 11: x(t) = −(V/λ)|sin λt| "
        "and ẋ(t) (46), λ = 10 1/s, V = 1 m/s, against a run.",
        out,
    )
    # eq. (41): the sawtooth between two stops (figure 9 draws the system only)
    c = runs["between"].columns
    t = c["t"]
    x1, T = 0.5, 2.0
    phase = np.mod(t - 0.5, T)
    saw = np.where(phase < T / 2, x1 - V * phase, x1 - V * (T - phase))
    figure, top, bottom = _two_panel("Paper 003, eq. (41): mass between two stops (period 2 s)")
    top.plot(t, c["mass.x"], label="run")
    top.plot(t[t >= 0.5], saw[t >= 0.5], "k--", lw=1, label="(41), from the first impact")
    bottom.plot(t, c["mass.vx"], label="run")
    _save(
        figure,
        folder,
        "eq-41-sawtooth",
        "Paper 003, eq. (41): the symmetric sawtooth of a mass "
        "between two stops, T = 2(x₁ − x₂)/V₁ (the paper's figure 9 draws the "
        "system).",
        out,
    )
    return out


def _save(
    figure: object, folder: Path, stem: str, caption: str, out: list[tuple[str, str]]
) -> None:
    """Label and save a :func:`_two_panel` figure of x (m) and ẋ (m/s) against t (s)."""
    top, bottom = figure.axes
    top.set_ylabel("x, m")
    bottom.set_ylabel("ẋ, m/s")
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    bottom.set_xlabel("t, s")
    save_figure(figure, folder, stem)
    out.append((stem, caption))


def build(folder: Path) -> PaperOutput:
    """Rows of (40), (29), (44), (46), (47), (10), (17) and figures 4–5, 10–11, eq. (41)."""
    rows, runs = _rows_and_runs()
    scenes = (
        ("(40)", "mass_between_stops"),
        ("(29)", "mass_between_stops"),
        ("(46)", "mass_spring_stop_at_rest"),
        ("(44) spring", "mass_spring_stop_offset"),
        ("(47)", "mass_spring_stop_offset"),
    )
    rows = [
        replace(row, scene=next((n for start, n in scenes if row.item.startswith(start)), ""))
        for row in rows
    ]
    output = PaperOutput("003", TITLE, rows)
    output.figures += _figures(runs, folder)
    output.figure_scenes.update(
        {
            "fig-4-5-rigid-stop": "mass_between_stops",
            "fig-10-11-spring-stop": "mass_spring_stop_at_rest",
            "eq-41-sawtooth": "mass_between_stops",
        }
    )
    return output
