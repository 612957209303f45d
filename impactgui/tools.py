"""Editing tools of the scene canvas: what a click or a drag does.

The canvas turns mouse and key events into calls on the active tool, with
positions already in scene coordinates (m):

* ``press(pos) -> bool`` starts a left-button drag (``False``: not mine, the
  view pans instead), then ``drag(pos)`` while it moves and ``release(pos)``;
* ``click(pos, double)`` for a left click without a drag;
* ``hover(pos)`` when the mouse moves with no button down (previews);
* ``finish()`` on Enter or a right click, ``cancel()`` on Escape or when the
  user switches tools.

Tests call these handlers directly with scene coordinates. Every change goes
through ``canvas.try_push(command)``, which refuses (with a status message)
edits that make the scene invalid, such as a body placed over a wall.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, ClassVar

import numpy as np

from impactgui.commands import (
    AddItem,
    DeleteItem,
    FieldPath,
    ItemRef,
    MoveItem,
    SetInitialVelocity,
)
from impactgui.forcing import FORCING_OMEGA, FORCING_SCALE
from impactgui.scene_items import arc_points
from impactgui.tool_host import Hit, Point, ToolHost
from solver.cart_motion import strike_in_body_frame
from solver.errors import InputError
from solver.nonholonomic import AxleCart

VELOCITY_SCALE = 0.1
"""Length of a velocity arrow per unit speed, m per (m/s): 1 m/s draws 10 cm."""
IMPULSE_SCALE = 5.0
"""Impulse per metre of drag with the impulse tool, N·s per m: 20 cm gives 1 N·s."""
GRAB_HEAD_PX = 8.0
"""How near (pixels) the grab tool must press to a velocity arrow's head to take it."""
VELOCITY_STEP = 0.1
"""Snapping step of initial velocities, m/s."""
ANGLE_STEP_DEG = 15.0
"""Snapping step of arc angles, degrees."""

WHEEL_DEFAULTS = {"mass": 1.0, "radius": 0.1}
"""A new wheel: 1 kg, radius 0.1 m; its inertia is that of a uniform disk, ½ m r²."""
BEAD_DEFAULTS = {"mass": 1.0, "radius": 0.05}
"""A new bead: 1 kg, radius 0.05 m."""
SPRING_STIFFNESS = 1000.0
"""Stiffness of a new spring, N/m (its rest length is the length it is drawn with)."""
CART_DEFAULTS = {"axle_mass": 1.0, "half_length": 0.2, "wheel_mass": 0.5, "wheel_radius": 0.1}
"""A new axle cart: axle 1 kg, 0.4 m long; wheels 0.5 kg, radius 0.1 m; at rest, angle 0."""
COLLINEAR_TOLERANCE = 1e-9
"""Three points whose triangle's area is below this fraction of its longest side squared
are on one line (no arc passes through them)."""

_drag_ids = itertools.count(1)


def _sub(p: Point, q: Point) -> Point:
    return (p[0] - q[0], p[1] - q[1])


def _add(p: Point, q: Point) -> Point:
    """``p + q``, rounded to 1e-10 m so that grid points stay on the grid."""
    return (round(p[0] + q[0], 10), round(p[1] + q[1], 10))


def _angle_deg(centre: Point, p: Point) -> float:
    return math.degrees(math.atan2(p[1] - centre[1], p[0] - centre[0]))


def arc_through(
    start: Point, middle: Point, end: Point
) -> tuple[Point, float, float, float] | None:
    """The arc from ``start`` through ``middle`` to ``end`` (m), in scene-file terms.

    Returns ``(center, radius, start_deg, end_deg)`` with the arc running
    counter-clockwise from ``start_deg`` to ``end_deg`` (0 < sweep < 360) and
    passing through ``middle``; when the points are given clockwise, the
    arc's start is ``end``. Lengths are rounded to 1e-10 m and angles to
    1e-9 degrees. ``None`` when the points are on one line or two coincide.
    """
    bx, by = _sub(middle, start)
    cx, cy = _sub(end, start)
    cross = bx * cy - by * cx
    longest = max(bx * bx + by * by, cx * cx + cy * cy, (cx - bx) ** 2 + (cy - by) ** 2)
    if abs(cross) <= COLLINEAR_TOLERANCE * longest:
        return None
    b2, c2 = bx * bx + by * by, cx * cx + cy * cy
    ux, uy = (cy * b2 - by * c2) / (2.0 * cross), (bx * c2 - cx * b2) / (2.0 * cross)
    centre = _add(start, (ux, uy))
    radius = round(math.hypot(ux, uy), 10)
    first, last = (start, end) if cross > 0 else (end, start)
    start_deg = _angle_deg(centre, first)
    end_deg = start_deg + (_angle_deg(centre, last) - start_deg) % 360.0
    return centre, radius, round(start_deg, 9), round(end_deg, 9)


