"""The scene canvas: an equal-aspect view that edits the scene and animates a run.

In editing mode the canvas draws the document (boundaries with their ids,
wheels with a spoke, beads on their rails, springs as zig-zags, initial
velocity arrows, scheduled impulses) and hands mouse events to the active
tool (:mod:`impactgui.tools`). During a run the shell calls
``show_frame(frame, system, events)``: the bodies move to ``frame.q`` and
the canvas adds trails of the centres, velocity arrows, contact force
arrows (normal ``λ n`` and friction ``−μ λ τ t``) with a scale legend, and a
flash at each impact. ``clear_animation()`` returns to the editable scene.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPointF, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QActionGroup, QColor, QKeyEvent
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QLabel, QVBoxLayout, QWidget

from impactgui.commands import DeleteItem, SceneCommand
from impactgui.document import SceneDocument, problem_path, scene_problems
from impactgui.forcing import ForcingDrawing, force_under
from impactgui.grid import show_grid
from impactgui.scene_items import (
    BACKGROUND,
    BOUNDARY_COLOUR,
    FRICTION_FORCE_COLOUR,
    IMPULSE_COLOUR,
    NORMAL_FORCE_COLOUR,
    PREVIEW_COLOUR,
    VELOCITY_COLOUR,
    Arrow,
    ArrowField,
    BeadDrawing,
    CartItem,
    FlashField,
    SceneLayer,
    TrailField,
    arc_sweep_deg,
    boundary_points,
    distance_to_polyline,
)
from impactgui.soft_look import OverlapDrawing
from impactgui.tool_host import Hit, Point
from impactgui.tools import IMPULSE_SCALE, TOOL_TYPES, VELOCITY_SCALE, Tool
from solver.frames import Event, Frame
from solver.geometry import boundary_features
from solver.scene import scene_to_dict

GRID_STEP = 0.05
"""Default snapping step, m."""
HIT_PX = 8.0
"""How close (px) the mouse must be to a line or handle to hit it."""
VELOCITY_HIT_PX = 5.0
"""How close (px) to a velocity arrow head (or a resting body's centre dot) grabs the velocity."""
TRAIL_LENGTH = 600
"""A trail keeps the whole run in this many to twice as many positions (evenly decimated)."""
TRAIL_POINT_BUDGET = 30_000
"""Positions per trail times bodies at most: many bodies get coarser trails."""
FIT_PADDING = 0.12
"""Margin around the scene when the view is fitted to it, a fraction of its size."""
LABELLED_BODIES_MAX = 20
"""Bodies carry their id labels only when there are at most this many, while editing and
during a run (more labels overlap into a smear, and each costs a text item to make and to
move; the property panel names the selected body)."""
FORCE_LEGEND_LENGTH = 0.1
"""Length of the reference force arrow of the legend, m (10 cm)."""
FLASH_TICK_MS = 30
"""Flashes fade with each frame shown; this often when no frame comes (paused), ms."""
FLASHES_PER_FRAME_MAX = 32
"""Most impacts flashed by one frame (the newest; a frame shown after a jump can follow
thousands of impacts)."""


def _nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 5 × 10^k that is >= ``value`` (> 0)."""
    exponent = math.floor(math.log10(value))
    for step in (1.0, 2.0, 5.0, 10.0):
        if step * 10.0**exponent >= value * (1 - 1e-12):
            return step * 10.0**exponent
    return 10.0 ** (exponent + 1)


def impulse_in_world(impulse: Mapping[str, Any], data: Mapping[str, Any]) -> tuple[Point, Point]:
    """Point (m) and vector (N·s) of a scheduled impulse in world axes, as drawn while editing.

    A body-frame impulse (``"frame": "body"``) is drawn on its cart where the
    cart starts: the spot it will strike, from the side it will strike it.
    """
    (px, py), (sx, sy) = impulse["point"], impulse["vector"]
    if impulse.get("frame", "world") != "body":
        return (float(px), float(py)), (float(sx), float(sy))
    cart = next(b for b in data.get("bodies", []) if b.get("id") == impulse["body"])
    (cx, cy), phi = cart["position"], float(cart.get("angle", 0.0))
    c, s = math.cos(phi), math.sin(phi)
    point = (cx + c * px - s * py, cy + s * px + c * py)
    return point, (c * sx - s * sy, s * sx + c * sy)


@dataclass(frozen=True)
class _FrameLayout:
    """Where each animated body's numbers sit in a frame, as index arrays.

    Indices point into ``concatenate((q, constants))`` (coordinates) and
    ``append(v, 0)`` (rates; ``v`` has one rate per coordinate): a bead's
    ``y`` is its rail height, a constant, and its angle and ``vy`` are the
    zeros at index ``len(q)``. One entry per body that has a drawing, in
    ``System.dof_labels`` order.
    """

    ids: list[str]
    constants: np.ndarray
    x: np.ndarray
    y: np.ndarray
    angle: np.ndarray
    vx: np.ndarray
    vy: np.ndarray
    turns: list[bool]
    carts: list[tuple[CartItem, int, int]]
    bead_slots: np.ndarray
    """Per body: its slot in the layer's ``BeadField``, or -1 when it is not a bead."""

    @property
    def index(self) -> dict[str, int]:
        """Each drawn body's place in ``ids`` (the same dict at every call: made on first use)."""
        index = self.__dict__.get("_index")
        if index is None:
            index = self.__dict__["_index"] = {name: k for k, name in enumerate(self.ids)}
        return index

    def index_of(self, body_id: str) -> int | None:
        """The body's place in ``ids`` (None: not drawn)."""
        return self.index.get(body_id)

    @classmethod
    def empty(cls) -> _FrameLayout:
        """No bodies."""
        none = np.zeros(0, dtype=int)
        return cls([], np.zeros(1), none, none, none, none, none, [], [], none)

    @classmethod
    def of(cls, system: Any, data: Mapping[str, Any], layer: SceneLayer) -> _FrameLayout:
        """The layout of ``system``'s state for the body drawings of ``layer``.

        One short step per body (2000 beads: a few milliseconds); the beads'
        rail heights are read from the bead field at once.
        """
        labels = system.dof_labels
        n_coords = sum(len(coord_names) for _, coord_names, _ in labels)
        kinds = {body["id"]: body["type"] for body in data["bodies"]}
        drawings = layer.bodies
        rows: list[tuple[int, int, int, int, int]] = []
        ids: list[str] = []
        turns: list[bool] = []
        carts: list[tuple[CartItem, int, int]] = []
        slots: list[int] = []
        bead_rows: list[int] = []
        offset = 0
        for body_id, coord_names, rate_names in labels:
            start = offset
            offset += len(coord_names)
            item = drawings.get(body_id)
            if item is None:
                continue
            kind = kinds.get(body_id, "wheel")
            if kind == "bead":  # y: the rail height (a constant); angle and vy: 0
                bead_rows.append(len(ids))
                x = start + coord_names.index("x")
                rows.append((x, -1, n_coords, start + rate_names.index("vx"), n_coords))
            else:
                names = ("xC", "yC", "phi", "vxC", "vyC")
                if kind != "axle_cart" or not isinstance(item, CartItem):
                    names = ("x", "y", "phi", "vx", "vy")
                else:
                    theta = [start + coord_names.index(name) for name in ("thetaA", "thetaB")]
                    carts.append((item, theta[0], theta[1]))
                found = [start + coord_names.index(name) for name in names[:3]]
                found += [start + rate_names.index(name) for name in names[3:]]
                rows.append(tuple(found))  # type: ignore[arg-type]
            ids.append(body_id)
            turns.append(kind != "bead")
            slots.append(item.slot if isinstance(item, BeadDrawing) else -1)
        table = np.array(rows, dtype=int).reshape(len(rows), 5)
        bead_slots = np.array(slots, dtype=int)
        beads = np.array(bead_rows, dtype=int)
        constants = np.concatenate(([0.0], layer.beads.positions(bead_slots[beads])[:, 1]))
        table[beads, 1] = n_coords + 1 + np.arange(len(beads))
        return cls(
            ids,
            constants,
            *(table[:, k].copy() for k in range(5)),
            turns=turns,
            carts=carts,
            bead_slots=bead_slots,
        )


class _HandleScatter(pg.ScatterPlotItem):
    """Handle dots that leave every click to the tool (picking is ``hit_test``'s).

    A plain scatter takes a left click on one of its dots: a click on a resting
    body's centre dot never reached the spring tool.
    """

    def mouseClickEvent(self, ev: Any) -> None:
        """Let the view box below hand the click to the tool."""
        ev.ignore()


class _ToolViewBox(pg.ViewBox):
    """A ViewBox that offers clicks and left drags to the canvas's tool before panning."""

    def __init__(self, canvas: SceneCanvas) -> None:
        super().__init__(lockAspect=True, enableMenu=False)
        self._canvas = canvas
        self._tool_drag = False

    def mouseClickEvent(self, ev: Any) -> None:
        """Left click → tool.click; right click → tool.finish."""
        pos = self.mapSceneToView(ev.scenePos())
        point = (pos.x(), pos.y())
        if ev.button() == Qt.MouseButton.LeftButton:
            ev.accept()
            self._canvas.deliver_click(point, ev.double())
        elif ev.button() == Qt.MouseButton.RightButton:
            ev.accept()
            self._canvas.deliver_finish()
        else:
            super().mouseClickEvent(ev)

    def mouseDragEvent(self, ev: Any, axis: int | None = None) -> None:
        """A left drag goes to the tool when its ``press`` takes it; otherwise the view pans."""
        if ev.button() == Qt.MouseButton.LeftButton:
            if ev.isStart():
                start = self.mapToView(ev.buttonDownPos())
                self._tool_drag = self._canvas.deliver_press((start.x(), start.y()))
            if self._tool_drag:
                ev.accept()
                pos = self.mapToView(ev.pos())
                point = (pos.x(), pos.y())
                if ev.isFinish():
                    self._tool_drag = False
                    self._canvas.deliver_release(point)
                else:
                    self._canvas.deliver_drag(point)
                return
        super().mouseDragEvent(ev, axis)


class SceneCanvas(QWidget):
    """Edits and animates a scene document.

    Parameters
    ----------
    document : SceneDocument
        The scene to draw and edit.

    Signals
    -------
    status_message(str)
        A short message for the status bar (refused edits, hints, sizes).
    impulse_requested(str, object, object)
        During a run, the impulse tool asks for an impulse: body id, point
        ``[x, y]`` (m) and vector ``[Sx, Sy]`` (N·s), world frame.
    grab_started()
        The grab tool took a body of the run shown (``impactgui.live``).
    state_requested(str, object, object)
        The grab tool asks to put a body of the run shown at a centre ``[x, y]`` (m)
        with a velocity ``[vx, vy]`` (m/s) from the time shown.
    tool_changed(str)
        The active tool changed (its name).
    pointer_moved(float, float)
        The pointer moved over the view, to ``(x, y)`` (m, world).
    """

    status_message = Signal(str)
    impulse_requested = Signal(str, object, object)
    grab_started = Signal()
    state_requested = Signal(str, object, object)
    tool_changed = Signal(str)
    pointer_moved = Signal(float, float)

    def __init__(self, document: SceneDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.grid_step = GRID_STEP
        self.snapping = True
        self.editing_enabled = True
        self.current_time = 0.0

        self.view = _ToolViewBox(self)
        self.plot = pg.PlotWidget(viewBox=self.view, background=BACKGROUND)
        show_grid(self.plot, BACKGROUND, alpha=0.25)
        self.plot.setLabel("bottom", "x", units="m")
        self.plot.setLabel("left", "y", units="m")
        self.plot.hideButtons()
        # room above the view for half the top tick label of the y axis (cut at the edge)
        room = (self.fontMetrics().height() + 1) // 2
        self.plot.getPlotItem().layout.setContentsMargins(1, room, 1, 1)
        for axis in ("bottom", "left"):
            self.plot.getAxis(axis).enableAutoSIPrefix(False)
            self.plot.getAxis(axis).setTextPen(QColor("#455a64"))
            self.plot.getAxis(axis).setPen(QColor("#90a4ae"))
            # The axes (with their grid lines) change only on pan and zoom: repaint them
            # from a pixmap instead of re-rendering the tick text on every frame.
            self.plot.getAxis(axis).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        # Bodies move on every frame; a BSP index would be rebuilt for each of them.
        self.plot.scene().setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)
        self.plot.installEventFilter(self)
        self.plot.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)

        self.layer = SceneLayer(self.view)
        self._velocity_arrows = self._overlay(ArrowField(), 20)
        self._impulse_arrows = self._overlay(ArrowField(width=3.0), 20)
        self._impulse_labels: list[pg.TextItem] = []
        self.forcing = ForcingDrawing(self.view)
        self.overlaps = OverlapDrawing(self.view)
        """The overlap δ of each compliant contact of the frame shown (``soft_look``)."""
        self._velocity_handles = self._overlay(
            _HandleScatter(size=9, pen=pg.mkPen(VELOCITY_COLOUR), brush=pg.mkBrush("w")), 21
        )
        self._boundary_handles = self._overlay(
            _HandleScatter(
                size=8, symbol="s", pen=pg.mkPen(BOUNDARY_COLOUR), brush=pg.mkBrush("w")
            ),
            21,
        )
        self._preview = self._overlay(
            pg.PlotCurveItem(pen=pg.mkPen(PREVIEW_COLOUR, width=2, style=Qt.PenStyle.DashLine)),
            30,
        )
        self._preview_arrow = self._overlay(ArrowField(width=3.0), 30)

        self._animating = False
        self._system: Any = None
        self._layout = _FrameLayout.empty()
        self._layout_radii = np.zeros(0)
        self._shown_pose = np.zeros((0, 3))
        """``(x, y, angle)`` per body of the frame shown last: only bodies that moved are placed."""
        self._shown_velocity = np.zeros((0, 2))
        """``(vx, vy)`` per body of the frame shown last (``shown_motion``), m/s."""
        self._trails = self._overlay(TrailField(), 4)
        self._last_time = -math.inf
        self._force_unit = 1.0
        self._frame_velocity = self._overlay(ArrowField(), 20)
        self._forces = self._overlay(ArrowField(width=3.0), 22)
        self._flashes = self._overlay(FlashField(), 25)
        self._flash_timer = QTimer(self)
        self._flash_timer.setInterval(FLASH_TICK_MS)
        self._flash_timer.timeout.connect(self._on_flash_tick)
        self.legend = QLabel(self.plot)
        self.legend.setStyleSheet(
            "QLabel { background: rgba(255,255,255,210); color: #37474f; padding: 3px 6px;"
            " border: 1px solid #b0bec5; border-radius: 3px; }"
        )
        self.legend.move(70, 8)
        self.legend.hide()

        self._tools: dict[str, Tool] = {cls.name: cls(self) for cls in TOOL_TYPES}
        self._tool = self._tools["select"]
        self._actions = QActionGroup(self)
        self._actions.setExclusive(True)
        for tool in self._tools.values():
            action = QAction(tool.label, self)
            action.setCheckable(True)
            action.setData(tool.name)
            action.setToolTip(f"{tool.label} ({tool.shortcut}): {tool.tip}")
            action.setStatusTip(tool.tip)
            action.setShortcut(tool.shortcut)
            action.setChecked(tool.name == "select")
            self._actions.addAction(action)
        self._actions.triggered.connect(self._on_tool_action)
        self.snap_action = QAction("Snap to grid", self)
        self.snap_action.setCheckable(True)
        self.snap_action.setChecked(True)
        self.snap_action.setToolTip(f"Snap positions to a {GRID_STEP * 100:g} cm grid")
        self.snap_action.toggled.connect(self.set_snapping)
        self.following = False
        """View ▸ Follow selected body: the view keeps the selected body at its centre."""
        self.camera_moved_by_user = False
        """The user panned or zoomed since the last fit: a run no longer moves the view."""
        self.view.sigRangeChangedManually.connect(self._on_camera_moved_by_user)
        self.view.sigRangeChanged.connect(self._on_range_changed)

        self.plot.scene().sigMouseMoved.connect(self._on_mouse_moved)
        document.changed.connect(self._on_document_changed)
        document.selection_changed.connect(self._on_selection_changed)
        document.reset.connect(self._on_document_reset)
        self._redraw()
        self._update_action_states()
        self.fit_view()

    def _overlay(self, item: Any, z: float) -> Any:
        item.setZValue(z)
        self.view.addItem(item, ignoreBounds=True)
        return item

    # ------------------------------------------------------------ tools API

    def tool_actions(self) -> list[QAction]:
        """Checkable actions, one per tool, in one exclusive QActionGroup (toolbar order)."""
        return list(self._actions.actions())

    @property
    def tool(self) -> Tool:
        """The active tool."""
        return self._tool

    def set_tool(self, name: str) -> None:
        """Activate the tool called ``name`` (``"select"``, ``"wall"``, ``"curb"``, ...)."""
        if name not in self._tools:
            raise ValueError(f"unknown tool {name!r}; tools: {', '.join(self._tools)}")
        if self._tool.name != name:
            self._tool.cancel()
            self._tool = self._tools[name]
            for action in self._actions.actions():
                if action.data() == name:
                    action.setChecked(True)
            self._update_handles()
            self.status_message.emit(self._tool.tip)
            self.tool_changed.emit(name)

    @Slot(QAction)
    def _on_tool_action(self, action: QAction) -> None:
        self.set_tool(str(action.data()))

    @Slot(bool)
    def set_snapping(self, enabled: bool) -> None:
        """Snap positions to ``grid_step`` (m) or not."""
        self.snapping = bool(enabled)
        if self.snap_action.isChecked() != self.snapping:
            self.snap_action.setChecked(self.snapping)

    def snap(self, pos: Sequence[float]) -> Point:
        """``pos`` rounded to the grid when snapping is on (m)."""
        if not self.snapping:
            return (float(pos[0]), float(pos[1]))
        step = self.grid_step
        return tuple(round(round(float(c) / step) * step, 10) for c in pos[:2])  # type: ignore[return-value]

    @Slot(bool)
    def set_editing_enabled(self, enabled: bool) -> None:
        """Allow edits (False while a run is shown: only panning, zooming and selecting)."""
        self.editing_enabled = bool(enabled)
        if not enabled:
            self._tool.cancel()
        self._update_action_states()

    def try_push(self, command: SceneCommand) -> bool:
        """Push ``command`` unless it makes the scene invalid; say why when it does.

        An edit is refused when the scene after it has a problem at a place
        (JSON path) that had none before: a body placed or moved over a wall
        or another body, a degenerate wall, and so on. An edit that changes
        nothing is dropped (no empty undo step).
        """
        if not self.editing_enabled:
            self.status_message.emit("Stop the run (Reset) to edit the scene.")
            return False
        if command.after == self.document.data:
            return True
        before = {problem_path(p)[0] for p in self.document.problems()}
        new = [p for p in scene_problems(command.after) if problem_path(p)[0] not in before]
        if new:
            self.status_message.emit(f"Not allowed: {new[0]}")
            return False
        self.document.push(command)
        return True

    # ------------------------------------------------------- event delivery

    def _tool_may_act(self) -> bool:
        return self.editing_enabled or self._tool.while_running or self._tool.name == "select"

    def deliver_click(self, pos: Point, double: bool = False) -> None:
        """A left click at ``pos`` (m) for the active tool."""
        if self._tool_may_act():
            self._tool.click(pos, double)

    def deliver_press(self, pos: Point) -> bool:
        """Start of a left drag at ``pos`` (m); True when the tool takes the drag."""
        return self._tool_may_act() and self._tool.press(pos)

    def deliver_drag(self, pos: Point) -> None:
        """The tool's drag moved to ``pos`` (m)."""
        self._tool.drag(pos)

    def deliver_release(self, pos: Point) -> None:
        """The tool's drag ended at ``pos`` (m)."""
        self._tool.release(pos)

    def deliver_finish(self) -> None:
        """Right click or Enter: the tool completes what it is drawing."""
        self._tool.finish()

    @Slot(object)
    def _on_mouse_moved(self, scene_pos: QPointF) -> None:
        if self.view.sceneBoundingRect().contains(scene_pos):
            pos = self.view.mapSceneToView(scene_pos)
            self._tool.hover((pos.x(), pos.y()))
            self.pointer_moved.emit(pos.x(), pos.y())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Enter finishes, Escape cancels what the tool is drawing."""
        if watched is self.plot and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self.deliver_finish()
                return True
            if event.key() == Qt.Key.Key_Escape:
                self._tool.cancel()
                return True
            if event.key() in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace):
                self.delete_selection()
                return True
        return super().eventFilter(watched, event)

    def delete_selection(self) -> None:
        """Delete the selected item, if any."""
        if self.document.selection is not None:
            self.try_push(DeleteItem(self.document, self.document.selection))

    # --------------------------------------------------------------- preview

    def set_preview(self, points: Iterable[Point] | None) -> None:
        """Show a dashed rubber-band polyline through ``points`` (m); None hides it."""
        points = list(points) if points is not None else []
        if len(points) < 2:
            self._preview.setData([], [])
            return
        xs, ys = zip(*points, strict=True)
        self._preview.setData(np.array(xs, dtype=float), np.array(ys, dtype=float))

    def preview_points(self) -> list[Point]:
        """The rubber band shown now (m)."""
        xs, ys = self._preview.getData()
        if xs is None:
            return []
        return [(float(x), float(y)) for x, y in zip(xs, ys, strict=True)]

    def set_preview_arrow(self, start: Point | None, end: Point | None) -> None:
        """Show an arrow from ``start`` to ``end`` (m) while a drag sizes it; None hides it."""
        if start is None or end is None:
            self._preview_arrow.set_arrows([])
        else:
            self._preview_arrow.set_arrows([(*start, *end, IMPULSE_COLOUR)])

    # ----------------------------------------------------------- hit testing

    def shown_motion(self, body_id: str) -> tuple[Point, Point] | None:
        """Centre (m) and velocity (m/s) of a body in the run's frame shown; None if none."""
        if not self._animating or len(self._shown_velocity) != len(self._layout.ids):
            return None
        index = self._layout.index_of(body_id)
        if index is None:
            return None
        x, y, _ = self._shown_pose[index].tolist()
        vx, vy = self._shown_velocity[index].tolist()
        return (x, y), (vx, vy)

    def pixel_size(self) -> float:
        """Length of one screen pixel in scene units (m)."""
        px, py = self.view.viewPixelSize()
        return float(max(px, py)) if px and py else 0.01

    @staticmethod
    def body_centre(body: Mapping[str, Any]) -> Point:
        """A body dict's centre at t = 0 (m)."""
        if body.get("type") == "bead":
            return (float(body["x"]), float(body["rail_y"]))
        return (float(body["position"][0]), float(body["position"][1]))

    @staticmethod
    def body_velocity(body: Mapping[str, Any]) -> Point:
        """A disk body dict's initial centre velocity (m/s); (0, 0) for axle carts."""
        if body.get("type") == "bead":
            return (float(body.get("vx", 0.0)), 0.0)
        if body.get("type") == "wheel":
            velocity = body.get("velocity", (0.0, 0.0))
            return (float(velocity[0]), float(velocity[1]))
        return (0.0, 0.0)

    @staticmethod
    def body_extent(body: Mapping[str, Any]) -> float:
        """How far a body reaches from its centre (m)."""
        if body.get("type") == "axle_cart":
            return float(body["half_length"]) + float(body["wheel_radius"])
        return float(body["radius"])

    @staticmethod
    def boundary_handles(boundary: Mapping[str, Any]) -> list[tuple[str, int | None, Point]]:
        """Draggable handles of a boundary dict: ``(field, index, position)``."""
        kind = boundary.get("type")
        if kind == "segment":
            return [("a", None, tuple(boundary["a"])), ("b", None, tuple(boundary["b"]))]
        if kind == "polyline":
            return [("points", k, tuple(p)) for k, p in enumerate(boundary["points"])]
        cx, cy = boundary["center"]
        r = boundary["radius"]
        handles: list[tuple[str, int | None, Point]] = [("center", None, (cx, cy))]
        start = float(boundary["start_deg"])
        middle = math.radians(start + 0.5 * arc_sweep_deg(start, boundary["end_deg"]))
        handles.append(("radius", None, (cx + r * math.cos(middle), cy + r * math.sin(middle))))
        for key in ("start_deg", "end_deg"):
            angle = math.radians(boundary[key])
            handles.append((key, None, (cx + r * math.cos(angle), cy + r * math.sin(angle))))
        return handles

    def hit_test(self, pos: Point, bodies_only: bool = False) -> Hit | None:
        """The item under ``pos`` (m), or None.

        Priority: velocity handles, bodies (the nearest centre), boundary
        handles, boundaries, springs, scheduled impulses.
        """
        data = self.document.data
        tolerance = HIT_PX * self.pixel_size()
        bodies = [b for b in enumerate(data.get("bodies", [])) if self._drawable(b[1])]
        if not bodies_only:
            for index, body in bodies:
                if body.get("type") == "axle_cart":
                    continue
                head = self._velocity_head(body)
                if math.dist(pos, head) <= VELOCITY_HIT_PX * self.pixel_size():
                    return Hit(("bodies", index), "velocity")
        best: tuple[float, int] | None = None
        for index, body in bodies:
            distance = math.dist(pos, self._shown_centre(body))
            if distance <= self.body_extent(body) and (best is None or distance < best[0]):
                best = (distance, index)
        if best is not None:
            return Hit(("bodies", best[1]), "body")
        if bodies_only:
            return None
        boundaries = list(enumerate(data.get("boundaries", [])))
        for index, boundary in boundaries:
            for field, k, point in self._safe_handles(boundary):
                if math.dist(pos, point) <= tolerance:
                    return Hit(("boundaries", index), "handle", field, k)
        for index, boundary in boundaries:
            try:
                points = boundary_points(boundary)
            except (KeyError, TypeError, ValueError):
                continue
            if distance_to_polyline(pos, points) <= tolerance:
                return Hit(("boundaries", index), "line")
        centres = {b.get("id"): self.body_centre(b) for _, b in bodies}
        for index, spring in enumerate(data.get("springs", [])):
            a = centres.get(spring.get("a"))
            b = centres.get(spring.get("b")) if "b" in spring else spring.get("anchor")
            if a is not None and b is not None:
                if distance_to_polyline(pos, np.array([a, b], dtype=float)) <= tolerance:
                    return Hit(("springs", index), "spring")
        force = force_under(data, centres, pos, tolerance)
        if force is not None:
            return Hit(("forces", force), "force")
        for index, impulse in enumerate(data.get("impulses", [])):
            try:
                point, _ = impulse_in_world(impulse, data)
            except (KeyError, TypeError, ValueError, StopIteration):
                continue
            if math.dist(pos, point) <= tolerance:
                return Hit(("impulses", index), "impulse")
        return None

    def _shown_centre(self, body: Mapping[str, Any]) -> Point:
        """Where a body is drawn now: its animated position during a run, else its start."""
        item = self.layer.bodies.get(body.get("id", "")) if self._animating else None
        if item is not None:
            return (item.pos().x(), item.pos().y())
        return self.body_centre(body)

    def _safe_handles(self, boundary: Mapping[str, Any]) -> list[tuple[str, int | None, Point]]:
        """The boundary's handles, or none when a position is not a pair of finite numbers."""
        try:
            handles = [
                (field, index, (float(p[0]), float(p[1])))
                for field, index, p in self.boundary_handles(boundary)
            ]
        except (KeyError, TypeError, ValueError, IndexError):
            return []
        if not all(math.isfinite(x) and math.isfinite(y) for _, _, (x, y) in handles):
            return []
        return handles

    def _drawable(self, body: Mapping[str, Any]) -> bool:
        """True when the body has a finite centre and a finite positive extent (m)."""
        try:
            cx, cy = self.body_centre(body)
            extent = self.body_extent(body)
        except (KeyError, TypeError, ValueError, IndexError):
            return False
        return math.isfinite(cx) and math.isfinite(cy) and 0.0 < extent < math.inf

    def _velocity_head(self, body: Mapping[str, Any]) -> Point:
        """Head of the body's velocity arrow (m); its centre when the velocity is unreadable."""
        cx, cy = self.body_centre(body)
        try:
            vx, vy = self.body_velocity(body)
        except (KeyError, TypeError, ValueError, IndexError):
            return (cx, cy)
        if not (math.isfinite(vx) and math.isfinite(vy)):
            return (cx, cy)
        return (cx + VELOCITY_SCALE * vx, cy + VELOCITY_SCALE * vy)

    # ------------------------------------------------------ editing drawing

    @Slot()
    def _on_document_changed(self) -> None:
        if not self._animating:
            self._redraw()
        self._update_action_states()

    @Slot(object)
    def _on_selection_changed(self, selection: object) -> None:
        if not self._animating:  # only the highlight changes: the arrows and handles stay
            data = self.document.data
            crowded = len(data.get("bodies", [])) > LABELLED_BODIES_MAX
            self.layer.build(data, self.document.selection, labels=not crowded)
            if data.get("forces"):
                self._draw_forcing(data)
        body = self._followed_body()
        if body is not None:
            self._centre_on(*self._shown_centre(body))

    @Slot()
    def _on_document_reset(self) -> None:
        self._tool.cancel()
        self.clear_animation()
        self.fit_view()

    def _redraw(self) -> None:
        data = self.document.data
        crowded = len(data.get("bodies", [])) > LABELLED_BODIES_MAX
        self.layer.build(data, self.document.selection, labels=not crowded)
        arrows: list[Arrow] = []
        heads: list[Point] = []
        for body in data.get("bodies", []):
            if not self._drawable(body) or body.get("type") == "axle_cart":
                continue
            centre, head = self.body_centre(body), self._velocity_head(body)
            heads.append(head)
            if centre != head:
                arrows.append((*centre, *head, VELOCITY_COLOUR))
        self._velocity_arrows.set_arrows(arrows)
        self._velocity_handles.setData(pos=np.array(heads, dtype=float).reshape(-1, 2))
        impulses = []
        for label in self._impulse_labels:
            self.view.removeItem(label)
        self._impulse_labels = []
        for impulse in data.get("impulses", []):
            try:
                (px, py), (sx, sy) = impulse_in_world(impulse, data)
                text = f"{math.hypot(sx, sy):.3g} N·s at {float(impulse['time']):g} s"
            except (KeyError, TypeError, ValueError, StopIteration):
                continue
            scale = 1.0 / IMPULSE_SCALE
            head = (px + scale * sx, py + scale * sy)
            impulses.append((px, py, *head, IMPULSE_COLOUR))
            label = pg.TextItem(text, color=IMPULSE_COLOUR, anchor=(0.0 if sx >= 0 else 1.0, 0.5))
            label.setPos(*head)
            self._overlay(label, 20)
            self._impulse_labels.append(label)
        self._impulse_arrows.set_arrows(impulses)
        self._draw_forcing(data)
        self._update_handles()

    def _draw_forcing(self, data: Mapping[str, Any]) -> None:
        """The harmonic forces' amplitudes while editing (``impactgui.forcing``)."""
        bodies = data.get("bodies", [])
        centres = {b.get("id"): self.body_centre(b) for b in bodies if self._drawable(b)}
        selection = self.document.selection
        chosen = selection[1] if selection is not None and selection[0] == "forces" else None
        self.forcing.show_editing(data, centres, chosen)

    def impulse_labels(self) -> list[str]:
        """Texts shown next to the scheduled impulse arrows (size and time)."""
        return [label.textItem.toPlainText() for label in self._impulse_labels]

    def _update_handles(self) -> None:
        points = []
        if self._tool.name == "select" and not self._animating:
            for boundary in self.document.data.get("boundaries", []):
                points += [p for _, _, p in self._safe_handles(boundary)]
        self._boundary_handles.setData(pos=np.array(points, dtype=float).reshape(-1, 2))

    def _update_action_states(self) -> None:
        view = "top" if self.document.is_top_view else "side"
        for action in self._actions.actions():
            tool = self._tools[str(action.data())]
            usable = view in tool.views and (
                self.editing_enabled or tool.while_running or tool.name == "select"
            )
            action.setEnabled(usable)
            if not usable and tool is self._tool:
                self.set_tool("select")

    @Slot(object)
    def _on_camera_moved_by_user(self, _mask: object) -> None:
        self.camera_moved_by_user = True

    def set_following(self, enabled: bool) -> None:
        """View ▸ Follow selected body: keep the selected body at the centre of the view."""
        self.following = bool(enabled)
        if self.following:
            body = self._followed_body()
            if body is None:
                self.status_message.emit("Select a body to follow it.")
            else:
                self._centre_on(*self._shown_centre(body))

    def _followed_body(self) -> dict[str, Any] | None:
        """The selected body, when there is one to follow."""
        selection = self.document.selection
        if not self.following or selection is None or selection[0] != "bodies":
            return None
        body = self.document.item(selection)
        return body if self._drawable(body) else None

    def _centre_on(self, x: float, y: float) -> None:
        (x0, x1), (y0, y1) = self.view.viewRange()
        if math.isfinite(x + y):
            dx, dy = x - (x0 + x1) / 2, y - (y0 + y1) / 2
            self.view.setRange(xRange=(x0 + dx, x1 + dx), yRange=(y0 + dy, y1 + dy), padding=0)

    def _keep_in_view(self, x: np.ndarray, y: np.ndarray) -> None:
        """During a run: follow the selected body, or widen the view to every body in it.

        The view is widened (never narrowed) when a body leaves it, by the
        same margin ``fit_view`` leaves, unless the user has moved the camera
        since the last fit (View ▸ Fit scene hands it back).
        """
        followed = self._followed_body()
        if followed is not None and followed.get("id") in self._layout.ids:
            k = self._layout.ids.index(followed["id"])
            self._centre_on(float(x[k]), float(y[k]))
            return
        if self.camera_moved_by_user or len(x) == 0:
            return
        r = self._layout_radii
        finite = np.isfinite(x) & np.isfinite(y)
        if not finite.any():
            return
        low_x, high_x = float((x - r)[finite].min()), float((x + r)[finite].max())
        low_y, high_y = float((y - r)[finite].min()), float((y + r)[finite].max())
        (x0, x1), (y0, y1) = self.view.viewRange()
        if x0 <= low_x and high_x <= x1 and y0 <= low_y and high_y <= y1:
            return
        self.view.setRange(
            xRange=(min(x0, low_x), max(x1, high_x)),
            yRange=(min(y0, low_y), max(y1, high_y)),
            padding=FIT_PADDING,
        )

    def fit_view(self) -> None:
        """View ▸ Fit scene: show the whole scene with a margin; the view follows a run again.

        During a run the bodies count where they are now. Unreadable or
        non-finite parts are left out.
        """
        self.camera_moved_by_user = False
        xs: list[float] = []
        ys: list[float] = []
        data = self.document.data
        for boundary in data.get("boundaries", []):
            try:
                points = boundary_points(boundary)
            except (KeyError, TypeError, ValueError):
                continue
            xs += list(points[:, 0])
            ys += list(points[:, 1])
        for body in data.get("bodies", []):
            if self._drawable(body):
                (cx, cy), r = self._shown_centre(body), self.body_extent(body)
                xs += [cx - r, cx + r]
                ys += [cy - r, cy + r]
        for spring in data.get("springs", []):
            try:
                x, y = float(spring["anchor"][0]), float(spring["anchor"][1])
            except (KeyError, TypeError, ValueError, IndexError):
                continue
            xs.append(x)
            ys.append(y)
        finite = [(x, y) for x, y in zip(xs, ys, strict=True) if math.isfinite(x + y)]
        if finite:
            xs, ys = [x for x, _ in finite], [y for _, y in finite]
        else:
            xs, ys = [-0.5, 1.5], [-0.5, 1.0]
        self.view.setRange(
            xRange=(min(xs), max(xs) + 1e-3), yRange=(min(ys), max(ys) + 1e-3), padding=FIT_PADDING
        )

    # ------------------------------------------------------------- animation

    def show_frame(self, frame: Frame, system: Any, events: Iterable[Event] = ()) -> None:
        """Draw the bodies of ``system`` at ``frame`` with trails, arrows and impact flashes.

        ``system`` is the compiled ``solver.system.System`` of the run (its
        ``scene`` and ``dof_labels`` place the bodies); ``events`` are the
        events since the previous frame shown (impacts flash). The cost per
        frame is a few numpy operations plus one ``setPos`` per body that
        moved since the last frame shown (a chain of 2000 beads moves a few
        at a time): the trails and the velocity arrows of all bodies are one
        item each, and bodies at rest get no arrow.
        """
        if system is not self._system:
            self._start_animation(system)
        if frame.t < self._last_time:
            self._trails.clear_trails()
        self._last_time = frame.t
        self.current_time = float(frame.t)
        layout = self._layout
        q = np.concatenate((np.asarray(frame.q, dtype=float), layout.constants))
        v = np.append(np.asarray(frame.v, dtype=float), 0.0)
        x, y, angles = q[layout.x], q[layout.y], q[layout.angle]
        vx, vy = v[layout.vx], v[layout.vy]
        for item, theta_a, theta_b in layout.carts:
            item.set_wheel_angles(q[theta_a], q[theta_b])
        xs, ys = x.tolist(), y.tolist()
        pose = np.column_stack((x, y, angles))
        moved = (
            ~np.all(pose == self._shown_pose, axis=1)
            if len(pose) == len(self._shown_pose)
            else None
        )
        self._shown_pose = pose
        self._shown_velocity = np.column_stack((vx, vy))
        if moved is None:
            moved = np.ones(len(pose), dtype=bool)
        beads = moved & (layout.bead_slots >= 0)
        if beads.any():  # all at once: a chain of 2000 beads can move everywhere
            chosen = np.flatnonzero(beads)
            self.layer.place_beads(
                [layout.ids[k] for k in chosen.tolist()],
                layout.bead_slots[chosen],
                x[chosen],
                y[chosen],
            )
        for k in np.flatnonzero(moved & (layout.bead_slots < 0)).tolist():
            self.layer.place(
                layout.ids[k], xs[k], ys[k], float(angles[k]) if layout.turns[k] else None
            )
        centres = dict(zip(layout.ids, zip(xs, ys, strict=True), strict=True))
        moving = np.flatnonzero((vx != 0.0) | (vy != 0.0))
        heads_x, heads_y = (
            x[moving] + VELOCITY_SCALE * vx[moving],
            y[moving] + VELOCITY_SCALE * vy[moving],
        )
        self._frame_velocity.set_arrows(
            (xs[k], ys[k], hx, hy, VELOCITY_COLOUR)
            for k, hx, hy in zip(moving.tolist(), heads_x.tolist(), heads_y.tolist(), strict=True)
        )
        xy = np.column_stack((x, y))
        self._trails.append(xy)
        self._keep_in_view(x, y)
        self.layer.update_springs_at(layout.index, xy)
        self.forcing.show_time(centres, float(frame.t))
        self._show_forces(frame)
        if frame.contacts or self.overlaps.depths:
            pixel = self.view.viewPixelSize()[0]
            self.overlaps.show(frame.contacts, centres, self.layer.radius, pixel)
        impacts = [event for event in events if event.type == "impact"]
        for event in impacts[-FLASHES_PER_FRAME_MAX:]:
            point = self._impact_point(event, centres)
            if point is not None:
                self._flashes.add(*point)
        if self._flashes.active:
            # fade with this frame's repaint; the timer (restarted) ticks only once frames
            # stop coming: its own repaints fell between the display's and doubled them
            self._flashes.tick()
            if self._flashes.active:
                self._flash_timer.start()
            else:
                self._flash_timer.stop()

    def start_run(self, system: Any) -> None:
        """Make the drawing of a run of ``system`` now, ahead of its first frame (``show_frame``).

        The bodies stay where the scene has them until a frame is shown. A
        run already drawn is kept.
        """
        if system is not self._system:
            self._start_animation(system)

    def clear_animation(self) -> None:
        """Leave the animation: back to the editable scene of the document."""
        self._leave_animation()
        self._redraw()

    def restyle(self) -> None:
        """Draw everything afresh, with the line scale of ``scene_items.set_line_scale``.

        During a run the animation's layer is rebuilt (trails start over);
        the next frame shown places the bodies.
        """
        self.layer.clear()  # its parts are kept while their data do not change
        if self._animating and self._system is not None:
            self._start_animation(self._system)
        else:
            self._redraw()

    def _leave_animation(self) -> None:
        """Forget the run's drawing state (the layer is left for the caller to rebuild)."""
        self._animating = False
        self._system = None
        self._layout = _FrameLayout.empty()
        self._shown_pose = np.zeros((0, 3))
        self._trails.start(0, TRAIL_LENGTH)
        self._last_time = -math.inf
        self.current_time = 0.0
        self._frame_velocity.set_arrows([])
        self._forces.set_arrows([])
        self.overlaps.clear()
        self._flashes.clear()
        self._flash_timer.stop()
        self.legend.hide()
        for item in (self._velocity_arrows, self._velocity_handles, self._impulse_arrows):
            item.show()

    @property
    def animating(self) -> bool:
        """True while a run's frame is shown instead of the editable scene."""
        return self._animating

    def _start_animation(self, system: Any) -> None:
        self._leave_animation()  # the layer is built once, below, for the run
        self._tool.cancel()
        self._animating = True
        self._system = system
        data = scene_to_dict(system.scene)
        self.layer.build(data, labels=len(data["bodies"]) <= LABELLED_BODIES_MAX)
        for item in (
            self._velocity_arrows,
            self._velocity_handles,
            self._impulse_arrows,
            *self._impulse_labels,
        ):
            item.hide()
        self._boundary_handles.setData(pos=np.zeros((0, 2)))
        self._layout = _FrameLayout.of(system, data, self.layer)
        self._layout_radii = np.array([self.layer.radius(i) for i in self._layout.ids])
        count = len(self._layout.ids)
        self.layer.set_labels_visible(count <= LABELLED_BODIES_MAX)
        length = min(TRAIL_LENGTH, max(1, TRAIL_POINT_BUDGET // max(count, 1)))
        self._trails.start(count, length, keep_all=True)  # the whole run, decimated
        weights = [
            b.get("mass", b.get("axle_mass", 0.0)) * math.hypot(*data["gravity"])
            for b in data["bodies"]
        ]
        self._force_unit = _nice_ceiling(max([*weights, 0.0]) or 1.0)
        self._update_legend()
        self.forcing.start_run(data)

    def trail(self, body_id: str) -> np.ndarray:
        """The trail of a body's centre drawn now, shape (n, 2), m."""
        return self._trails.trail(self._layout.ids.index(body_id))

    def _show_forces(self, frame: Frame) -> None:
        arrows: list[Arrow] = []
        largest = 0.0
        for contact in frame.contacts:
            (px, py), (nx, ny) = contact.point, contact.normal
            normal = (contact.lam * nx, contact.lam * ny)
            friction = -contact.friction * contact.lam * contact.tau
            tangential = (friction * ny, -friction * nx)
            largest = max(largest, math.hypot(*normal), math.hypot(*tangential))
            arrows.append(("n", px, py, *normal))
            arrows.append(("t", px, py, *tangential))
        while largest > 5.0 * self._force_unit:
            self._force_unit = _nice_ceiling(2.0 * self._force_unit)
            self._update_legend()
        scale = FORCE_LEGEND_LENGTH / self._force_unit
        colours = {"n": NORMAL_FORCE_COLOUR, "t": FRICTION_FORCE_COLOUR}
        self._forces.set_arrows(
            (px, py, px + scale * fx, py + scale * fy, colours[kind])
            for kind, px, py, fx, fy in arrows
            if fx or fy
        )

    @property
    def force_arrows(self) -> list[Arrow]:
        """The contact force arrows drawn now: normal then friction per contact (m)."""
        return self._forces.arrows

    @property
    def flashing(self) -> bool:
        """True while an impact flash is fading."""
        return self._flashes.active

    def force_scale(self) -> float:
        """Length of a contact force arrow per newton now, m/N."""
        return FORCE_LEGEND_LENGTH / self._force_unit

    def _update_legend(self) -> None:
        normal, friction = NORMAL_FORCE_COLOUR.name(), FRICTION_FORCE_COLOUR.name()
        velocity = VELOCITY_COLOUR.name()
        text = (
            f"<span style='color:{velocity}'>■</span> velocity: {VELOCITY_SCALE * 100:g} cm = 1 m/s"
        )
        if self._system is not None and self._system.scene.view != "top":
            text = (
                f"<span style='color:{normal}'>■</span> normal force "
                f"<span style='color:{friction}'>■</span> friction: "
                f"{FORCE_LEGEND_LENGTH * 100:g} cm = {self._force_unit:g} N &nbsp; " + text
            )
        self.legend.setText(text)
        self.legend.adjustSize()
        self.legend.show()

    def _impact_point(
        self, event: Event, centres: Mapping[str, tuple[float, float]]
    ) -> tuple[float, float] | None:
        """Where an impact happened: the contact point between its body and the other side."""
        centre = centres.get(event.body)
        if centre is None:
            return None
        radius = self.layer.radius(event.body)
        other = centres.get(event.other)
        if other is not None:
            d = math.dist(centre, other)
            if d == 0:
                return centre
            return (
                centre[0] + radius * (other[0] - centre[0]) / d,
                centre[1] + radius * (other[1] - centre[1]) / d,
            )
        try:
            boundary = self._system.scene.boundary(event.other)
        except (KeyError, AttributeError):
            return centre
        nearest = [f.nearest(centre) for _, f in boundary_features(boundary)]
        found = [n for n in nearest if n is not None]
        if not found:
            return centre
        best = min(found, key=lambda n: n.d)
        return (float(best.point[0]), float(best.point[1]))

    @Slot(object, object)
    def _on_range_changed(self, _view: object, _ranges: object) -> None:
        """Zoomed: the overlaps' δ labels show once δ is a few pixels long."""
        if self.overlaps.depths:
            self.overlaps.relabel(self.view.viewPixelSize()[0])

    @Slot()
    def _on_flash_tick(self) -> None:
        self._flashes.tick()
        if not self._flashes.active:
            self._flash_timer.stop()

    # ---------------------------------------------------------------- export

    def export_png(self, path: str | Path) -> bool:
        """Save the canvas as it is shown now to a PNG file; False when it cannot be written."""
        return bool(self.plot.grab().save(str(path), "PNG"))
