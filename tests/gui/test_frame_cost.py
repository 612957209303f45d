"""What a streamed frame costs the GUI thread: repaints that are not asked for, layouts.

Behaviour only: speed is measured by ``bench/gui.py``, never asserted here.
"""

from __future__ import annotations

import time

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QFontMetricsF

from impactgui import plots as plots_module
from impactgui.canvas import FLASH_TICK_MS, SceneCanvas
from impactgui.document import SceneDocument
from impactgui.names import contact_name
from impactgui.peak_curve import PeakCurve
from impactgui.plots import (
    AXIS_WIDTH,
    ENERGY_TERMS,
    TIP_SIZE_PX,
    PlotPanel,
    _StemTips,
    refill_legend,
)
from impactgui.presets import SCENES_DIR
from impactgui.scene_items import FLASH_DURATION, TrailField
from solver.frames import ContactState, EnergyBudget, Event, Frame, StepOutput
from solver.record import Trajectory
from solver.system import System


def _frame(system: System, x: float, t: float) -> Frame:
    q = np.array([x, 0.1, 0.0])
    return Frame(t, "sample", q, system.v0, (), EnergyBudget(0, 0, 0, 0, 0))


def test_flashes_fade_with_the_frames_shown_and_their_timer_waits_for_a_pause(
    qtbot, canvas: SceneCanvas, doc: SceneDocument
) -> None:
    # the flash timer's own repaints fell between the display's frames: a streaming
    # 200-bead chain painted its canvas 385 times for 284 frames
    doc.load(SCENES_DIR / "wheel_curb_e03.json")
    system = System(doc.scene())
    impact = Event(0.01, "impact", "wheel", "curb#s3", normal_impulse=30.0)
    canvas.show_frame(_frame(system, 0.5, 0.01), system, [impact])
    assert canvas.flashing
    start, t = time.monotonic(), 0.01
    while time.monotonic() - start < FLASH_DURATION + 0.05:  # no event handled: no timer tick
        t += 0.001
        canvas.show_frame(_frame(system, 0.5 + t, t), system)
        time.sleep(FLASH_TICK_MS / 3000)
    assert not canvas.flashing  # faded with the frames alone
    assert not canvas._flash_timer.isActive()
    canvas.show_frame(_frame(system, 0.6, t + 0.001), system, [impact])
    assert canvas._flash_timer.isActive()
    qtbot.waitUntil(lambda: not canvas.flashing, timeout=2000)  # no more frames: the timer
    assert not canvas._flash_timer.isActive()


def test_value_axes_start_wide_enough_for_eight_character_ticks(qtbot) -> None:
    # the paper-004 wheel's axes widened from 56 px within its first second: a layout and
    # re-render of all five plots in one paint
    panel = PlotPanel()
    qtbot.addWidget(panel)
    axes = [plot.getAxis("left") for plot in panel.plots]
    font = axes[0].style["tickFont"] or axes[0].font()
    for text in ("-0.00025", "-2.5e+09"):
        for axis in axes:
            axis.textWidth = QFontMetricsF(font).horizontalAdvance(text)
        panel._fit_axis_width()
        assert {axis.fixedWidth for axis in axes} == {AXIS_WIDTH}