class Tool:
    """Base tool: ignores everything. Subclasses override the handlers they need."""

    name: ClassVar[str] = ""
    label: ClassVar[str] = ""
    tip: ClassVar[str] = ""
    shortcut: ClassVar[str] = ""
    views: ClassVar[tuple[str, ...]] = ("side", "top")
    """Scene views (``"side"`` / ``"top"``) in which the tool makes sense."""
    while_running: ClassVar[bool] = False
    """True when the tool may act while a run is shown (editing disabled)."""

    def __init__(self, canvas: ToolHost) -> None:
        self.canvas = canvas

    @property
    def doc(self) -> Any:
        """The document being edited."""
        return self.canvas.document

    def press(self, pos: Point) -> bool:
        """Left button pressed at ``pos`` and moved: start a drag; False lets the view pan."""
        return False

    def drag(self, pos: Point) -> None:
        """The drag moved to ``pos``."""

    def release(self, pos: Point) -> None:
        """The drag ended at ``pos``."""

    def click(self, pos: Point, double: bool = False) -> None:
        """Left click (no drag) at ``pos``; ``double`` for the second click of a double click."""

    def hover(self, pos: Point) -> None:
        """The mouse moved to ``pos`` with no button down."""

    def finish(self) -> None:
        """Enter or right click: complete what is being drawn."""

    def cancel(self) -> None:
        """Escape or tool switch: drop what is being drawn."""
        self.canvas.set_preview(None)


class SelectTool(Tool):
    """Select items; drag bodies, boundary end points and vertices, velocity arrow heads."""

    name = "select"
    label = "Select / move"
    tip = (
        "Click to select. Drag a body to move it, a square handle to move an end point or vertex, "
        "a wall to move it. Drag from a body's centre dot (or its red arrow head) to set its "
        "initial velocity."
    )
    shortcut = "S"

    def __init__(self, canvas: ToolHost) -> None:
        super().__init__(canvas)
        self._hit: Hit | None = None
        self._start: Point = (0.0, 0.0)
        self._original: dict[str, Any] = {}
        self._drag_id = 0

    def click(self, pos: Point, double: bool = False) -> None:
        """Select the item under ``pos`` (nothing there: clear the selection)."""
        hit = self.canvas.hit_test(pos)
        self.doc.select(hit.ref if hit is not None else None)

    def press(self, pos: Point) -> bool:
        """Grab what is under ``pos``; empty space pans."""
        if not self.canvas.editing_enabled:
            return False
        hit = self.canvas.hit_test(pos)
        if hit is None or hit.part in ("spring", "impulse", "force"):
            return False
        self._hit = hit
        self._start = pos
        self._original = dict(self.doc.item(hit.ref))
        self._drag_id = next(_drag_ids)
        self.doc.select(hit.ref)
        return True

    def drag(self, pos: Point) -> None:
        """Move the grabbed item or handle, or re-aim the velocity arrow."""
        if self._hit is None:
            return
        ref, part = self._hit.ref, self._hit.part
        if part == "velocity":
            self._set_velocity(ref, pos)
            return
        changes = self._moved_fields(ref, pos)
        if changes:
            self.canvas.try_push(MoveItem(self.doc, ref, changes, self._drag_id))

    def release(self, pos: Point) -> None:
        """End the drag."""
        self.drag(pos)
        self._hit = None

    def cancel(self) -> None:
        """Forget a drag in progress."""
        self._hit = None
        super().cancel()

    def _set_velocity(self, ref: ItemRef, pos: Point) -> None:
        centre = self.canvas.body_centre(self._original)
        velocity = [(pos[0] - centre[0]) / VELOCITY_SCALE, (pos[1] - centre[1]) / VELOCITY_SCALE]
        if self.canvas.snapping:
            velocity = [round(v / VELOCITY_STEP) * VELOCITY_STEP for v in velocity]
            velocity = [round(v, 10) for v in velocity]
        self.canvas.try_push(SetInitialVelocity(self.doc, ref, velocity, self._drag_id))
        speed = math.hypot(*velocity) if self._original.get("type") != "bead" else abs(velocity[0])
        self.canvas.status_message.emit(f"initial speed {speed:.3g} m/s")

    def _moved_fields(self, ref: ItemRef, pos: Point) -> dict[FieldPath, Any]:
        """New values of the fields a drag from ``self._start`` to ``pos`` changes."""
        item = self._original
        hit = self._hit
        assert hit is not None
        snap = self.canvas.snap
        delta = _sub(snap(pos), snap(self._start))
        if ref[0] == "bodies":
            start_centre = self.canvas.body_centre(item)
            offset = _sub(self._start, start_centre)
            centre = snap(_sub(pos, offset))
            if item.get("type") == "bead":
                return {(*ref, "x"): centre[0], (*ref, "rail_y"): centre[1]}
            return {(*ref, "position"): list(centre)}
        kind = item.get("type")
        if hit.part == "handle":
            handle = hit.handle
            if kind == "arc" and handle in ("start_deg", "end_deg"):
                angle = _angle_deg(tuple(item["center"]), pos)
                if self.canvas.snapping:
                    angle = round(angle / ANGLE_STEP_DEG) * ANGLE_STEP_DEG
                old = item[handle]
                angle = old + ((angle - old + 180.0) % 360.0 - 180.0)
                return {(*ref, handle): angle}
            if kind == "arc" and handle == "radius":
                radius = math.dist(tuple(item["center"]), snap(pos))
                return {(*ref, "radius"): radius} if radius > 0 else {}
            if kind == "polyline":
                return {(*ref, "points", int(hit.index)): list(snap(pos))}
            if kind == "arc" and handle == "center":
                return {(*ref, "center"): list(_add(tuple(item["center"]), delta))}
            return {(*ref, handle): list(snap(pos))}
        if kind == "segment":
            return {
                (*ref, "a"): list(_add(tuple(item["a"]), delta)),
                (*ref, "b"): list(_add(tuple(item["b"]), delta)),
            }
        if kind == "polyline":
            return {(*ref, "points"): [list(_add(tuple(p), delta)) for p in item["points"]]}
        return {(*ref, "center"): list(_add(tuple(item["center"]), delta))}


