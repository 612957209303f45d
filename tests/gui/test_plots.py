"""The live plots panel: it shows exactly the run's data, cheaply, at any length.

Behaviour pinned here (no timings): the curves of a finished run hold the
trajectory's data; a 1e5-frame run is downsampled (and clipped when zoomed);
the energy balance of a correct run is a flat line; the cursor follows the
playback time; unchanged curves are not set again; many bodies share few
stem items; a zoom by hand survives new data until the "A" button.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pyqtgraph as pg
import pytest

from impactgui import plots as plots_module
from impactgui.names import contact_name
from impactgui.playback import AS_FAST_AS_POSSIBLE
from impactgui.plots import (
    AXIS_HEADROOM,
    ENERGY_TERMS,
    LEGEND_LIMIT,
    STEM_HUES,
    TIME_AXIS_MIN_SPAN_S,
    TIME_AXIS_STEP_INTERVAL_S,
    TITLES,
    PlotPanel,
    _StemTips,
    nice_ceil,
    time_span,
)
from solver.frames import ContactState, EnergyBudget, Event, Frame, StepOutput
from solver.record import Trajectory
from solver.scene import parse_scene
from solver.system import System
from tests.gui.conftest import run_to_end, scene_path

DT = 1e-3
"""Output step of the synthetic runs, s."""


def _synthetic_batch(start: int, stop: int, events: list[Event] | None = None) -> StepOutput:
    """Frames ``start`` to ``stop - 1`` of a made-up run: energy swapping between kinetic and
    potential (total 1 J), one contact active on every other block of 500 frames."""
    state = np.zeros(3)
    frames = []
    for i in range(start, stop):
        t = i * DT
        kinetic = 0.5 + 0.4 * np.sin(t)
        contacts = ()
        if (i // 500) % 2:
            contacts = (ContactState("wheel", "curb", 9.81 + np.sin(3 * t), 0.1, 0, 0, "stick"),)
        energy = EnergyBudget(kinetic, 1.0 - kinetic, 0.0, 0.0, 0.0)
        frames.append(Frame(t, "sample", state, state, contacts, energy))
    return StepOutput(frames, events or [])


@pytest.fixture
def panel(qtbot) -> Iterator[PlotPanel]:
    """A shown plots panel on its own, the size of the window's dock."""
    widget = PlotPanel()
    qtbot.addWidget(widget)
    widget.resize(520, 650)
    widget.show()
    qtbot.waitExposed(widget)
    yield widget
    widget.clear()


def _feed(panel: PlotPanel, trajectory: Trajectory, frames: int, block: int = 1000) -> None:
    """Stream ``frames`` synthetic frames in batches, redrawing now and then as the timer would."""
    for start in range(0, frames, block):
        batch = _synthetic_batch(start, min(start + block, frames))
        trajectory.append(batch)
        panel.add_output(batch)
        if start // block % 10 == 0:
            panel.redraw()
    panel.redraw()


def _pixels_per_unit(plot: pg.PlotItem) -> tuple[float, float]:
    """Screen pixels per data unit of ``plot``, along x and y."""
    (x0, x1), (y0, y1) = plot.vb.viewRange()
    return plot.vb.width() / (x1 - x0), plot.vb.height() / (y1 - y0)


def _contact_series(trajectory: Trajectory) -> dict[tuple[str, str], np.ndarray]:
    """``(body, other)`` → rows ``(t, λ, τ)`` of the sample frames where it is active."""
    rows: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    for frame in trajectory.frames:
        if frame.kind == "sample":
            for contact in frame.contacts:
                rows.setdefault((contact.body, contact.other), []).append(
                    (frame.t, contact.lam, contact.tau)
                )
    return {key: np.array(value) for key, value in rows.items()}


