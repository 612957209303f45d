"""Paper 002 (Grzesikiewicz, Zbiciak: simulating a mechanical system with impacts; slides).

Its computed example: ``m₁ = 200 kg``, ``m₂ = 100 kg``, each on a spring
``k = 8000 N/m`` to its rest position, one unilateral constraint
``x₂ − x₁ ≥ 0``, ``X(0) = [−0.3, 0.3] m``, ``V(0) = [−1, 1] m/s``, plastic
impacts and elastic ones (``β = 1``). The slides print the equations and
plot the displacements, velocities, reactions and impulses — no numbers. The
rows are what the plots show: the impact and lift-off times and the impulses
of both cases. Where the paper's equations have a closed form
(:mod:`solver.reference`: free oscillators to the first impact, Newton's law
across it, up to the next impact) the ``printed`` column holds it (the item
says "closed form"); later events are the run's alone (``printed`` empty).
The figures redraw the slides from runs of the bundled ``two_masses_plastic``
and ``two_masses_elastic`` scenes, the closed form overlaid (dashed).
"""

from __future__ import annotations

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
from solver.reference import recognise

TITLE = "Paper 002 — event-driven simulation with impacts (Gauss' principle; slides)"

X0 = np.array([-0.3, 0.3])
"""The paper's initial displacements, m: the scenes' positions minus these are the rest points."""
CASES = (("two_masses_plastic", "plastic, β = 0"), ("two_masses_elastic", "elastic, β = 1"))
SLIDES_PLASTIC = ("displacements", "velocities", "reactions and impulses")
SLIDES_ELASTIC = ("displacements", "velocities", "impulses")
POLISH = {
    "displacements": "Przebiegi czasowe przemieszczeń",
    "velocities": "Przebiegi czasowe prędkości",
    "reactions and impulses": "Przebiegi czasowe reakcji i impulsów",
    "impulses": "Przebiegi czasowe impulsów",
}


def _rows(case_run: Run, label: str) -> list[Row]:
    reference = recognise(case_run.scene)
    assert reference is not None, "paper 002's scenes have a closed form up to their second impact"
    values = reference.values
    impacts = case_run.impacts()
    rows: list[Row] = []
    closed = f"{label}, closed form"
    first = impacts[0]
    rows.append(Row(closed, "t impact 1, s", values["t_first_impact"], first.t))
    rows.append(Row(closed, "impulse 1, N·s", values["impulse"], first.normal_impulse))
    rows.append(Row(closed, "v1 after impact 1, m/s", values["v1_after"], float(first.v_plus[0])))
    rows.append(Row(closed, "v2 after impact 1, m/s", values["v2_after"], float(first.v_plus[1])))
    if "t_liftoff" in values:
        lift = case_run.events("liftoff")[0]
        rows.append(Row(closed, "t lift-off 1, s", values["t_liftoff"], lift.t))
    if len(reference.impact_times) > 1:
        rows.append(Row(closed, "t impact 2, s", reference.impact_times[1], impacts[1].t))
    later = f"{label}, run"
    for k, event in enumerate(impacts[1:], start=2):
        if k > 2 or len(reference.impact_times) < 2:
            rows.append(Row(later, f"t impact {k}, s", None, event.t))
        rows.append(Row(later, f"impulse {k}, N·s", None, event.normal_impulse))
    for k, event in enumerate(case_run.events("liftoff"), start=1):
        rows.append(Row(later, f"t lift-off {k}, s", None, event.t))
    return rows


def _contact_force(case_run: Run) -> tuple[np.ndarray, np.ndarray]:
    frames = case_run.trajectory.frames
    t = np.array([frame.t for frame in frames])
    lam = np.array([sum(c.lam for c in frame.contacts) for frame in frames])
    return t, lam


def _figure(case_run: Run, label: str, slide: str, folder: Path, stem: str) -> tuple[str, str]:
    reference = recognise(case_run.scene)
    c = case_run.columns
    t = c["t"]
    rest = np.array([c["m1.x"][0], c["m2.x"][0]]) - X0
    figure = new_figure()
    (ax,) = figure.axes
    t_ref = np.linspace(0.0, reference.t_valid, 600) if reference else np.empty(0)
    ref = reference.evaluate(t_ref) if reference else np.empty((0, 4))
    if slide in ("displacements", "velocities"):
        key = "x" if slide == "displacements" else "vx"
        k_ref = 0 if key == "x" else 1
        for j, body in enumerate(("m1", "m2")):
            values = c[f"{body}.{key}"] - (rest[j] if key == "x" else 0.0)
            ax.plot(t, values, color=f"C{j}", label=f"{body} (run)")
            if len(t_ref):
                shift = rest[j] if key == "x" else 0.0
                ax.plot(
                    t_ref,
                    ref[:, 2 * j + k_ref] - shift,
                    "k--",
                    lw=1,
                    label="closed form" if j == 0 else None,
                )
        ax.set_ylabel("displacement x, m" if key == "x" else "velocity v, m/s")
    else:
        if slide == "reactions and impulses":
            tf, lam = _contact_force(case_run)
            ax.plot(tf, lam, color="C2", label="reaction λ, N")
        impacts = case_run.impacts()
        ts = [e.t for e in impacts]
        ps = [e.normal_impulse for e in impacts]
        ax.vlines(ts, 0.0, ps, color="C3", lw=2)
        ax.plot(ts, ps, "o", color="C3", label="impulse, N·s")
        if reference:
            ax.plot(
                [reference.values["t_first_impact"]],
                [reference.values["impulse"]],
                "kx",
                ms=10,
                label="closed form (first impact)",
            )
        ax.set_ylabel("reaction, N / impulse, N·s")
    ax.set_xlabel("t, s")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"Paper 002, slide '{POLISH[slide]}' ({label})", fontsize=10)
    save_figure(figure, folder, stem)
    return stem, (
        f"Paper 002, slide '{POLISH[slide]}' ({slide}), {label}: m₁ = 200 kg, m₂ = 100 kg, "
        "k = 8000 N/m, X(0) = [−0.3, 0.3] m, V(0) = [−1, 1] m/s; redrawn from a run, the closed "
        "form dashed up to the second impact."
    )


def build(folder: Path) -> PaperOutput:
    """Rows of both cases and the six slides' plots."""
    output = PaperOutput("002", TITLE)
    for name, label in CASES:
        case_run = run(bundled(name))
        output.rows += with_scene(_rows(case_run, label), name)
        slides = SLIDES_PLASTIC if "plastic" in name else SLIDES_ELASTIC
        short = "plastic" if "plastic" in name else "elastic"
        for slide in slides:
            stem = f"slide-{short}-{slide.replace(' ', '-')}"
            output.figures.append(_figure(case_run, label, slide, folder, stem))
            output.figure_scenes[stem] = name
    return output