class WallTool(Tool):
    """Draw a straight wall (segment): press at one end, drag to the other."""

    name = "wall"
    label = "Wall"
    tip = "Drag from one end of a wall to the other."
    shortcut = "W"
    views = ("side",)

    def __init__(self, canvas: ToolHost) -> None:
        super().__init__(canvas)
        self._a: Point | None = None

    def press(self, pos: Point) -> bool:
        """Start the wall at the snapped ``pos``."""
        self._a = self.canvas.snap(pos)
        return True

    def drag(self, pos: Point) -> None:
        """Preview the wall."""
        if self._a is not None:
            self.canvas.set_preview([self._a, self.canvas.snap(pos)])

    def release(self, pos: Point) -> None:
        """Add the wall from the press point to the snapped ``pos``."""
        a, self._a = self._a, None
        self.canvas.set_preview(None)
        b = self.canvas.snap(pos)
        if a is None or a == b:
            return
        wall = {"id": self.doc.unique_id("wall"), "type": "segment", "a": list(a), "b": list(b)}
        self.canvas.try_push(AddItem(self.doc, "boundaries", wall))

    def click(self, pos: Point, double: bool = False) -> None:
        """A click alone draws nothing: say how."""
        self.canvas.status_message.emit("Drag from one end of the wall to the other.")

    def cancel(self) -> None:
        """Drop the wall being drawn."""
        self._a = None
        super().cancel()


class CurbTool(Tool):
    """Draw a polyline boundary: click its points; double-click, Enter or right-click ends it."""

    name = "curb"
    label = "Curb"
    tip = "Click the corners of a curb; double-click, Enter or right-click to finish, Esc to drop."
    shortcut = "C"
    views = ("side",)

    def __init__(self, canvas: ToolHost) -> None:
        super().__init__(canvas)
        self.points: list[Point] = []

    def click(self, pos: Point, double: bool = False) -> None:
        """Add a corner (a double click adds it and finishes)."""
        point = self.canvas.snap(pos)
        if not self.points or self.points[-1] != point:
            self.points.append(point)
        if double:
            self.finish()
        else:
            self.canvas.set_preview(self.points)

    def hover(self, pos: Point) -> None:
        """Preview the curb up to the mouse."""
        if self.points:
            self.canvas.set_preview([*self.points, self.canvas.snap(pos)])

    def finish(self) -> None:
        """Add the curb when it has at least two points."""
        points, self.points = self.points, []
        self.canvas.set_preview(None)
        if len(points) < 2:
            return
        curb = {
            "id": self.doc.unique_id("curb"),
            "type": "polyline",
            "points": [list(p) for p in points],
        }
        self.canvas.try_push(AddItem(self.doc, "boundaries", curb))

    def cancel(self) -> None:
        """Drop the points clicked so far."""
        self.points = []
        super().cancel()