def test_stem_tips_are_dots_of_their_group_colour_at_each_tip(qtbot) -> None:
    # one item stamps every group's tips: a scatter per group spent 6 ms of a chain's redraw
    widget = pg.PlotWidget(background="w")
    qtbot.addWidget(widget)
    widget.resize(400, 300)
    widget.show()
    tips = _StemTips(size=TIP_SIZE_PX)
    widget.addItem(tips)
    widget.setRange(xRange=(0, 10), yRange=(0, 10), padding=0)
    red, blue = QColor("#ff0000"), QColor("#0000ff")
    tips.set_tips("a", red, np.array([2.0, 6.0]), np.array([3.0, 7.0]))
    tips.set_tips("b", blue, np.array([8.0]), np.array([2.0]))
    tips.set_tips("a", red, np.array([2.0]), np.array([3.0]))  # a group's tips replace its last
    assert [(c.rgba(), x.tolist(), y.tolist()) for c, x, y in tips.tips()] == [
        (red.rgba(), [2.0], [3.0]),
        (blue.rgba(), [8.0], [2.0]),
    ]
    qtbot.wait(50)

    def colour_at(x: float, y: float, dx: float = 0.0) -> int:
        view = widget.plotItem.vb
        point = widget.mapFromScene(view.mapViewToScene(QPointF(x, y)))
        return widget.grab().toImage().pixelColor(round(point.x() + dx), round(point.y())).rgb()

    assert colour_at(2.0, 3.0) == red.rgb()
    assert colour_at(8.0, 2.0) == blue.rgb()
    assert colour_at(6.0, 7.0) != red.rgb()  # replaced
    assert colour_at(8.0, 2.0, dx=TIP_SIZE_PX) != blue.rgb()  # a dot of TIP_SIZE_PX
    tips.setSize(3 * TIP_SIZE_PX)  # presentation mode scales the dots
    qtbot.wait(50)
    assert colour_at(8.0, 2.0, dx=TIP_SIZE_PX) == blue.rgb()


def _energy_frames(start: int, stop: int) -> StepOutput:
    """Frames ``start`` to ``stop - 1``, 1 ms apart: 1 J swapping between kinetic and potential."""
    state = np.zeros(2)
    frames = []
    for i in range(start, stop):
        kinetic = 0.5 + 0.4 * np.sin(i * 1e-3)
        energy = EnergyBudget(kinetic, 1.0 - kinetic, 0.0, 0.0, 0.0)
        frames.append(Frame(i * 1e-3, "sample", state, state, (), energy))
    return StepOutput(frames, [])


