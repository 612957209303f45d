"""The live curves' envelope: what is drawn, and what a frame at the solver's front costs."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from impactgui.peak_curve import RAW_PER_COLUMN, PeakEnvelope
from impactgui.plots import ENERGY_TERMS, PlotPanel
from solver.frames import EnergyBudget, Frame, StepOutput
from solver.record import Trajectory


def _columns_of(x: np.ndarray, left: float, right: float, columns: int) -> np.ndarray:
    return np.clip(((x - left) * (columns / (right - left))).astype(np.int64), 0, columns - 1)


def _assert_envelope(
    x: np.ndarray, y: np.ndarray, shown: tuple[np.ndarray, np.ndarray], view: tuple
) -> None:
    """Every pixel column in view: the drawn points' min and max are the samples' min and max.

    NaN samples (gaps) count for neither; a column of gaps only draws no number.
    """
    left, right, columns = view
    xs, ys = shown
    inside = (x >= left) & (x < right) & np.isfinite(y)
    drawn = (xs >= left) & (xs < right) & np.isfinite(ys)
    sample_col = _columns_of(x[inside], left, right, columns)
    drawn_col = _columns_of(xs[drawn], left, right, columns)
    assert set(sample_col.tolist()) == set(drawn_col.tolist())
    for column in np.unique(sample_col):
        values, points = y[inside][sample_col == column], ys[drawn][drawn_col == column]
        assert points.max() == values.max() and points.min() == values.min()
    # the line reaches the view's borders: the samples just outside it are drawn
    before, after = x[x < left], x[x >= right]
    if len(before):
        assert xs[0] == before[-1]
    if len(after):
        assert xs[-1] == after[0]


@settings(max_examples=60, deadline=None)
@given(
    blocks=st.lists(st.integers(1, 400), min_size=1, max_size=40),
    columns=st.integers(3, 60),
    span=st.tuples(st.floats(-0.2, 0.5), st.floats(0.6, 1.5)),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_envelope_grown_block_by_block_is_the_envelope_of_the_whole(
    blocks: list[int], columns: int, span: tuple[float, float], seed: int
) -> None:
    # appended in blocks as a run streams in, it must equal one made from every sample at
    # once, and hold each pixel column's smallest and largest sample
    rng = np.random.default_rng(seed)
    total = sum(blocks)
    x = np.cumsum(rng.uniform(0.0, 2.0 / total, total))  # sorted, repeats allowed (0 steps)
    x[rng.random(total) < 0.1] = x[0]
    x.sort()
    y = rng.normal(size=total)
    y[rng.random(total) < 0.05] = np.nan  # gaps of a contact curve
    left, right = span
    envelope = PeakEnvelope()
    end = 0
    for block in blocks:
        end += block
        shown = envelope.display(x[:end], y[:end], left, right, columns)
        fresh = PeakEnvelope().display(x[:end], y[:end], left, right, columns)
        np.testing.assert_array_equal(shown[0], fresh[0])
        np.testing.assert_array_equal(shown[1], fresh[1])
    _assert_envelope(x, y, shown, (left, right, columns))


def test_a_few_samples_per_column_are_drawn_all() -> None:
    x = (np.arange(100) + 0.5) / 100  # 0.005 ... 0.995: 50 samples in 0.25-0.75
    y = np.sin(7 * x)
    assert 50 <= RAW_PER_COLUMN * 20  # 50 samples in 20 columns: few enough to draw all
    shown = PeakEnvelope().display(x, y, 0.25, 0.75, 20)
    np.testing.assert_array_equal(shown[0], x[24:76])  # and one either side
    np.testing.assert_array_equal(shown[1], y[24:76])
    assert 50 > RAW_PER_COLUMN * 4
    shown = PeakEnvelope().display(x, y, 0.25, 0.75, 4)  # 12.5 a column: the envelope
    assert len(shown[0]) == 4 * 4 + 2  # first, min, max, last a column


def _energy_frames(start: int, stop: int) -> StepOutput:
    """Frames ``start`` to ``stop - 1``, 1 ms apart: 1 J swapping between kinetic and potential."""
    state = np.zeros(2)
    frames = []
    for i in range(start, stop):
        kinetic = 0.5 + 0.4 * np.sin(i * 1e-3) * np.cos(i * 0.37)
        energy = EnergyBudget(kinetic, 1.0 - kinetic, 0.0, 0.0, 0.0)
        frames.append(Frame(i * 1e-3, "sample", state, state, (), energy))
    return StepOutput(frames, [])


def _front_work(qtbot, history: int) -> tuple[int, PlotPanel]:
    """Samples the energy curves read for 10 frames more after ``history`` frames."""
    panel = PlotPanel()
    qtbot.addWidget(panel)
    panel.resize(600, 900)
    trajectory = Trajectory()
    panel.set_run(trajectory, None)
    batch = _energy_frames(0, history)
    trajectory.append(batch)
    panel.add_output(batch)
    panel.redraw()
    panel.energy_plot.setXRange(-1.0, 2.0 * history * 1e-3, padding=0)  # the front in view
    for curve in panel.energy_curves.values():
        curve.getData()
    before = sum(curve.envelope.examined for curve in panel.energy_curves.values())
    more = _energy_frames(history, history + 10)
    trajectory.append(more)
    panel.add_output(more)
    panel._draw_energy(None)  # what a frame drawn at the front does (PlotPanel._draw_due)
    for curve in panel.energy_curves.values():
        curve.getData()  # what a paint asks for
    after = sum(curve.envelope.examined for curve in panel.energy_curves.values())
    return after - before, panel


def test_a_frame_at_the_front_reads_only_its_new_samples_however_long_the_run(qtbot) -> None:
    # pyqtgraph re-downsampled every sample in view at each setData: 13-16 ms of the GUI
    # thread per frame at 3e5 frames (PlotDataItem._getDisplayDataset)
    short, _ = _front_work(qtbot, 10_000)
    long, panel = _front_work(qtbot, 100_000)
    assert short == long == 10 * len(ENERGY_TERMS)
    # and what is drawn is the envelope of every frame
    kinetic = panel.energy_curves["kinetic"]
    x, y = kinetic.getOriginalDataset()
    assert len(x) == 100_010
    (left, right), width = panel.energy_plot.vb.viewRange()[0], int(panel.energy_plot.vb.width())
    assert len(kinetic.getData()[0]) <= 4 * width + 2
    _assert_envelope(x, y, kinetic.getData(), (left, right, width))
    # zoomed and panned: the envelope of the samples then in view
    panel.energy_plot.setXRange(20.0, 60.0, padding=0)
    _assert_envelope(x, y, kinetic.getData(), (20.0, 60.0, width))
    panel.energy_plot.setXRange(30.0, 70.0, padding=0)
    _assert_envelope(x, y, kinetic.getData(), (30.0, 70.0, width))


def test_a_plot_narrowed_by_its_layout_draws_one_column_a_pixel(qtbot) -> None:
    # pyqtgraph makes the drawn points anew only at a change of range: after the layout
    # narrowed the plot, 543 columns were drawn in 420 pixels and some pixels got no line
    _, panel = _front_work(qtbot, 20_000)
    kinetic = panel.energy_curves["kinetic"]
    x, y = kinetic.getOriginalDataset()
    view = panel.energy_plot.vb
    wide = round(view.width())
    panel.resize(400, 900)
    panel.graphics.grab()  # lays the plots out anew
    narrow = round(view.width())
    assert narrow < wide
    (left, right) = view.viewRange()[0]
    drawn = kinetic.curve.getData()  # the line item's own points, as painted
    _assert_envelope(x, y, drawn, (left, right, narrow))
    assert len(drawn[0]) <= 4 * narrow + 2


def test_envelopes_of_one_time_array_share_its_columns_and_draw_as_alone() -> None:
    """The energy curves share their times: the pixel columns of the samples are made once
    per view for all of them (``_column_runs``), and each envelope is what it is alone."""
    from impactgui import peak_curve

    t = np.arange(20_000) * 1e-3
    ys = [np.sin(t * k) for k in (1.0, 7.0, 31.0)]
    shared = [PeakEnvelope().display(t, y, 0.0, 20.0, 300) for y in ys]
    made = peak_curve._RUNS[0]
    for (x, y), series in zip(shared, ys, strict=True):
        peak_curve._RUNS[0] = None
        alone_x, alone_y = PeakEnvelope().display(t.copy(), series, 0.0, 20.0, 300)
        assert np.array_equal(x, alone_x) and np.array_equal(y, alone_y)
    # another array of the same length and view is not taken for the shared one
    peak_curve._RUNS[0] = made
    doubled = 2.0 * t
    x, y = PeakEnvelope().display(doubled, ys[0], 0.0, 20.0, 300)
    peak_curve._RUNS[0] = None
    alone_x, alone_y = PeakEnvelope().display(doubled.copy(), ys[0], 0.0, 20.0, 300)
    assert np.array_equal(x, alone_x) and np.array_equal(y, alone_y)