class ArcTool(Tool):
    """Draw a circular wall: centre, then radius and start angle, then end angle.

    Press at the centre and drag to the start point (or click the centre,
    then click the start point), then click where the arc ends; it runs
    counter-clockwise from start to end.
    """

    name = "arc"
    label = "Arc"
    tip = (
        "Press at the centre and drag out to the start point (or click both), then click the end "
        "of the arc (counter-clockwise). Esc drops it."
    )
    shortcut = "A"
    views = ("side",)

    def __init__(self, canvas: ToolHost) -> None:
        super().__init__(canvas)
        self.centre: Point | None = None
        self.radius = 0.0
        self.start_deg: float | None = None

    def _angle(self, pos: Point) -> float:
        assert self.centre is not None
        angle = _angle_deg(self.centre, pos)
        if self.canvas.snapping:
            angle = round(angle / ANGLE_STEP_DEG) * ANGLE_STEP_DEG
        return angle

    def _set_start(self, pos: Point) -> None:
        assert self.centre is not None
        radius = math.dist(self.centre, self.canvas.snap(pos))
        if radius <= 0.0:
            return
        self.radius = radius
        self.start_deg = self._angle(pos)

    def _end_deg(self, pos: Point) -> float:
        assert self.start_deg is not None
        sweep = (self._angle(pos) - self.start_deg) % 360.0
        return self.start_deg + (sweep if sweep > 1e-9 else 360.0)

    def press(self, pos: Point) -> bool:
        """Start with the centre; a drag sets radius and start angle."""
        if self.start_deg is not None:
            return False
        self.centre = self.canvas.snap(pos)
        return True

    def drag(self, pos: Point) -> None:
        """Preview the radius."""
        if self.centre is not None:
            self.canvas.set_preview([self.centre, self.canvas.snap(pos)])

    def release(self, pos: Point) -> None:
        """Fix radius and start angle."""
        if self.centre is not None:
            self._set_start(pos)

    def click(self, pos: Point, double: bool = False) -> None:
        """Centre, start point, end point, one click each."""
        if self.centre is None:
            self.centre = self.canvas.snap(pos)
            self.canvas.set_preview([self.centre, self.centre])
        elif self.start_deg is None:
            self._set_start(pos)
        else:
            self._commit(self._end_deg(pos))

    def hover(self, pos: Point) -> None:
        """Preview the radius, then the arc up to the mouse."""
        if self.centre is None:
            return
        if self.start_deg is None:
            self.canvas.set_preview([self.centre, self.canvas.snap(pos)])
            return
        points = arc_points(self.centre, self.radius, self.start_deg, self._end_deg(pos))
        self.canvas.set_preview([(float(x), float(y)) for x, y in points])

    def _commit(self, end_deg: float) -> None:
        assert self.centre is not None and self.start_deg is not None
        arc = {
            "id": self.doc.unique_id("arc"),
            "type": "arc",
            "center": list(self.centre),
            "radius": self.radius,
            "start_deg": self.start_deg,
            "end_deg": end_deg,
        }
        self.cancel()
        self.canvas.try_push(AddItem(self.doc, "boundaries", arc))

    def cancel(self) -> None:
        """Drop the arc being drawn."""
        self.centre = None
        self.start_deg = None
        self.radius = 0.0
        super().cancel()