def test_a_finished_run_shows_exactly_the_trajectory_data(qtbot, window) -> None:
    assert window.open_file(scene_path("wheel_curb_e03"))
    run_to_end(qtbot, window)  # the contacts and the stems follow the energy: is_drawn
    plots, trajectory = window.plots, window.runner.trajectory
    times, energies = trajectory.times(), trajectory.energies()
    kinetic, potential, spring, total, dissipated, work_in = energies.T
    expected = {
        "kinetic": kinetic,
        "potential": potential,
        "spring": spring,
        "dissipated": dissipated,
        "input": work_in,
        "total": total,
        "balance": total + dissipated - work_in,
    }
    assert set(plots.energy_curves) == {name for name, _ in ENERGY_TERMS}
    for name, values in expected.items():
        x, y = plots.energy_curves[name].getOriginalDataset()
        np.testing.assert_array_equal(x, times)
        np.testing.assert_allclose(y, values, rtol=0, atol=1e-15)

    contacts = _contact_series(trajectory)
    assert contacts and set(plots.contact_curves) == set(contacts)
    for key, rows in contacts.items():
        for curve, column in zip(plots.contact_curves[key], (1, 2), strict=True):
            x, y = curve.getOriginalDataset()
            shown = np.isfinite(y)  # NaN breaks the line where the contact is not active
            np.testing.assert_array_equal(x[shown], rows[:, 0])
            np.testing.assert_array_equal(y[shown], rows[:, column])

    impacts = [event for event in trajectory.events if event.type == "impact"]
    assert impacts
    t, normal = plots.impulse_data()["normal"]
    np.testing.assert_array_equal(t, [event.t for event in impacts])
    np.testing.assert_array_equal(normal, [event.normal_impulse for event in impacts])
    stems = {item.name(): item for item in plots.impulse_plot.listDataItems() if item.name()}
    x, y = stems["normal"].getData()
    _assert_stems_show_the_data(plots.impulse_plot, x, y, t, normal)
    jumps = plots.jump_data()
    assert list(jumps) == ["wheel"]
    assert len(jumps["wheel"][0]) == len(impacts)

    # every point is in view, the time axis ends at the run's end, legends name every curve
    for plot in plots.plots:
        (y0, y1) = plot.vb.viewRange()[1]
        x0, x1 = time_span(plot)
        assert x0 == pytest.approx(0.0, abs=1e-9)
        assert plot.vb.viewRange()[0][0] < 0.0  # an impact at t = 0 is clear of the border
        assert x1 == pytest.approx(times[-1], rel=1e-3)
        for item in plot.listDataItems():
            data = item.getData()[1]
            finite = data[np.isfinite(data)]
            assert y0 <= finite.min() and finite.max() <= y1
    energy_legend = [label.text for _, label in plots.energy_plot.legend.items]
    assert energy_legend == [name for name, _ in ENERGY_TERMS]
    assert {label.text for _, label in plots.lambda_plot.legend.items} == {
        contact_name(body, other) for body, other in contacts
    }


def _assert_stems_show_the_data(plot, x, y, t, values) -> None:
    """Stems from 0 to data points: each pixel column's largest, and every isolated one."""
    np.testing.assert_array_equal(x[0::2], x[1::2])
    assert not y[0::2].any()
    tips = set(zip(x[1::2].tolist(), y[1::2].tolist(), strict=True))
    assert tips <= set(zip(t.tolist(), values.tolist(), strict=True))
    assert (float(t[np.argmax(values)]), float(values.max())) in tips
    (t0, t1), _ = plot.vb.viewRange()
    pixel = (t1 - t0) / plot.vb.width()
    gaps = np.diff(t)
    apart = gaps > 2 * pixel
    isolated = np.concatenate(([True], apart)) & np.concatenate((apart, [True]))
    assert set(zip(t[isolated].tolist(), values[isolated].tolist(), strict=True)) <= tips
    assert len(tips) <= plot.vb.width() + 1


