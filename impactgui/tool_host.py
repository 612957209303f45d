"""What an editing tool may ask of the canvas that hosts it.

The canvas (``impactgui.canvas.SceneCanvas``) creates the tools and hands
them mouse events; a tool answers through this small interface only: look
at the scene, test what is under the mouse, snap a position, show a
preview, push an edit, say something in the status bar. ``impactgui.tools``
imports this module, never the canvas, so the two do not import each other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from impactgui.commands import ItemRef, SceneCommand

Point = tuple[float, float]
"""A point of the scene, m."""


@dataclass(frozen=True)
class Hit:
    """What is under the mouse.

    ``part``: ``"body"``, ``"velocity"`` (a body's velocity arrow head or
    centre dot), ``"handle"`` (``handle`` names the field: ``"a"``, ``"b"``,
    ``"points"`` with ``index``, ``"center"``, ``"radius"``, ``"start_deg"``,
    ``"end_deg"``), ``"line"`` (a boundary itself), ``"spring"`` or ``"impulse"``.
    """

    ref: ItemRef
    part: str
    handle: str = ""
    index: int | None = None


class Signal(Protocol):
    """A Qt signal as a tool uses it: emitted, never connected."""

    def emit(self, *args: Any) -> None:
        """Send the signal."""


class ToolHost(Protocol):
    """The canvas as its tools see it.

    Attributes
    ----------
    document : SceneDocument
        The scene being edited (``data``, ``item``, ``push``, ``select``…).
    editing_enabled : bool
        False while a run is shown: only tools with ``while_running`` act.
    snapping : bool
        Positions snap to the grid.
    current_time : float
        The time shown, s (0 while editing).
    status_message : Signal
        ``emit(text)``: a short message for the status bar.
    impulse_requested : Signal
        ``emit(body_id, point, vector)``: strike a cart of the run shown.
    grab_started : Signal
        ``emit()``: the grab tool took a body of the run shown (the playback pauses).
    state_requested : Signal
        ``emit(body_id, centre, velocity)``: put a body of the run shown there.
    """

    document: Any
    editing_enabled: bool
    snapping: bool
    current_time: float
    status_message: Signal
    impulse_requested: Signal
    grab_started: Signal
    state_requested: Signal

    def pixel_size(self) -> float:
        """Size of a screen pixel in scene units (m)."""

    def shown_motion(self, body_id: str) -> tuple[Point, Point] | None:
        """Centre (m) and velocity (m/s) of a body in the run's frame shown; None if none."""

    def snap(self, pos: Sequence[float]) -> Point:
        """``pos`` rounded to the grid when snapping is on (m)."""

    def hit_test(self, pos: Point, bodies_only: bool = False) -> Hit | None:
        """The item under ``pos`` (m), or None."""

    def try_push(self, command: SceneCommand) -> bool:
        """Push ``command`` unless it makes the scene invalid (then say why)."""

    def set_preview(self, points: Iterable[Point] | None) -> None:
        """Show a dashed polyline through ``points``; None hides it."""

    def set_preview_arrow(self, start: Point | None, end: Point | None) -> None:
        """Show an arrow from ``start`` to ``end``; None hides it."""

    def body_centre(self, body: Mapping[str, Any]) -> Point:
        """A body dict's centre at t = 0 (m)."""
