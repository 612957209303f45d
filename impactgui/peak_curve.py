"""A plot curve whose cost at the data's growing end does not grow with the data.

pyqtgraph's ``PlotDataItem`` with peak downsampling and clip to view makes its
displayed data anew at every ``setData``: a finite check of every x, then the
min/max of every block of samples in view (``_getDisplayDataset``, O(samples)).
At the solver's front the energy curves are set at every frame drawn, and this
cost 1.4-2.3 ms of the GUI thread at 1e4 frames, 13-16 ms at 3e5.

``PeakEnvelope`` keeps, for one view (time range and pixel width), the indices of
the first, smallest, largest and last sample of each pixel column, and extends them with
the samples appended since its last call: a frame at the front costs the new
samples and the columns shown, whatever came before. A change of the view makes
them anew from the samples in view (a time-axis step, at most once a second).
``PeakCurve`` is a ``PlotDataItem`` that draws that envelope; its own data
(``getOriginalDataset``, ``xData``) still hold every sample.
"""

from __future__ import annotations

import bisect

import numpy as np
import pyqtgraph as pg
from pyqtgraph import functions as fn
from pyqtgraph.graphicsItems.PlotDataItem import PlotDataset

RAW_PER_COLUMN = 10
"""A view holding at most this many samples per pixel column draws them all (no envelope).

As pyqtgraph's auto downsampling did (factor 5, blocks of two samples or more from 10 a
pixel): a short run's curves hold every frame drawn (a 1 s wheel run, 1031 frames)."""


class PeakEnvelope:
    """Smallest and largest sample per pixel column of a series sorted by x, kept incrementally.

    Attributes
    ----------
    examined : int
        Samples read into the columns so far (all views): a count of the work done.
    """

    def __init__(self) -> None:
        self.examined = 0
        self._key: tuple[float, float, int] | None = None
        self._done = 0
        """Samples before this index are in the columns."""
        self._check: tuple[float, float, float] | None = None
        """x[0], x[done - 1], y[done - 1] when last called: data changed otherwise."""
        self._columns = np.empty(0, dtype=np.int64)
        self._low = np.empty(0, dtype=np.int64)
        self._high = np.empty(0, dtype=np.int64)
        self._first = np.empty(0, dtype=np.int64)
        self._last = np.empty(0, dtype=np.int64)
        self._count = 0

    def reset(self) -> None:
        """Forget the columns (the next call makes them anew)."""
        self._key = None

    def _start(self, key: tuple[float, float, int], first: int) -> None:
        self._key = key
        self._done = first
        size = key[2] + 1
        self._columns = np.empty(size, dtype=np.int64)
        self._low = np.empty(size, dtype=np.int64)
        self._high = np.empty(size, dtype=np.int64)
        self._first = np.empty(size, dtype=np.int64)
        self._last = np.empty(size, dtype=np.int64)
        self._count = 0

    def display(
        self, x: np.ndarray, y: np.ndarray, left: float, right: float, columns: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The points to draw of ``(x, y)`` (x sorted) in ``left``-``right``, ``columns`` px wide.

        A view with few samples per column gets them all; otherwise each column gets
        its first, smallest, largest and last sample, in the order they come (M4: the
        segments between columns join neighbouring samples, and within a column the
        line covers its whole range, so every pixel column is drawn as the whole
        series would draw it; with its extremes only, columns crossed by one
        diagonal segment were left blank). One sample either side of
        the view is kept, so the line reaches the view's borders.
        """
        n = len(x)
        first = bisect.bisect_left(x, left)
        end = bisect.bisect_left(x, right)
        if end - first <= RAW_PER_COLUMN * columns:
            self._key = None
            keep = slice(max(first - 1, 0), min(end + 1, n))
            return x[keep], y[keep]
        key = (float(left), float(right), int(columns))
        done = self._done
        if (
            key != self._key
            or done > end
            or done < first
            or (
                done > first
                and self._check != (float(x[0]), float(x[done - 1]), float(y[done - 1]))
            )
        ):
            self._start(key, first)
        self._add(x, y, end)
        self._check = (float(x[0]), float(x[end - 1]), float(y[end - 1]))
        count = self._count
        picked = (self._first, self._low, self._high, self._last)
        pairs = np.sort(np.column_stack([at[:count] for at in picked]), axis=1).ravel()
        index = np.concatenate(
            (
                np.arange(max(first - 1, 0), first),
                pairs,
                np.arange(end, min(end + 1, n)),
            )
        )
        return x[index], y[index]

    def _add(self, x: np.ndarray, y: np.ndarray, end: int) -> None:
        """Read samples ``self._done`` to ``end`` into the columns."""
        start = self._done
        if end <= start:
            return
        self.examined += end - start
        ys = y[start:end]
        column, starts, segment, position = _column_runs(x, start, end, self._key)
        low, high = [], []
        for reduce in (np.fmin, np.fmax):
            extreme = reduce.reduceat(ys, starts)
            at = np.minimum.reduceat(np.where(ys == extreme[segment], position, len(ys)), starts)
            at = np.where(at == len(ys), starts, at) + start  # a column all NaN: its first
            (low if reduce is np.fmin else high).append(at)
        low_at, high_at, own = low[0], high[0], column[starts]
        first_at = starts + start
        last_at = np.r_[starts[1:], len(ys)] - 1 + start
        if self._count and self._columns[self._count - 1] == own[0]:  # the last column grows
            last = self._count - 1
            if _better(y[low_at[0]], y[self._low[last]], np.less):
                self._low[last] = low_at[0]
            if _better(y[high_at[0]], y[self._high[last]], np.greater):
                self._high[last] = high_at[0]
            self._last[last] = last_at[0]
            low_at, high_at, own = low_at[1:], high_at[1:], own[1:]
            first_at, last_at = first_at[1:], last_at[1:]
        stop = self._count + len(own)
        self._columns[self._count : stop] = own
        self._low[self._count : stop] = low_at
        self._high[self._count : stop] = high_at
        self._first[self._count : stop] = first_at
        self._last[self._count : stop] = last_at
        self._count = stop
        self._done = end


_RUNS: list[tuple[tuple, tuple[np.ndarray, ...]] | None] = [None]
"""The last ``_column_runs`` made, with what it was made for."""


def _column_runs(
    x: np.ndarray, start: int, end: int, key: tuple[float, float, int]
) -> tuple[np.ndarray, ...]:
    """Samples ``start`` to ``end`` of ``x`` in view ``key``: each one's pixel column, where
    each column's run of samples starts, each sample's run and its position.

    The energy curves share their time array: after a step of the time axis the seven
    made these anew from the same samples, 40 % of their envelopes' work (1e5 frames:
    seven envelopes in 18 ms). The last made are kept, for the same array (its buffer,
    length and the samples at both ends: the arrays only grow) and view.
    """
    ident = (
        x.__array_interface__["data"][0],
        len(x),
        start,
        end,
        key,
        float(x[start]),
        float(x[end - 1]),
    )
    kept = _RUNS[0]
    if kept is not None and kept[0] == ident:
        return kept[1]
    left, right, columns = key
    xs = x[start:end]
    column = np.clip(((xs - left) * (columns / (right - left))).astype(np.int64), 0, columns - 1)
    starts = np.flatnonzero(np.r_[True, column[1:] != column[:-1]])
    segment = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(xs)]))
    runs = (column, starts, segment, np.arange(len(xs)))
    _RUNS[0] = (ident, runs)
    return runs


def _better(new: float, old: float, compare: np.ufunc) -> bool:
    """True when the sample ``new`` beats ``old`` as its column's extreme (a NaN never does)."""
    return bool(np.isnan(old) and not np.isnan(new)) or bool(compare(new, old))