def test_a_1e5_frame_run_is_downsampled_and_clipped_to_the_view(panel) -> None:
    trajectory = Trajectory()
    panel.set_run(trajectory, None)
    _feed(panel, trajectory, 100_000)
    assert len(trajectory) == 100_000
    kinetic = panel.energy_curves["kinetic"]
    x_all, y_all = kinetic.getOriginalDataset()
    assert len(x_all) == 100_000
    x_shown, y_shown = kinetic.getData()
    assert 0 < len(x_shown) < 20_000  # a few points per pixel column, not 1e5
    assert y_shown.max() == pytest.approx(y_all.max(), abs=1e-6)  # peaks survive
    assert y_shown.min() == pytest.approx(y_all.min(), abs=1e-6)
    assert x_shown[0] <= 0.01 * x_all[-1] and x_shown[-1] >= 0.99 * x_all[-1]  # all of it
    lam = panel.contact_curves[("wheel", "curb")][0]
    assert len(lam.getData()[0]) < np.isfinite(lam.getOriginalDataset()[1]).sum()
    assert time_span(panel.energy_plot) == pytest.approx((0.0, nice_ceil(x_all[-1])))

    # zoomed in: only the visible stretch is drawn, at full resolution
    panel.energy_plot.setXRange(10.0, 10.2, padding=0)
    x_zoom, y_zoom = kinetic.getData()
    assert x_zoom[0] <= 10.0 and x_zoom[-1] >= 10.2 and len(x_zoom) < 1000
    inside = (x_all >= x_zoom[0]) & (x_all <= x_zoom[-1])
    np.testing.assert_array_equal(y_zoom, y_all[inside])


def test_the_balance_line_of_a_correct_run_is_flat(qtbot, window) -> None:
    assert window.open_file(scene_path("wheel_curb_e03"))
    run_to_end(qtbot, window)
    plots = window.plots
    _, total = plots.energy_curves["total"].getOriginalDataset()
    _, dissipated = plots.energy_curves["dissipated"].getOriginalDataset()
    _, balance = plots.energy_curves["balance"].getOriginalDataset()
    assert np.ptp(dissipated) > 0  # energy was lost at the impact ...
    assert np.ptp(total) > 0
    scale = max(1.0, float(np.abs(total).max()))
    assert np.ptp(balance) <= 1e-8 * scale  # ... and all of it is accounted for
    _, per_joule = _pixels_per_unit(plots.energy_plot)
    assert np.ptp(balance) * per_joule < 0.5  # drawn flat: within half a pixel row


def test_the_cursor_follows_the_playback_time(qtbot, window) -> None:
    assert window.open_file(scene_path("bouncing_ball"))
    run_to_end(qtbot, window)
    plots = window.plots
    per_second, _ = _pixels_per_unit(plots.energy_plot)
    window.pause_run()
    end = window.clock.end_time()
    for fraction in (0.25, 0.5, 0.75, 0.0, 1.0):
        window.clock.seek(fraction * end)
        assert abs(plots.cursor_time() - window.clock.time) * per_second < 1.0
        # one cursor per plot, all at the same time
        assert {cursor.x() for cursor in plots._cursors.values()} == {plots.cursor_time()}
    window.clock.seek(0.0)
    window.playback_bar.set_speed(AS_FAST_AS_POSSIBLE)
    window.clock.play()
    qtbot.waitUntil(lambda: window.clock.time == end, timeout=2000)
    assert abs(plots.cursor_time() - end) * per_second < 1.0
    # each cursor spans its plot's value range
    for plot in plots.plots:
        line = plots._cursors[plot.vb].line()
        assert (line.y1(), line.y2()) == pytest.approx(tuple(plot.vb.viewRange()[1]))


def test_curves_without_new_data_are_not_set_again(panel) -> None:
    trajectory = Trajectory()
    panel.set_run(trajectory, None)
    _feed(panel, trajectory, 2000)
    changes = []
    for curve in panel.energy_curves.values():
        curve.sigPlotChanged.connect(changes.append)
    panel.redraw()
    assert changes == []
    batch = _synthetic_batch(2000, 2100)
    trajectory.append(batch)
    panel.add_output(batch)
    panel.redraw()
    assert len(changes) == len(ENERGY_TERMS)
    assert len(panel.energy_curves["total"].getOriginalDataset()[0]) == 2100


def _bead_row(n: int) -> System:
    """The compiled system of ``n`` beads side by side on one rail."""
    beads = [
        {"id": f"b{k}", "type": "bead", "rail_y": 0.0, "mass": 1.0, "radius": 0.01, "x": 0.03 * k}
        for k in range(n)
    ]
    return System(parse_scene({"format": "impactgui-scene", "version": 1, "bodies": beads}))