def test_a_streaming_tick_sets_the_energy_curves_one_by_one_past_its_slice(
    qtbot, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each setData costs pyqtgraph O(frames): the seven curves took 21 ms of one tick at 3e5
    monkeypatch.setattr(plots_module, "REDRAW_SLICE_S", 0.0)  # one curve a tick
    panel = PlotPanel()
    qtbot.addWidget(panel)
    trajectory = Trajectory()
    panel.set_run(trajectory, None)
    first = _energy_frames(0, 300)
    trajectory.append(first)
    panel.add_output(first)

    def lengths() -> dict[str, int]:
        datasets = {name: curve.getOriginalDataset() for name, curve in panel.energy_curves.items()}
        return {name: 0 if x is None else len(x) for name, (x, _) in datasets.items()}

    panel._on_redraw_timer()
    assert lengths() == {name: 300 if name == "kinetic" else 0 for name, _ in ENERGY_TERMS}
    more = _energy_frames(300, 400)  # arrives while the energy part goes on
    trajectory.append(more)
    panel.add_output(more)
    for _ in range(len(ENERGY_TERMS) - 1):
        panel._on_redraw_timer()
    assert set(lengths().values()) == {300}  # every curve with the same frames
    _, kinetic = panel.energy_curves["kinetic"].getOriginalDataset()
    _, potential = panel.energy_curves["potential"].getOriginalDataset()
    np.testing.assert_allclose(kinetic + potential, 1.0, rtol=0, atol=1e-15)
    panel.redraw()  # a full redraw: every curve with every frame
    assert set(lengths().values()) == {400}
    _, balance = panel.energy_curves["balance"].getOriginalDataset()
    np.testing.assert_allclose(balance, 1.0, rtol=0, atol=1e-15)
    assert len(panel._balance) == 400  # each frame in the balance once


def test_trails_leave_out_repeated_positions_however_long_they_run() -> None:
    # whether a body moved is worked out when its position is appended: the curve must be
    # the window's positions without repeats, body after body, through the ring's wrap
    rng = np.random.default_rng(7)
    count, length = 5, 7
    trails = TrailField()
    trails.start(count, length)
    history: list[np.ndarray] = []
    for frame in range(40):
        if frame == 25:  # time went back: the trails start over
            trails.clear_trails()
            history.clear()
        positions = np.round(rng.normal(size=(count, 2)), 1)
        resting = rng.random(count) < 0.6
        if history:
            positions[resting] = history[-1][resting]
        positions[0, 1] = np.nan if frame == 30 else positions[0, 1]  # a NaN never repeats
        history.append(positions)
        trails.append(positions)
        window = np.array(history[-length:])  # (frames, bodies, 2)
        expected_x, expected_y, expected_connect = [], [], []
        for body in range(count):
            path = window[:, body]
            moved = np.r_[True, np.any(path[1:] != path[:-1], axis=1)]
            expected_x += path[moved, 0].tolist()
            expected_y += path[moved, 1].tolist()
            expected_connect += [1] * (int(moved.sum()) - 1) + [0]
        x, y = trails.getData()
        np.testing.assert_array_equal(x, expected_x)
        np.testing.assert_array_equal(y, expected_y)
        assert trails.opts["connect"].tolist() == expected_connect


def test_a_value_range_step_keeps_the_curves_as_drawn_and_a_hand_zoom_limits_far_points(
    qtbot,
) -> None:
    # with pyqtgraph's far-off limit on, every value-range step made each curve anew
    # (clip to view, peak downsampling: O(frames)); the run's end spent 10 ms on it at 1e5
    panel = PlotPanel()
    qtbot.addWidget(panel)
    panel.resize(600, 900)
    trajectory = Trajectory()
    panel.set_run(trajectory, None)
    batch = _energy_frames(0, 20000)
    trajectory.append(batch)
    panel.add_output(batch)
    panel.redraw()
    kinetic = panel.energy_curves["kinetic"]
    x, y = kinetic.getData()  # what is drawn (downsampled to the plot's width)
    assert 0 < len(x) < 20000
    low, high = panel.energy_plot.vb.viewRange()[1]
    panel.energy_plot.setYRange(low - 0.5, high + 0.5, padding=0)  # a step of the value axis
    x_after, y_after = kinetic.getData()
    assert x_after is x and y_after is y  # the same arrays: nothing made anew
    # the same as drawing it afresh with every frame under the new range
    fresh = PeakCurve(**panel._line_options(panel.energy_plot))
    panel.energy_plot.addItem(fresh)
    fresh.setData(*kinetic.getOriginalDataset())
    np.testing.assert_array_equal(fresh.getData()[0], x)
    np.testing.assert_array_equal(fresh.getData()[1], y)
    panel.energy_plot.removeItem(fresh)
    # zoomed by hand: far-off points are limited as pyqtgraph does (Qt cannot draw them)
    panel.energy_plot.vb.sigRangeChangedManually.emit([False, True])
    assert all(
        curve.opts["dynamicRangeLimit"] == plots_module.FAR_OFF_LIMIT
        for curve in panel.energy_curves.values()
    )
    panel.energy_plot.vb.enableAutoRange(y=True)  # its "A" button: the panel fits it again
    panel._resume_auto_ranged_views()
    assert all(curve.opts["dynamicRangeLimit"] is None for curve in panel.energy_curves.values())


def _wheel_panel(qtbot) -> tuple[PlotPanel, Trajectory, System]:
    """A shown 600 x 900 plot panel given an empty run of the paper-004 wheel."""
    doc = SceneDocument()
    doc.load(SCENES_DIR / "wheel_curb_e03.json")
    system = System(doc.scene())
    panel = PlotPanel()
    qtbot.addWidget(panel)
    panel.resize(600, 900)
    panel.show()
    qtbot.waitExposed(panel)
    trajectory = Trajectory(system)
    panel.set_run(trajectory, system)
    qtbot.wait(50)
    return panel, trajectory, system


def test_the_first_contact_in_the_legends_moves_no_plot(qtbot) -> None:
    # its legend entries widened the legends' column: all five plots were laid out and
    # re-rendered in one paint at the start of every paper-004 wheel run (13-17 ms)
    panel, trajectory, system = _wheel_panel(qtbot)
    before = [plot.vb.sceneBoundingRect() for plot in panel.plots]
    contact = ContactState("wheel", "curb#v2", 5.0, 0.0, 0.0, 0.0, "stick")  # longest name
    frame = Frame(0.0, "sample", system.q0, system.v0, (contact,), EnergyBudget(0, 0, 0, 0, 0))
    batch = StepOutput([frame], [])
    trajectory.append(batch)
    panel.add_output(batch)
    panel.redraw()
    qtbot.wait(50)
    names = [label.text for _sample, label in panel.lambda_plot.legend.items]
    assert names == [contact_name("wheel", "curb#v2")]
    assert [plot.vb.sceneBoundingRect() for plot in panel.plots] == before


def test_a_run_s_end_draws_the_energy_now_and_the_other_plots_with_their_parts(qtbot) -> None:
    # a full redraw at the end of the paper-004 wheel's run took 15-17 ms and re-rendered
    # all five plots in the same paint, in one gap between two frames drawn
    doc = SceneDocument()
    doc.load(SCENES_DIR / "wheel_curb_e03.json")
    system = System(doc.scene())
    panel = PlotPanel()
    qtbot.addWidget(panel)
    panel.resize(600, 900)
    trajectory = Trajectory(system)
    panel.set_run(trajectory, system)
    frames = []
    for k in range(3000):
        contact = ContactState("wheel", "floor", 10.0 + np.sin(k * 1e-2), 0.1, 0.0, 0.0, "stick")
        energy = EnergyBudget(0.5 + 0.4 * np.sin(k * 1e-3), 0.5, 0.0, 0.0, 0.0)
        frames.append(Frame(k * 1e-3, "sample", system.q0, system.v0, (contact,), energy))
    batch = StepOutput(frames, [])
    trajectory.append(batch)
    panel.add_output(batch)
    panel.finish()
    x, kinetic = panel.energy_curves["kinetic"].getOriginalDataset()
    np.testing.assert_array_equal(x, trajectory.times())  # every frame at once
    np.testing.assert_array_equal(kinetic, trajectory.energies()[:, 0])
    energy_range = panel.energy_plot.vb.viewRange()[0]
    start, end = plots_module.time_span(panel.energy_plot)
    assert start == pytest.approx(0.0, abs=1e-12) and end >= 2.999  # every frame in view
    assert panel.lambda_plot.vb.viewRange()[0] != energy_range  # follows with its part
    assert not panel.is_drawn
    qtbot.waitUntil(lambda: panel.is_drawn, timeout=5000)
    for plot in panel.plots:
        assert plot.vb.viewRange()[0] == energy_range
    lam_x, lam = panel.contact_curves[("wheel", "floor")][0].getOriginalDataset()
    np.testing.assert_array_equal(lam_x, trajectory.times())
    np.testing.assert_array_equal(lam, [frame.contacts[0].lam for frame in frames])


def test_a_legend_given_its_first_entry_is_beside_its_plot_at_once(qtbot) -> None:
    # it sat at the panel's top left corner, over the λ plot's axis, until the layout's
    # turn came; a paint in between showed it there (a live wheel run under Xvfb)
    panel, trajectory, system = _wheel_panel(qtbot)
    contact = ContactState("wheel", "curb#v2", 5.0, 0.0, 0.0, 0.0, "stick")
    frame = Frame(0.0, "sample", system.q0, system.v0, (contact,), EnergyBudget(0, 0, 0, 0, 0))
    batch = StepOutput([frame], [])
    trajectory.append(batch)
    panel.add_output(batch)
    for _ in range(3):  # the energy part, then the contacts' part: no event handled between
        panel._on_redraw_timer()
    legend, view = panel.lambda_plot.legend, panel.lambda_plot.vb
    assert [label.text for _sample, label in legend.items] == [contact_name("wheel", "curb#v2")]
    assert legend.sceneBoundingRect().left() >= view.sceneBoundingRect().right()


def test_stems_filled_as_rectangles_cover_the_pixels_of_the_stroked_pen(qtbot) -> None:
    """A stem group's curve is painted as the rectangles its 1.5 px pen covers (one call,
    no stroking): the pixels of stems whose edges are clear of pixel centres are those of
    pyqtgraph's stroked lines, in every colour and order."""
    from PySide6.QtGui import QImage, QPainter, QTransform

    from impactgui.plots import _StemCurve

    transform = QTransform(100.0, 0.0, 0.0, -20.0, 0.0, 50.0)  # t = 0.1 s -> x = 10 px
    # device x 10.2, 20.6, 31.0, 40.4 (edges 9.45-10.95, ...): no edge within 0.1 px of a centre
    times = np.array([0.102, 0.206, 0.310, 0.404])
    values = np.array([1.0, -1.5, 0.5, 2.0])
    images = []
    for kind in (pg.PlotCurveItem, _StemCurve):
        image = QImage(60, 100, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(0xFFFFFFFF)
        painter = QPainter(image)
        painter.setTransform(transform)
        for k, colour in enumerate(("#d62728", "#1f77b4")):
            curve = kind(pen=pg.mkPen(colour, width=1.5), connect="pairs")
            x, y = times[k::2] + 0.0001 * k, values[k::2]
            curve.setData(np.repeat(x, 2), np.column_stack((np.zeros_like(y), y)).ravel())
            curve.paint(painter, None, None)
        painter.end()
        images.append(image)
    stroked, filled = images
    assert filled == stroked
    # the stem at x = 10.2 px covers columns 9 and 10 (centres 9.5, 10.5 within 9.45-10.95)
    # from y = 50 - 20 - 0.75 to 50 + 0.75: rows 29 to 50 (centres 29.5 to 50.5)
    red = QColor("#d62728").rgb()
    assert [filled.pixel(column, 40) == red for column in (8, 9, 10, 11)] == [0, 1, 1, 0]
    assert [filled.pixel(9, row) == red for row in (28, 29, 50, 51)] == [0, 1, 1, 0]


def test_a_legend_laid_out_afresh_stays_beside_its_plot(qtbot) -> None:
    # pyqtgraph's LegendItem.clear and addItem put the legend at (0, 0); refilled in other
    # columns (a resize, presentation's restyle) it stood over the λ plot's top left corner
    # until the layout's next turn (test_presentation read it there under load)
    panel, _trajectory, _system = _wheel_panel(qtbot)
    legend, view = panel.energy_plot.legend, panel.energy_plot.vb
    assert len(legend.items) == 7
    for columns in (3, 1, 2):  # no event handled between the refill and the check
        refill_legend(legend, [(s.item, label.text) for s, label in legend.items], columns)
        assert legend.columnCount == columns
        assert legend.sceneBoundingRect().left() >= view.sceneBoundingRect().right()
        assert legend.sceneBoundingRect().top() >= view.sceneBoundingRect().top() - 40


def test_at_the_solver_s_front_a_part_is_drawn_once_a_pixel_column_never_a_column_behind(
    qtbot, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a 200-bead chain slower than real time: each frame reached a quarter of a pixel column
    # of new data, and drawing it every frame cost 2 of 7.5 ms of the GUI thread a frame
    panel, trajectory, system = _wheel_panel(qtbot)
    drawn = {"energy": 0, "contacts": 0}
    for name, part in (("energy", "_draw_energy"), ("contacts", "_draw_contacts")):
        real = getattr(panel, part)

        def counted(deadline, real=real, name=name):
            drawn[name] += 1
            return real(deadline)

        monkeypatch.setattr(panel, part, counted)
    panel._parts = (
        (panel._draw_energy, panel._parts[0][1]),
        (panel._draw_contacts, panel._parts[1][1]),
        panel._parts[2],
    )

    def frame(t: float) -> StepOutput:
        contact = ContactState("wheel", "floor", 10.0 + np.sin(t), 0.1, 0.0, 0.0, "stick")
        energy = EnergyBudget(0.5 + 0.4 * np.sin(t), 0.5, 0.0, 0.0, 0.0)
        return StepOutput([Frame(t, "sample", system.q0, system.v0, (contact,), energy)], [])

    first = frame(0.0)
    trajectory.append(first)
    panel.add_output(first)
    panel.set_cursor(0.0)
    (t0, t1), width = panel.energy_plot.vb.viewRange()[0], panel.energy_plot.vb.width()
    column = (t1 - t0) / width
    step = column / 4
    frames = int(0.5 * t1 / step)  # within the time axis: no step of its range
    for k in range(1, frames + 1):
        batch = frame(k * step)
        trajectory.append(batch)
        panel.add_output(batch)
        panel.set_cursor(k * step)  # the screen at the solver's front
        energy_end = panel.energy_curves["total"].getOriginalDataset()[0][-1]
        lam_end = panel.contact_curves[("wheel", "floor")][0].getOriginalDataset()[0][-1]
        assert k * step - energy_end < column + 1e-12
        assert k * step - lam_end < column + 1e-12
    assert panel.energy_plot.vb.viewRange()[0] == [t0, t1]
    columns = frames * step / column
    for part in ("energy", "contacts"):  # about once a column (4 or 5 frames), not each frame
        assert columns / 1.25 - 1 <= drawn[part] <= columns + 1, (part, drawn, columns)
    assert drawn["energy"] == drawn["contacts"]  # in the same frames: one repaint for both


def test_a_group_s_first_stem_is_drawn_at_once_later_ones_within_a_pixel_column(qtbot) -> None:
    # the paper-004 wheel's first impact (0.0317 s) waited while the cursor crossed one
    # pixel column of a 0-100 s time axis (10 frames): the event was logged, no stem drawn
    panel, trajectory, system = _wheel_panel(qtbot)
    energy = EnergyBudget(0.5, 0.5, 0.0, 0.0, 0.0)
    frames = [Frame(k * 1e-2, "sample", system.q0, system.v0, (), energy) for k in range(10001)]
    batch = StepOutput(frames, [])
    trajectory.append(batch)
    panel.add_output(batch)
    panel.set_cursor(0.0)
    column = panel._column_s()
    assert column > 0.1  # 0-100 s on a few hundred pixels

    def impact(t: float, jump: float) -> None:
        v_plus = np.array(system.v0, dtype=float)
        v_plus[0] += jump
        event = Event(t, "impact", "wheel", "curb", 1.0, v_minus=system.v0, v_plus=v_plus)
        panel.add_output(StepOutput([], [event]))

    def stems_drawn() -> np.ndarray:
        return panel.jump_data()["wheel"][0][: panel._jumps.groups()[0].shown]

    impact(0.0317, 2.0)
    panel.set_cursor(0.04)  # within the column drawn at 0 s: the group's first stem only
    np.testing.assert_array_equal(stems_drawn(), [0.0317])
    impact(0.0926, 3.0)  # the wheel's second impact: its group is shown
    for t in np.arange(0.1, 0.04 + column, 0.01):
        panel.set_cursor(t)  # within a column of the last drawing: waits, a stem shown there
        np.testing.assert_array_equal(stems_drawn(), [0.0317])
    panel.set_cursor(0.04 + column + 1e-9)
    np.testing.assert_array_equal(stems_drawn(), [0.0317, 0.0926])
    tips_t, tips = panel._jumps.groups()[0].stems()
    np.testing.assert_array_equal(tips, [3.0])  # one stem a column: the largest
    np.testing.assert_array_equal(tips_t, [0.0926])