class PeakCurve(pg.PlotDataItem):
    """A ``PlotDataItem`` drawn as the ``PeakEnvelope`` of its data in its view.

    Used with the plot's auto downsampling and clip to view on, a linear mapping (no
    log, FFT or derivative mode) and x sorted; otherwise pyqtgraph's own display data.
    The far-off limit (``dynamicRangeLimit``) clips the drawn points as pyqtgraph does.
    """

    def __init__(self, *args, **kwargs) -> None:
        self.envelope = PeakEnvelope()
        self._columns = 0
        """Pixel columns of the view when the drawn points were made."""
        super().__init__(*args, **kwargs)

    def viewTransformChanged(self) -> None:
        """A view resized to another pixel width has its points made for the new width.

        pyqtgraph makes them anew only at a change of range: after the layout narrowed a
        plot, 543 columns were drawn in 420 pixels, and some pixels got no line at all.
        """
        super().viewTransformChanged()
        view = self.getViewBox()
        if self._columns and view is not None and round(view.width()) != self._columns:
            self.updateItems(styleUpdate=False)

    def _getDisplayDataset(self) -> PlotDataset | None:
        opts = self.opts
        view = self.getViewBox()
        if self._dataset is None:
            self.envelope.reset()
        if (
            self._dataset is None
            or view is None
            or not (opts["autoDownsample"] and opts["clipToView"])
            or view.autoRangeEnabled()[0]
            or opts["fftMode"]
            or any(opts["logMode"])
            or opts["derivativeMode"]
            or opts["phasemapMode"]
            or opts["subtractMeanMode"]
            or view.width() < 1
        ):
            return super()._getDisplayDataset()
        columns = round(view.width())
        x_changed = self.property("xViewRangeWasChanged") or columns != self._columns
        y_changed = self.property("yViewRangeWasChanged")
        if self._datasetDisplay is not None and not x_changed:
            if not (y_changed and opts["dynamicRangeLimit"] is not None):
                return self._datasetDisplay
        rect = view.viewRect()
        x, y = self.envelope.display(
            self._dataset.x, self._dataset.y, rect.left(), rect.right(), columns
        )
        self._columns = columns
        limit = opts["dynamicRangeLimit"]
        if limit is not None and rect.height() > 0:
            low, high = sorted((rect.top(), rect.bottom()))
            y = fn.clip_array(y, low - limit * rect.height(), high + limit * rect.height())
        self._datasetDisplay = PlotDataset(x, y)
        self.setProperty("xViewRangeWasChanged", False)
        self.setProperty("yViewRangeWasChanged", False)
        return self._datasetDisplay