def test_many_bodies_share_few_stem_items_and_keep_their_own_data(panel) -> None:
    bodies = 40
    system = _bead_row(bodies)
    trajectory = Trajectory(system)
    panel.set_run(trajectory, system)
    events = []
    for k in range(3 * bodies):
        v_minus = np.zeros(bodies)
        v_plus = v_minus.copy()
        v_plus[k % bodies] = 1.0 + k  # bead k % bodies jumps by 1 + k m/s
        events.append(Event(0.01 * k, "impact", normal_impulse=0.5, v_minus=v_minus, v_plus=v_plus))
    panel.add_output(StepOutput([], events))
    panel.redraw()
    jumps = panel.jump_data()
    assert len(jumps) == bodies
    np.testing.assert_array_equal(jumps["b3"][0], [events[k].t for k in (3, 43, 83)])
    np.testing.assert_array_equal(jumps["b3"][1], [4.0, 44.0, 84.0])
    stems = [item for item in panel.jump_plot.listDataItems() if isinstance(item, pg.PlotCurveItem)]
    assert len(stems) == LEGEND_LIMIT + STEM_HUES
    drawn = {
        (float(x), float(y)) for item in stems for x, y in zip(*item.getData(), strict=True) if y
    }
    data = {(event.t, k + 1.0) for k, event in enumerate(events)}
    assert drawn <= data and len(drawn) >= len(events) // 2
    assert [label.text for _, label in panel.jump_plot.legend.items] == [
        f"b{k}" for k in range(LEGEND_LIMIT)
    ]
    _, (y0, y1) = panel.jump_plot.vb.viewRange()
    assert y0 <= 0.0 and y1 >= len(events)  # every stem, from 0 to its tip, in view
    # every stem has its tip, in its colour: one item holds the tips of every stem curve
    (tips,) = [item for item in panel.jump_plot.listDataItems() if isinstance(item, _StemTips)]
    colour_at = {
        (float(x), float(y)): item.opts["pen"].color().rgba()
        for item in stems
        for x, y in zip(*item.getData(), strict=True)
        if y != 0.0
    }
    drawn_tips = [
        ((float(x), float(y)), colour.rgba())
        for colour, xs, ys in tips.tips()
        for x, y in zip(xs, ys, strict=True)
    ]
    assert len(drawn_tips) == len(drawn) and len(tips.tips()) == len(stems)
    for tip, colour in drawn_tips:
        assert colour == colour_at[tip]


def test_a_hand_zoom_survives_new_data_until_the_auto_button(panel) -> None:
    trajectory = Trajectory()
    panel.set_run(trajectory, None)
    _feed(panel, trajectory, 3000)
    view = panel.energy_plot.vb
    view.setRange(xRange=(1.0, 1.5), yRange=(0.2, 0.3), padding=0)
    view.sigRangeChangedManually.emit([True, True])  # what a mouse zoom emits
    batch = _synthetic_batch(3000, 9000)
    trajectory.append(batch)
    panel.add_output(batch)
    panel.redraw()
    (x0, x1), (y0, y1) = view.viewRange()
    assert (x0, x1, y0, y1) == pytest.approx((1.0, 1.5, 0.2, 0.3))
    panel.energy_plot.enableAutoRange()  # the "A" button
    panel.redraw()
    assert not any(view.autoRangeEnabled())
    (y0, y1) = view.viewRange()[1]
    assert time_span(panel.energy_plot) == pytest.approx((0.0, nice_ceil(trajectory.times()[-1])))
    assert y0 <= 0.0 and y1 >= 1.0


@pytest.mark.parametrize(
    ("value", "expected"), [(0.003, 0.005), (1.0, 1.0), (1.2, 2.0), (37.0, 50.0), (99.0, 100.0)]
)
def test_the_time_axis_steps_through_round_values(value: float, expected: float) -> None:
    assert nice_ceil(value) == pytest.approx(expected)