class Arc3Tool(Tool):
    """Draw a circular wall through three clicked points: start, a point on the arc, end."""

    name = "arc3"
    label = "Arc (3 points)"
    tip = "Click the start of the arc, a point on it, then its end. Esc drops it."
    shortcut = "Shift+A"
    views = ("side",)

    def __init__(self, canvas: ToolHost) -> None:
        super().__init__(canvas)
        self.points: list[Point] = []

    def click(self, pos: Point, double: bool = False) -> None:
        """Start, point on the arc, end: one click each.

        A repeated point and the second click of a double click (its first
        click already counted) are ignored.
        """
        point = self.canvas.snap(pos)
        if double or point in self.points[-1:]:
            return
        if len(self.points) < 2:
            self.points.append(point)
            hint = "a point on the arc" if len(self.points) == 1 else "the end of the arc"
            self.canvas.status_message.emit(f"Click {hint}.")
            self.hover(pos)
            return
        arc = arc_through(self.points[0], self.points[1], point)
        if arc is None:
            self.canvas.status_message.emit(
                "No arc passes through three points on one line: click another end point."
            )
            return
        centre, radius, start_deg, end_deg = arc
        boundary = {
            "id": self.doc.unique_id("arc"),
            "type": "arc",
            "center": list(centre),
            "radius": radius,
            "start_deg": start_deg,
            "end_deg": end_deg,
        }
        self.cancel()
        self.canvas.try_push(AddItem(self.doc, "boundaries", boundary))

    def hover(self, pos: Point) -> None:
        """Preview a chord to the mouse, then the arc through the two points and the mouse."""
        if not self.points:
            return
        point = self.canvas.snap(pos)
        arc = arc_through(*self.points, point) if len(self.points) == 2 else None
        if arc is None:
            self.canvas.set_preview([*self.points, point])
            return
        points = arc_points(*arc)
        self.canvas.set_preview([(float(x), float(y)) for x, y in points])

    def cancel(self) -> None:
        """Drop the points clicked so far."""
        self.points = []
        super().cancel()


class WheelTool(Tool):
    """Place a wheel (1 kg, r = 0.1 m, J = ½ m r²) with a click."""

    name = "wheel"
    label = "Wheel"
    tip = "Click to place a wheel (1 kg, radius 0.1 m); edit it in the property panel."
    shortcut = "H"
    views = ("side",)

    def click(self, pos: Point, double: bool = False) -> None:
        """Place a wheel centred at the snapped ``pos``."""
        mass, radius = WHEEL_DEFAULTS["mass"], WHEEL_DEFAULTS["radius"]
        wheel = {
            "id": self.doc.unique_id("wheel"),
            "type": "wheel",
            "mass": mass,
            "inertia": 0.5 * mass * radius**2,
            "radius": radius,
            "position": list(self.canvas.snap(pos)),
            "angle": 0.0,
            "velocity": [0.0, 0.0],
            "angular_velocity": 0.0,
        }
        if self.canvas.try_push(AddItem(self.doc, "bodies", wheel)):
            self.doc.select(("bodies", len(self.doc.data["bodies"]) - 1))


class BeadTool(Tool):
    """Place a bead with a click: its rail is the horizontal line through the click."""

    name = "bead"
    label = "Bead"
    tip = "Click to place a bead (1 kg, radius 0.05 m) on a horizontal rail through that point."
    shortcut = "B"
    views = ("side",)

    def click(self, pos: Point, double: bool = False) -> None:
        """Place a bead at the snapped ``pos``."""
        x, y = self.canvas.snap(pos)
        bead = {
            "id": self.doc.unique_id("bead"),
            "type": "bead",
            "rail_y": y,
            "mass": BEAD_DEFAULTS["mass"],
            "radius": BEAD_DEFAULTS["radius"],
            "x": x,
            "vx": 0.0,
        }
        if self.canvas.try_push(AddItem(self.doc, "bodies", bead)):
            self.doc.select(("bodies", len(self.doc.data["bodies"]) - 1))


class CartTool(Tool):
    """Top view: place an axle cart at rest with a click (axle along +x)."""

    name = "cart"
    label = "Axle cart"
    tip = (
        "Click to place an axle cart at rest (axle 1 kg, half-length 0.2 m; wheels 0.5 kg, "
        "radius 0.1 m); edit it in the property panel."
    )
    shortcut = "K"
    views = ("top",)

    def click(self, pos: Point, double: bool = False) -> None:
        """Place a cart centred at the snapped ``pos``."""
        cart = {
            "id": self.doc.unique_id("cart"),
            "type": "axle_cart",
            **CART_DEFAULTS,
            "position": list(self.canvas.snap(pos)),
            "angle": 0.0,
            "wheel_angles": [0.0, 0.0],
            "wheel_rates": [0.0, 0.0],
        }
        if self.canvas.try_push(AddItem(self.doc, "bodies", cart)):
            self.doc.select(("bodies", len(self.doc.data["bodies"]) - 1))


