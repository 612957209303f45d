"""Harmonic forces on the canvas: arrows that pulse with ``F(t) = A sin(ωt + φ)``.

A scene's ``forces`` list holds ``{"body", "type": "harmonic", "amplitude":
[Fx, Fy], "omega", "phase"}`` (N, rad/s, rad); the solver applies
``amplitude · sin(omega t + phase)`` at the body's centre, and a bead (on its
rail) feels only the x component. While editing, each force is drawn as its
amplitude — the largest force it will apply — from the body's centre, with
a label ``F = 10 N · sin(8 t + 0)``; during a run the arrow is the force at
the time shown, so it grows, shrinks and turns round with the forcing. The
scale is fixed, ``FORCING_SCALE`` newtons per metre of arrow, the same as
the force tool's drag.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from PySide6.QtGui import QColor

from impactgui.scene_items import SELECTION_COLOUR, Arrow, distance_to_polyline

FORCING_SCALE = 100.0
"""Force per metre of arrow, N/m: 10 cm draws (and the force tool's drag gives) 10 N."""
FORCING_OMEGA = 5.0
"""Angular frequency of a new harmonic force, rad/s (edited in the property panel)."""
FORCING_COLOUR = QColor("#8e24aa")

Point = tuple[float, float]


def _number(value: Any) -> float:
    number = float(value)
    if not math.isfinite(number):
        raise ValueError("not finite")
    return number


def amplitude_acting(force: Mapping[str, Any], body: Mapping[str, Any]) -> Point:
    """The amplitude that acts (N): a bead feels only its x component. ValueError if unreadable."""
    fx, fy = (_number(c) for c in force["amplitude"])
    return (fx, 0.0) if body.get("type") == "bead" else (fx, fy)


def force_at(force: Mapping[str, Any], body: Mapping[str, Any], t: float) -> Point:
    """``F(t) = A sin(ω t + φ)`` (N) as it acts on ``body``, as the solver computes it."""
    fx, fy = amplitude_acting(force, body)
    s = float(np.sin(_number(force["omega"]) * t + _number(force.get("phase", 0.0))))
    return (fx * s, fy * s)


def forcing_label(force: Mapping[str, Any], body: Mapping[str, Any]) -> str:
    """``F = |A| N · sin(ω t + φ)`` in words, e.g. ``F = 10 N · sin(8 t + 0)``."""
    fx, fy = amplitude_acting(force, body)
    omega, phase = _number(force["omega"]), _number(force.get("phase", 0.0))
    sign = "+" if phase >= 0 else "−"
    return f"F = {math.hypot(fx, fy):.3g} N · sin({omega:.3g} t {sign} {abs(phase):.3g})"


def forcing_arrows(
    data: Mapping[str, Any],
    centres: Mapping[str, Point],
    t: float | None,
    selected: int | None = None,
    bodies: Mapping[str, Any] | None = None,
) -> list[tuple[int, Arrow]]:
    """``(index in forces, arrow)`` of each drawable force: its amplitude (``t`` None) or F(t).

    ``centres`` gives each body's centre (m) as shown; a force on a body
    missing there, or with unreadable numbers, is not drawn. The selected
    force is drawn in the selection colour. ``bodies`` (by id) saves making that map.
    """
    if bodies is None:
        bodies = bodies_by_id(data)
    arrows: list[tuple[int, Arrow]] = []
    for index, force in enumerate(data.get("forces", [])):
        try:
            body = bodies[force["body"]]
            cx, cy = centres[force["body"]]
            fx, fy = amplitude_acting(force, body) if t is None else force_at(force, body, t)
        except (KeyError, TypeError, ValueError):
            continue
        colour = SELECTION_COLOUR if index == selected else FORCING_COLOUR
        head = (cx + fx / FORCING_SCALE, cy + fy / FORCING_SCALE)
        arrows.append((index, (cx, cy, *head, colour)))
    return arrows


def bodies_by_id(data: Mapping[str, Any]) -> dict[str, Any]:
    """The scene's bodies by id."""
    return {b.get("id"): b for b in data.get("bodies", []) if isinstance(b, Mapping)}


def force_under(
    data: Mapping[str, Any], centres: Mapping[str, Point], pos: Point, tolerance: float
) -> int | None:
    """Index of the force whose amplitude arrow passes within ``tolerance`` (m) of ``pos``."""
    for index, (x0, y0, x1, y1, _) in forcing_arrows(data, centres, None):
        if distance_to_polyline(pos, np.array([(x0, y0), (x1, y1)])) <= tolerance:
            return index
    return None


class ForcingDrawing:
    """The forcing arrows (one ``ArrowField``) and their labels in a canvas's view.

    ``show_editing`` draws the amplitudes with labels; ``start_run`` takes the
    run's scene and hides the labels; ``show_time`` then draws F(t) at the
    bodies' centres of the frame shown.
    """

    def __init__(self, view: Any, z: float = 21.0) -> None:
        from impactgui.scene_items import ArrowField

        self._view = view
        self._z = z
        self.arrows = ArrowField(width=3.0)
        self.arrows.setZValue(z)
        view.addItem(self.arrows, ignoreBounds=True)
        self.labels: list[Any] = []
        self._run_data: Mapping[str, Any] = {}
        self._run_bodies: dict[str, Any] = {}

    def _clear_labels(self) -> None:
        for label in self.labels:
            self._view.removeItem(label)
        self.labels = []

    def show_editing(
        self, data: Mapping[str, Any], centres: Mapping[str, Point], selected: int | None
    ) -> None:
        """Each force's amplitude from its body's centre, labelled ``F = A · sin(ω t + φ)``."""
        import pyqtgraph as pg

        self._clear_labels()
        drawn = forcing_arrows(data, centres, None, selected)
        bodies = bodies_by_id(data)
        for index, (_, _, hx, hy, colour) in drawn:
            force = data["forces"][index]
            text = forcing_label(force, bodies[force["body"]])
            cx = centres[force["body"]][0]
            label = pg.TextItem(text, color=colour, anchor=(0.0 if hx >= cx else 1.0, 1.0))
            label.setPos(hx, hy)
            label.setZValue(self._z)
            self._view.addItem(label, ignoreBounds=True)
            self.labels.append(label)
        self.arrows.set_arrows(arrow for _, arrow in drawn)

    def start_run(self, data: Mapping[str, Any]) -> None:
        """A run of ``data`` is shown from now on: no labels, arrows at the frames' times."""
        self._clear_labels()
        self._run_data = data
        self._run_bodies = bodies_by_id(data) if data.get("forces") else {}
        self.arrows.set_arrows([])

    def show_time(self, centres: Mapping[str, Point], t: float) -> None:
        """``F(t)`` of every force at the centres shown (m)."""
        if self._run_data.get("forces"):
            drawn = forcing_arrows(self._run_data, centres, t, bodies=self._run_bodies)
            self.arrows.set_arrows(arrow for _, arrow in drawn)