def test_a_streaming_redraw_is_spread_over_successive_timer_ticks(panel, monkeypatch) -> None:
    monkeypatch.setattr(plots_module, "REDRAW_SLICE_S", math.inf)  # each part in one tick
    trajectory = Trajectory()
    panel.set_run(trajectory, None)
    events = [Event(0.5, "impact", "wheel", "curb", normal_impulse=2.0)]
    batch = _synthetic_batch(0, 1500, events)
    trajectory.append(batch)
    panel.add_output(batch)
    kinetic = panel.energy_curves["kinetic"]
    stems = panel.impulse_plot.listDataItems
    panel._on_redraw_timer()  # first tick: the energy curves only
    assert len(kinetic.getOriginalDataset()[0]) == 1500
    assert panel.contact_curves == {} and stems() == []
    panel._on_redraw_timer()  # second tick: the contact curves
    assert set(panel.contact_curves) == {("wheel", "curb")}
    assert stems() == []
    panel._on_redraw_timer()  # third tick: the stems
    assert len(stems()) == 2  # stem lines and tips
    assert not panel._dirty  # nothing new arrived during the cycle


def test_a_long_part_of_a_streaming_redraw_goes_on_over_the_next_ticks(
    panel, monkeypatch: pytest.MonkeyPatch
) -> None:
    # after a step of the time axis a 200-bead chain's 17 stem groups were all binned and
    # set in one tick (36 ms of the GUI thread)
    monkeypatch.setattr(plots_module, "REDRAW_SLICE_S", 0.0)  # one group per tick
    bodies = 12
    system = _bead_row(bodies)
    trajectory = Trajectory(system)
    panel.set_run(trajectory, system)
    events = []
    for k in range(bodies):
        v_minus, v_plus = np.zeros(bodies), np.zeros(bodies)
        v_plus[k] = 1.0 + k
        events.append(Event(0.05 * k, "impact", normal_impulse=0.5, v_minus=v_minus, v_plus=v_plus))
    panel.add_output(StepOutput([], events))

    def drawn_stems() -> set[tuple[float, float]]:
        return {
            (float(x), float(y))
            for item in panel.jump_plot.listDataItems()
            if isinstance(item, pg.PlotCurveItem)
            for x, y in zip(*item.getData(), strict=True)
            if y
        }

    ticks = 0
    while panel._dirty:
        panel._on_redraw_timer()
        ticks += 1
        assert ticks < 100
    assert drawn_stems() == {(event.t, 1.0 + k) for k, event in enumerate(events)}
    assert ticks == 2 + bodies, "energy, contacts, then one stem group a tick"
    streamed = drawn_stems()
    panel.redraw()  # the same as drawing it all at once
    assert drawn_stems() == streamed


def test_the_time_axis_spans_a_second_from_the_start_or_the_whole_short_run(panel) -> None:
    trajectory = Trajectory()
    panel.set_run(trajectory, None)
    batch = _synthetic_batch(0, 3)  # 3 ms of data
    trajectory.append(batch)
    panel.add_output(batch)
    panel.redraw()
    assert time_span(panel.energy_plot) == pytest.approx((0.0, TIME_AXIS_MIN_SPAN_S))
    panel._t_end = 0.01  # a run of 10 ms: its whole length
    panel._x_range = None
    panel.redraw()
    assert time_span(panel.energy_plot) == pytest.approx((0.0, 0.01))