class SpringTool(Tool):
    """Connect a spring: click a body, then another body or a fixed anchor point."""

    name = "spring"
    label = "Spring"
    tip = (
        "Click a body, then another body or an empty point (a fixed anchor). "
        "The spring is drawn relaxed, 1000 N/m."
    )
    shortcut = "P"
    views = ("side",)

    def __init__(self, canvas: ToolHost) -> None:
        super().__init__(canvas)
        self.first: str | None = None

    def click(self, pos: Point, double: bool = False) -> None:
        """First click picks body ``a``; the second picks body ``b`` or the anchor."""
        hit = self.canvas.hit_test(pos)
        body = self.doc.item(hit.ref) if hit is not None and hit.ref[0] == "bodies" else None
        if self.first is None:
            if body is None:
                self.canvas.status_message.emit("Click a body to attach the spring to.")
                return
            self.first = body["id"]
            centre = self.canvas.body_centre(body)
            self.canvas.set_preview([centre, centre])
            return
        a_index = self.doc.body_index(self.first)
        if a_index is None:
            self.cancel()
            return
        a_centre = self.canvas.body_centre(self.doc.data["bodies"][a_index])
        spring: dict[str, Any] = {"a": self.first}
        if body is not None:
            if body["id"] == self.first:
                return
            spring["b"] = body["id"]
            end = self.canvas.body_centre(body)
        else:
            end = self.canvas.snap(pos)
            spring["anchor"] = list(end)
        spring["stiffness"] = SPRING_STIFFNESS
        spring["rest_length"] = math.dist(a_centre, end)
        spring["damping"] = 0.0
        self.cancel()
        self.canvas.try_push(AddItem(self.doc, "springs", spring))

    def hover(self, pos: Point) -> None:
        """Preview the spring from body ``a`` to the mouse."""
        if self.first is None:
            return
        index = self.doc.body_index(self.first)
        if index is not None:
            centre = self.canvas.body_centre(self.doc.data["bodies"][index])
            self.canvas.set_preview([centre, self.canvas.snap(pos)])

    def cancel(self) -> None:
        """Drop the first end."""
        self.first = None
        super().cancel()


class DeleteTool(Tool):
    """Delete the item clicked (a body takes its springs, forces and impulses with it)."""

    name = "delete"
    label = "Delete"
    tip = "Click an item to delete it."
    shortcut = "D"

    def click(self, pos: Point, double: bool = False) -> None:
        """Delete the item under ``pos``."""
        hit = self.canvas.hit_test(pos)
        if hit is None:
            self.canvas.status_message.emit("Nothing here to delete.")
            return
        self.canvas.try_push(DeleteItem(self.doc, hit.ref))


class ImpulseTool(Tool):
    """Top view: drag from a point of an axle cart to give it an impulse S.

    The drag sets the point of application, the direction and the size
    (``IMPULSE_SCALE`` N·s per metre). While editing, the impulse is added to
    the scene's schedule at the time shown, in the cart's own axes (it
    strikes the same spot from the same side wherever the cart has rolled by
    then); during a run the canvas emits ``impulse_requested`` instead.
    """

    name = "impulse"
    label = "Impulse"
    tip = "Drag from a point of an axle cart: the arrow is the impulse S (20 cm = 1 N·s)."
    shortcut = "I"
    views = ("top",)
    while_running = True

    def __init__(self, canvas: ToolHost) -> None:
        super().__init__(canvas)
        self.body: str | None = None
        self.point: Point = (0.0, 0.0)

    def press(self, pos: Point) -> bool:
        """Start on an axle cart."""
        hit = self.canvas.hit_test(pos, bodies_only=True)
        if hit is None or self.doc.item(hit.ref).get("type") != "axle_cart":
            self.canvas.status_message.emit("Start the impulse on an axle cart.")
            return False
        self.body = self.doc.item(hit.ref)["id"]
        self.point = pos
        return True

    def _vector(self, pos: Point) -> Point:
        return (IMPULSE_SCALE * (pos[0] - self.point[0]), IMPULSE_SCALE * (pos[1] - self.point[1]))

    def drag(self, pos: Point) -> None:
        """Preview the impulse arrow."""
        if self.body is not None:
            self.canvas.set_preview_arrow(self.point, pos)
            size = float(np.hypot(*self._vector(pos)))
            self.canvas.status_message.emit(f"impulse S = {size:.3g} N·s")

    def release(self, pos: Point) -> None:
        """Schedule (or request) the impulse."""
        body, self.body = self.body, None
        self.canvas.set_preview_arrow(None, None)
        vector = self._vector(pos)
        if body is None or vector == (0.0, 0.0):
            return
        point = [float(self.point[0]), float(self.point[1])]
        if not self.canvas.editing_enabled:
            self.canvas.impulse_requested.emit(body, point, list(vector))
            return
        cart = self.doc.item(("bodies", self.doc.body_index(body)))
        try:
            pose = (*cart["position"], cart.get("angle", 0.0), 0.0, 0.0)
            model = AxleCart(
                cart["axle_mass"], cart["half_length"], cart["wheel_mass"], cart["wheel_radius"]
            )
            where, size = strike_in_body_frame(model, pose, point, vector)
        except (InputError, KeyError, TypeError, ValueError) as error:
            self.canvas.status_message.emit(f"Impulse refused: {error}")
            return
        impulse = {
            "time": float(self.canvas.current_time),
            "body": body,
            "point": where,
            "vector": size,
            "frame": "body",
        }
        self.canvas.try_push(AddItem(self.doc, "impulses", impulse))

    def cancel(self) -> None:
        """Drop the impulse being drawn."""
        self.body = None
        self.canvas.set_preview_arrow(None, None)
        super().cancel()


class ForceTool(Tool):
    """Drag from a body: a harmonic force ``F(t) = A sin(ωt + φ)`` on its centre.

    The drag is the amplitude ``A`` (``FORCING_SCALE``: 10 cm = 10 N; a bead,
    which feels only the x component on its rail, takes the drag's x); ω is
    ``FORCING_OMEGA`` and φ 0 until edited in the property panel, where the
    new force is selected.
    """

    name = "force"
    label = "Force"
    tip = (
        "Drag from a body: the arrow is the amplitude A of a harmonic force A sin(ωt + φ) "
        "(10 cm = 10 N); set ω and φ in the properties."
    )
    shortcut = "O"
    views = ("side",)

    def __init__(self, canvas: ToolHost) -> None:
        super().__init__(canvas)
        self.body: dict[str, Any] | None = None
        self.centre: Point = (0.0, 0.0)

    def press(self, pos: Point) -> bool:
        """Start on a body."""
        hit = self.canvas.hit_test(pos, bodies_only=True)
        if hit is None:
            self.canvas.status_message.emit("Start the force on a body.")
            return False
        self.body = dict(self.doc.item(hit.ref))
        self.centre = self.canvas.body_centre(self.body)
        return True

    def _amplitude(self, body: dict[str, Any], pos: Point) -> list[float]:
        """The amplitude (N) a drag to ``pos`` from ``body``'s centre gives, to 0.1 N snapping."""
        fx = FORCING_SCALE * (pos[0] - self.centre[0])
        fy = 0.0 if body.get("type") == "bead" else FORCING_SCALE * (pos[1] - self.centre[1])
        if self.canvas.snapping:
            fx, fy = round(fx, 1), round(fy, 1)
        return [fx + 0.0, fy + 0.0]

    def drag(self, pos: Point) -> None:
        """Preview the amplitude's arrow."""
        if self.body is None:
            return
        fx, fy = self._amplitude(self.body, pos)
        head = (self.centre[0] + fx / FORCING_SCALE, self.centre[1] + fy / FORCING_SCALE)
        self.canvas.set_preview_arrow(self.centre, head)
        self.canvas.status_message.emit(f"force amplitude |A| = {math.hypot(fx, fy):.3g} N")

    def release(self, pos: Point) -> None:
        """Add the force (and select it for its ω and φ)."""
        body, self.body = self.body, None
        self.canvas.set_preview_arrow(None, None)
        if body is None:
            return
        amplitude = self._amplitude(body, pos)
        if amplitude == [0.0, 0.0]:
            self.canvas.status_message.emit("Drag away from the body: the arrow is the force.")
            return
        force = {
            "body": body["id"],
            "type": "harmonic",
            "amplitude": amplitude,
            "omega": FORCING_OMEGA,
            "phase": 0.0,
        }
        command = AddItem(self.doc, "forces", force)
        if self.canvas.try_push(command):
            self.doc.select(command.ref)

    def cancel(self) -> None:
        """Drop the force being drawn."""
        self.body = None
        self.canvas.set_preview_arrow(None, None)
        super().cancel()