class _WallClock:
    """A stand-in for ``time.monotonic`` in ``impactgui.plots``, moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_streaming_time_axis_steps_at_most_once_an_interval_and_far_enough(
    panel, monkeypatch
) -> None:
    clock = _WallClock()
    monkeypatch.setattr(plots_module.time, "monotonic", clock)
    trajectory = Trajectory()
    panel.set_run(trajectory, None)
    frames = 0

    def stream(seconds_of_data: float, wall: float) -> tuple[float, float]:
        """Add frames up to ``seconds_of_data``, let ``wall`` s pass, redraw the energy part."""
        nonlocal frames
        clock.now += wall
        stop = round(seconds_of_data / DT)
        batch = _synthetic_batch(frames, stop)
        frames = stop
        trajectory.append(batch)
        panel.add_output(batch)
        panel._next_part = 0  # the energy part, which fits the time axis
        panel._on_redraw_timer()
        return time_span(panel.energy_plot)

    # the solver computes 3 s of data per wall-clock second
    first = stream(0.3, 0.1)
    # first step: the data's end plus 3 s/s × the interval, rounded up to 1, 2, 5 × 10^k
    assert first == pytest.approx((0.0, nice_ceil(0.3 + 3.0 * TIME_AXIS_STEP_INTERVAL_S)))
    end = first[1]
    # the data pass the end within the interval: no step, the newest frames are clipped
    assert stream(end + 0.5, 0.5 * TIME_AXIS_STEP_INTERVAL_S) == first
    # ... unless the playback cursor has left the range too
    panel.set_cursor(end + 0.1)
    assert panel.cursor_time() == end + 0.1
    second = stream(end + 0.6, 0.01)
    assert second[1] > end + 0.6
    panel.set_cursor(0.0)
    # after the interval, the data passing the end step the axis, again far enough
    data_end = second[1] + 0.3
    growth = (data_end - (end + 0.6)) / TIME_AXIS_STEP_INTERVAL_S
    third = stream(data_end, TIME_AXIS_STEP_INTERVAL_S)
    expected = nice_ceil(data_end + growth * TIME_AXIS_STEP_INTERVAL_S)
    assert third == pytest.approx((0.0, expected))
    # the run's end fits the axis to the data exactly
    panel.redraw()
    assert time_span(panel.energy_plot) == pytest.approx((0.0, nice_ceil(data_end)))


def test_a_streaming_time_axis_step_reaches_the_other_plots_with_their_own_parts(
    panel, monkeypatch
) -> None:
    # all five plots re-rendering at a step of the time axis made the longest paint of a
    # streaming run (35-40 ms); each plot now steps with its own part of the redraw
    # each part whole in one tick, however loaded the machine (a part that outruns its
    # slice goes on at the next tick: under load this test saw the energy part twice)
    monkeypatch.setattr(plots_module, "REDRAW_SLICE_S", math.inf)
    trajectory = Trajectory()
    panel.set_run(trajectory, None)
    events = [Event(0.5, "impact", "wheel", "curb", normal_impulse=2.0)]
    batch = _synthetic_batch(0, 3000, events)  # 3 s: past the first second's axis
    trajectory.append(batch)
    panel.add_output(batch)

    def time_ranges() -> dict[str, tuple[float, float]]:
        return {plot.titleLabel.text: tuple(plot.vb.viewRange()[0]) for plot in panel.plots}

    before = time_ranges()
    panel._on_redraw_timer()  # the energy part steps the time axis, alone
    stepped = tuple(panel.energy_plot.vb.viewRange()[0])
    assert stepped[1] >= 3.0 - DT > before["energy budget"][1]
    after_energy = time_ranges()
    others = [plot.titleLabel.text for plot in panel.plots if plot is not panel.energy_plot]
    assert all(after_energy[title] == before[title] for title in others)
    panel._on_redraw_timer()  # the contact part: λ and τ follow
    for plot in panel.plots:
        expected = (
            stepped
            if plot in (panel.energy_plot, panel.lambda_plot, panel.tau_plot)
            else before[plot.titleLabel.text]
        )
        assert tuple(plot.vb.viewRange()[0]) == pytest.approx(expected)
    panel._on_redraw_timer()  # the stems: every plot on one time axis again
    assert all(r == pytest.approx(stepped) for r in time_ranges().values())
    # the plots stay linked: a pan of one moves all
    panel.jump_plot.setXRange(1.0, 2.0, padding=0)
    assert all(r == pytest.approx((1.0, 2.0)) for r in time_ranges().values())


def test_a_full_redraw_lines_every_plot_up_on_the_stepped_time_axis(panel) -> None:
    trajectory = Trajectory()
    panel.set_run(trajectory, None)
    batch = _synthetic_batch(0, 3000)
    trajectory.append(batch)
    panel.add_output(batch)
    panel._on_redraw_timer()  # a streaming step: the energy plot alone
    panel.redraw()  # e.g. the run ended: everything at once
    ranges = {tuple(plot.vb.viewRange()[0]) for plot in panel.plots}
    assert len(ranges) == 1 and next(iter(ranges))[1] >= 3.0 - DT


def test_a_widened_value_axis_keeps_room_for_the_next_wider_ticks(panel) -> None:
    # each widening lays out and re-renders all five plots (a 30-45 ms paint); tick texts
    # grew a digit at a time (56 -> 72 -> 79 px within seconds of the paper-004 wheel)
    axes = [plot.getAxis("left") for plot in panel.plots]

    def widths_for(text_width: float) -> set[float]:
        for axis in axes:
            axis.textWidth = text_width
        panel._fit_axis_width()
        return {axis.fixedWidth for axis in axes}

    (first,) = widths_for(200.0)  # wider than any start: the axes widen, all alike
    assert first >= 200.0 + AXIS_HEADROOM
    assert widths_for(200.0 + AXIS_HEADROOM - 1.0) == {first}  # within the room: no layout
    (second,) = widths_for(200.0 + AXIS_HEADROOM + 8.0)
    assert second > first


def test_opening_or_resetting_a_scene_resets_every_plot(qtbot, window) -> None:
    # issue 10 bug 4: titles, ranges and time axis of the last run stayed until the next Run
    fresh = PlotPanel()
    expected_titles = [plot.titleLabel.text for plot in fresh.plots]
    window.playback_bar.set_speed(math.inf)
    assert window.open_file(scene_path("wheel_curb_e03"))  # contacts: λ of several N
    run_to_end(qtbot, window)
    window.plots.redraw()
    assert window.plots.lambda_plot.vb.viewRange()[1][1] > 5.0
    assert window.open_file(scene_path("axle_cart"))  # opening resets, before any Run
    plots = window.plots
    assert [plot.titleLabel.text for plot in plots.plots] == expected_titles
    for plot in plots.plots:
        assert time_span(plot) == pytest.approx((0.0, 1.0))
        assert plot.vb.viewRange()[1] == [0.0, 1.0]
    run_to_end(qtbot, window)
    assert plots.jump_plot.titleLabel.text == TITLES["top"]["jump"]
    assert not plots.lambda_plot.isVisible()
    window.reset_run()  # resetting resets too
    assert [plot.titleLabel.text for plot in plots.plots] == expected_titles
    assert plots.lambda_plot.isVisible() and plots.tau_plot.isVisible()
    qtbot.wait(50)  # the λ and τ plots shown again take their place in the layout
    for plot in plots.plots:
        assert time_span(plot) == pytest.approx((0.0, 1.0))
        assert plot.vb.viewRange()[1] == pytest.approx([0.0, 1.0])
    fresh.deleteLater()


def test_stems_cost_the_plot_width_however_many_there_are(panel) -> None:
    # issue 10 bug 6: 2000 beads' stems froze the window for 43 s at the end of a run
    system = _bead_row(20)
    trajectory = Trajectory(system)
    panel.set_run(trajectory, system)
    count = 50_000
    rng = np.random.default_rng(3)
    events = []
    for k in range(count):
        v_minus, v_plus = np.zeros(20), np.zeros(20)
        v_plus[k % 20] = rng.uniform(-1.0, 1.0)
        events.append(Event(1e-4 * k, "impact", normal_impulse=1.0, v_minus=v_minus, v_plus=v_plus))
    panel.add_output(StepOutput([], events))
    panel.redraw()
    width = panel.jump_plot.vb.width()
    for item in panel.jump_plot.listDataItems():
        if isinstance(item, _StemTips):  # the tips of every colour: two a column each
            assert all(len(x) <= 2 * width + 1 for _, x, _ in item.tips())
        else:
            assert len(item.getData()[0]) <= 4 * width + 2  # two stems a column, two points a stem
    assert sum(len(t) for t, _ in panel.jump_data().values()) == count
    panel.jump_plot.setXRange(1.0, 1.001, padding=0)  # zoomed in: the stems there, one by one
    panel.redraw()
    drawn = {
        round(float(x), 9)
        for item in panel.jump_plot.listDataItems()
        if isinstance(item, pg.PlotCurveItem)
        for x in item.getData()[0]
    }
    assert drawn == {round(1e-4 * k, 9) for k in range(10_000, 10_010)}