class GrabTool(Tool):
    """During a run: put a body somewhere, or give it a new velocity, from the frame shown.

    A drag from a body moves it (it is let go at rest); a drag from the head
    of its velocity arrow sets its velocity (``VELOCITY_SCALE``), the body
    staying where it is. The playback pauses at the press (``grab_started``);
    at the release the canvas asks for the new state (``state_requested``):
    the window records it in the scene as a timed action and computes the
    run again, exactly as the command line computes the saved scene. A bead
    keeps to its rail (x only).
    """

    name = "grab"
    label = "Grab"
    tip = (
        "During a run: drag a body to put it somewhere (let go at rest), or drag from the head "
        "of its velocity arrow to throw it; the run goes on from there (undo with Ctrl+Z)."
    )
    shortcut = "G"
    views = ("side",)
    while_running = True

    def __init__(self, canvas: ToolHost) -> None:
        super().__init__(canvas)
        self.body: dict[str, Any] | None = None
        self.mode = ""
        self.centre: Point = (0.0, 0.0)
        self.velocity: Point = (0.0, 0.0)
        self.offset: Point = (0.0, 0.0)

    def press(self, pos: Point) -> bool:
        """Take the body (or its velocity arrow's head) under ``pos`` in the frame shown."""
        if self.canvas.editing_enabled:
            self.canvas.status_message.emit("Grab acts on a run: press Run, then drag a body.")
            return False
        grabbed = self._velocity_head_at(pos)
        if grabbed is None:
            hit = self.canvas.hit_test(pos, bodies_only=True)
            if hit is None:
                self.canvas.status_message.emit("Grab a body, or the head of its velocity arrow.")
                return False
            grabbed = (dict(self.doc.item(hit.ref)), "move")
        self.body, self.mode = grabbed
        self.centre, self.velocity = self.canvas.shown_motion(self.body["id"])
        self.offset = _sub(pos, self.centre)
        self.canvas.grab_started.emit()
        return True

    def _velocity_head_at(self, pos: Point) -> tuple[dict[str, Any], str] | None:
        reach = GRAB_HEAD_PX * self.canvas.pixel_size()
        for body in self.doc.data.get("bodies", []):
            motion = self.canvas.shown_motion(str(body.get("id", "")))
            if motion is None:
                continue
            (cx, cy), (vx, vy) = motion
            if (vx, vy) != (0.0, 0.0) and math.dist(
                pos, (cx + VELOCITY_SCALE * vx, cy + VELOCITY_SCALE * vy)
            ) <= reach:
                return dict(body), "velocity"
        return None

    def _state(self, body: dict[str, Any], pos: Point) -> tuple[Point, Point]:
        """The body's new centre (m) and velocity (m/s) for the pointer at ``pos``."""
        bead = body.get("type") == "bead"
        if self.mode == "move":
            x, y = _sub(pos, self.offset)
            centre = (x, self.centre[1]) if bead else (x, y)
            return centre, (0.0, 0.0)
        vx = (pos[0] - self.centre[0]) / VELOCITY_SCALE
        vy = 0.0 if bead else (pos[1] - self.centre[1]) / VELOCITY_SCALE
        return self.centre, (vx, vy)

    def drag(self, pos: Point) -> None:
        """Preview the new place (a dashed line from where it was) or the new velocity."""
        if self.body is None:
            return
        centre, velocity = self._state(self.body, pos)
        if self.mode == "move":
            self.canvas.set_preview([self.centre, centre])
            self.canvas.status_message.emit(f"put at ({centre[0]:.3g}, {centre[1]:.3g}) m")
        else:
            head = (
                centre[0] + VELOCITY_SCALE * velocity[0],
                centre[1] + VELOCITY_SCALE * velocity[1],
            )
            self.canvas.set_preview_arrow(centre, head)
            self.canvas.status_message.emit(f"speed {math.hypot(*velocity):.3g} m/s")

    def release(self, pos: Point) -> None:
        """Ask for the new state (the window records it and computes the run again)."""
        body, self.body = self.body, None
        self.canvas.set_preview(None)
        self.canvas.set_preview_arrow(None, None)
        if body is None:
            return
        centre, velocity = self._state(body, pos)
        self.canvas.state_requested.emit(body["id"], list(centre), list(velocity))

    def cancel(self) -> None:
        """Drop the grab."""
        self.body = None
        self.canvas.set_preview(None)
        self.canvas.set_preview_arrow(None, None)
        super().cancel()


TOOL_TYPES: tuple[type[Tool], ...] = (
    SelectTool,
    WallTool,
    CurbTool,
    ArcTool,
    Arc3Tool,
    WheelTool,
    BeadTool,
    CartTool,
    SpringTool,
    ForceTool,
    DeleteTool,
    ImpulseTool,
    GrabTool,
)
"""Every tool, in toolbar order."""
