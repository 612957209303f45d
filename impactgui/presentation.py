"""Presentation mode: the window made readable from the back of a lecture hall.

View ▸ Presentation (F11) turns it on and off. While on:

* every font is ``scale`` times its size (1.5–2.5, set live with the
  labelled slider of View ▸ Presentation scale…; by default 2 on a screen
  1080 px tall, in proportion on others: ``default_scale``): menus,
  panels, the event log, the canvas's labels, the plots' titles, ticks,
  axis labels and legends;
* every line, marker and arrow is ``scale`` times as wide, on the canvas
  (``scene_items.set_line_scale``) and in the plots;
* the plots' legends sit outside the plot area, to the right of each plot,
  so no curve is hidden behind one;
* curve colours are darkened to at most ``CONTRAST_LIGHTNESS`` (HSL) for a
  washed-out projector: hue and saturation kept, so the legend still
  matches;
* event-log cells are never cut short with "…": columns fit their
  (visible) contents, and rows the larger font; the log spans the whole
  width under the canvas and the plots (``EVENT_LOG_SHARE`` of the height),
  and the stage table beside it shows only when it lists an impact;
* the window is full screen, and playback honesty is on (plots and event
  log only up to the time shown; ``impactgui.playback_honesty``);
* the editing parts hide: the Properties dock, the drawing tools' toolbar
  (at scale 2 it pushed Pause, Step and Reset behind the toolbar's "»") and
  the Live dock (View ▸ Live shows it again), which left the canvas and its
  time slider a third of the width.

Turning it off restores what was there before. Plots are restyled again
every ``RESTYLE_INTERVAL_MS`` while it is on: a run adds curves (a new
contact, a new body's stems), and a new run resets the plots' titles; only
what changed is touched, so a quiet check costs microseconds.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPen
from PySide6.QtWidgets import QApplication, QDialog, QHeaderView, QLabel, QVBoxLayout
from superqt import QLabeledDoubleSlider

from impactgui import scene_items
from impactgui.plots import LEGEND_TEXT_SIZE, refill_legend

if TYPE_CHECKING:
    from impactgui.mainwindow import MainWindow

SCALE_DEFAULT = 2.0
"""Factor on fonts and line widths in presentation mode on a screen ``SCALE_SCREEN_PX`` tall."""
SCALE_SCREEN_PX = 1080
"""Height of the screen (px) on which the default scale is ``SCALE_DEFAULT``.

A projector shows the whole screen at one size on the wall, whatever its
pixels: the same text then needs a scale in proportion to the screen's
height. Until a scale is chosen (View ▸ Presentation scale…) it is
``SCALE_DEFAULT · height / SCALE_SCREEN_PX`` within ``SCALE_RANGE``: 1.5 on
a 1440 × 810 screen, where 2 left the five plots 10-16 px tall each.
"""
SCALE_RANGE = (1.5, 2.5)
"""Smallest and largest presentation scale."""
CONTRAST_LIGHTNESS = 0.4
"""Curve colours are darkened to at most this HSL lightness in presentation mode."""
EVENT_LOG_SHARE = 0.22
"""Share of the screen's height the event log takes in presentation mode (the whole width)."""
EVENT_LOG_ROWS = 4
"""The event log shows at least this many rows in presentation mode."""
PLOTS_SHARE = 0.46
"""Share of the screen's width the plots take in presentation mode (the properties hide)."""
RESTYLE_INTERVAL_MS = 500
"""While presentation mode is on, new curves and reset titles are restyled this often, ms."""
TITLE_PT = 9.0
"""Size of the plot titles outside presentation mode, pt."""
AXIS_PT = 9.0
"""Size of tick labels and axis labels outside presentation mode, pt."""
LABEL_SHARE = 0.8
"""Axis labels and legends in presentation mode, as a share of the tick labels' size."""

_WIDE = Qt.Orientation.Horizontal


def default_scale(screen_height_px: int) -> float:
    """The presentation scale on a screen ``screen_height_px`` tall until one is chosen."""
    scale = SCALE_DEFAULT * screen_height_px / SCALE_SCREEN_PX
    return round(min(max(scale, SCALE_RANGE[0]), SCALE_RANGE[1]), 2)


def contrast_colour(colour: QColor) -> QColor:
    """``colour`` darkened to HSL lightness ≤ ``CONTRAST_LIGHTNESS``, fully opaque."""
    hue, saturation, lightness, _alpha = colour.getHslF()
    dark = QColor.fromHslF(max(hue, 0.0), saturation, min(lightness, CONTRAST_LIGHTNESS))
    return dark


class PlotStyler:
    """Scales the text, lines and markers of pyqtgraph plots and moves their legends outside.

    Parameters
    ----------
    plots : callable
        ``() -> list of pg.PlotItem``: the plots to style (asked at each
        ``apply``, so plots made later are styled too).
    """

    def __init__(self, plots: Callable[[], list[pg.PlotItem]]) -> None:
        self._plots = plots
        self._legends: dict[pg.PlotItem, pg.LegendItem] = {}
        self._entries: dict[pg.PlotItem, list[object]] = {}
        self._base: weakref.WeakKeyDictionary[object, tuple[QPen | None, float, float]] = (
            weakref.WeakKeyDictionary()
        )
        """Each styled curve's pen and marker size as made, and the scale it is drawn at."""
        self._columns: weakref.WeakKeyDictionary[pg.LegendItem, int] = weakref.WeakKeyDictionary()
        """The number of columns each legend beside its plot was made with."""
        self._axis_widths: dict[pg.AxisItem, float | None] = {}
        """Each value axis's fixed width (None: automatic) before presentation mode, px."""

    def apply(self, scale: float) -> None:
        """Style every plot for ``scale`` (1: as the plots were made)."""
        plots = self._plots()
        for plot in plots:
            self.style_text(plot, scale)
            for item in plot.listDataItems():
                self._style_item(item, scale)
            self._style_legend(plot, scale)
        if scale != 1.0:
            # one width for every legend: the plots line up under one time axis
            font = QFont()
            font.setPointSizeF(AXIS_PT * LABEL_SHARE * scale)
            metrics = QFontMetricsF(font)
            names = [item.name() for plot in plots for item in self._entries.get(plot, [])]
            text = max((metrics.horizontalAdvance(name) for name in names), default=0.0)
            width = round(1.15 * text + 3 * metrics.height() + 40)
            for plot in plots:
                legend = self._legends.get(plot)
                if legend is plot.legend:
                    continue  # beside its plot in the layout's column: one width already
                if legend is not None and abs(legend.maximumWidth() - width) > 0.5:
                    legend.setFixedWidth(width)

    def style_text(self, plot: pg.PlotItem, scale: float) -> None:
        """Title, tick labels and axis labels of ``plot`` at ``scale`` (1: as made)."""
        title = plot.titleLabel
        size = f"{TITLE_PT * scale:g}pt"
        if title.text and title.opts.get("size") != size:
            title.setText(title.text, size=size, color="k")
        font = QFont()
        font.setPointSizeF(AXIS_PT * scale)
        # axis labels a little smaller than the ticks: they run along short plots
        label_size = f"{AXIS_PT * LABEL_SHARE * scale:g}pt"
        left = plot.getAxis("left")
        if left not in self._axis_widths:
            self._axis_widths[left] = left.fixedWidth
        if scale == 1.0:
            left.setWidth(self._axis_widths.pop(left))
        else:
            metrics = QFontMetricsF(font)
            width = metrics.horizontalAdvance("−00.00") + 1.6 * metrics.height() + 10
            left.setWidth(max(round(width), self._axis_widths[left] or 0))
        for side in ("left", "bottom"):
            axis = plot.getAxis(side)
            if axis.style.get("tickFont") != font:
                # large text: labels on the major ticks only, fewer of them
                axis.setStyle(
                    tickFont=font if scale != 1.0 else None, maxTextLevel=0 if scale != 1.0 else 2
                )
                axis.setTickDensity(1.0 / scale)
            if axis.labelText and axis.labelStyle.get("font-size") != label_size:
                axis.setLabel(
                    axis.labelText, axis.labelUnits, **{**axis.labelStyle, "font-size": label_size}
                )

    def _style_item(self, item: pg.GraphicsObject, scale: float) -> None:
        """Scale one curve's pen and markers from the values it was made with, darkened."""
        base = self._base.get(item)
        if base is None:
            if scale == 1.0:
                return
            pen = item.opts.get("pen")
            size = item.opts.get("symbolSize" if isinstance(item, pg.PlotDataItem) else "size")
            base = self._base[item] = (pg.mkPen(pen) if pen is not None else None, size, scale)
        elif base[2] == scale:
            return
        pen, size, _scale = base
        if callable(getattr(item, "setSize", None)):  # dots: a scatter, the stems' tips
            item.setSize(size * scale)
        else:
            if pen is not None:
                item.setPen(_scaled_pen(pen, scale))
            if isinstance(item, pg.PlotDataItem) and item.opts.get("symbol") is not None:
                item.setSymbolSize(size * scale)
        if scale == 1.0:
            del self._base[item]
        else:
            self._base[item] = (pen, size, scale)

    def _style_legend(self, plot: pg.PlotItem, scale: float) -> None:
        inside = plot.legend
        if inside is not None and inside.parentItem() is plot.parentItem():
            self._style_beside(plot, inside, scale)
            return
        outside = self._legends.get(plot)
        if scale == 1.0:
            if outside is not None:
                plot.parentItem().removeItem(outside)
                del self._legends[plot], self._entries[plot]
            if inside is not None:
                inside.setVisible(True)
            return
        if inside is not None:
            inside.setVisible(False)
        named = [item for item in plot.listDataItems() if item.name()]
        if outside is None:
            # beside the plot in its pyqtgraph GraphicsLayout, which owns (and frees) it
            grid = plot.parentItem()
            row, column = grid.items[plot][0]
            outside = pg.LegendItem(offset=None, labelTextColor="k", verSpacing=-4)
            grid.addItem(outside, row=row, col=column + 1)
            self._legends[plot], self._entries[plot] = outside, []
        size = f"{AXIS_PT * LABEL_SHARE * scale:g}pt"
        if named != self._entries[plot] or outside.opts["labelTextSize"] != size:
            refill_legend(outside, [(item, item.name()) for item in named], size=size)
            self._entries[plot] = named

    def _style_beside(self, plot: pg.PlotItem, legend: pg.LegendItem, scale: float) -> None:
        """A legend already beside its plot (``plots.legend_beside``): only its text scales."""
        size = f"{AXIS_PT * LABEL_SHARE * scale:g}pt" if scale != 1.0 else LEGEND_TEXT_SIZE
        if scale == 1.0:
            self._legends.pop(plot, None)
            self._entries.pop(plot, None)
        else:
            self._legends[plot] = legend
            self._entries[plot] = [sample.item for sample, _label in legend.items]
        # a long legend (the energy's seven terms) in two columns: its large text would
        # make its plot's row tall and squeeze the others
        made = self._columns.setdefault(legend, legend.columnCount)
        columns = made if scale == 1.0 or len(legend.items) <= 4 else max(made, 2)
        if legend.opts["labelTextSize"] != size or legend.columnCount != columns:
            entries = [(sample.item, label.text) for sample, label in legend.items]
            refill_legend(legend, entries, columns, size)

    def legend_texts(self, plot: pg.PlotItem) -> list[str]:
        """The entries of ``plot``'s outside legend (empty when there is none)."""
        legend = self._legends.get(plot)
        if legend is None:
            return []
        return [label.text for _sample, label in legend.items]

    def outside_legend(self, plot: pg.PlotItem) -> pg.LegendItem | None:
        """The legend shown right of ``plot`` in presentation mode, if any."""
        return self._legends.get(plot)


class Presentation(QObject):
    """Presentation mode of a ``MainWindow``.

    Parameters
    ----------
    window : MainWindow
        The window to present.

    Attributes
    ----------
    scale : float
        Factor on fonts and line widths while on, within ``SCALE_RANGE``.
    styler : PlotStyler
        Styles the window's plots (the live plots and the motion plots).
    """

    toggled = Signal(bool)
    """Presentation mode went on (True) or off."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.scale = SCALE_DEFAULT
        self._chosen = False
        """True once a scale was chosen (``set_scale``): the screen no longer sets it."""
        self.enabled = False
        self.styler = PlotStyler(self._plots)
        self._saved: dict[str, object] = {}
        self._timer = QTimer(self)
        self._timer.setInterval(RESTYLE_INTERVAL_MS)
        self._timer.timeout.connect(self.restyle_plots)

    def _plots(self) -> list[pg.PlotItem]:
        return [*self.window.plots.plots, *self.window.motion_plots.plots]

    @Slot(bool)
    def set_enabled(self, enabled: bool) -> None:
        """Turn presentation mode on or off."""
        if enabled == self.enabled:
            return
        self.enabled = enabled
        if enabled:
            self._turn_on()
        else:
            self._turn_off()
        self.toggled.emit(enabled)

    def set_scale(self, scale: float) -> None:
        """Set the factor on fonts and line widths (clamped to ``SCALE_RANGE``)."""
        self.scale = min(max(float(scale), SCALE_RANGE[0]), SCALE_RANGE[1])
        self._chosen = True
        if self.enabled:
            self._apply(self.scale)

    @Slot()
    def ask_scale(self) -> ScaleDialog:
        """View ▸ Presentation scale…: a labelled slider that sets the scale live."""
        dialog = ScaleDialog(self)
        dialog.show()
        return dialog

    def _turn_on(self) -> None:
        window = self.window
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        log = window.event_log
        self._saved = {
            "font": QFont(app.font()),
            "state": window.windowState(),
            "honest": window.honesty.enabled,
            "elide": log.textElideMode(),
            "wrap": log.wordWrap(),
            "row": log.verticalHeader().defaultSectionSize(),
            "modes": [
                log.horizontalHeader().sectionResizeMode(c)
                for c in range(log.horizontalHeader().count())
            ],
            "widths": [log.columnWidth(c) for c in range(log.horizontalHeader().count())],
            "properties": window.properties_dock.isVisible(),
            "tools": window.tools_bar.isVisible(),
            "live": window.live.dock.isVisible(),
            "geometry": window.saveGeometry(),
            "docks": window.saveState(),
            "corner": window.corner(Qt.Corner.BottomRightCorner),
            "left corner": window.corner(Qt.Corner.BottomLeftCorner),
        }
        log.setTextElideMode(Qt.TextElideMode.ElideNone)
        log.setWordWrap(False)
        # columns fit the rows in view (not every row of a long run), again after each scroll
        log.horizontalHeader().setResizeContentsPrecision(0)
        log.verticalScrollBar().valueChanged.connect(self._fit_event_columns)
        window.honesty.set_enabled(True)
        window.properties_dock.hide()
        window.tools_bar.hide()
        window.live.dock.hide()  # View ▸ Live shows it again
        # the event log takes the whole width under the canvas and the plots, and a share of
        # the height: its labelled velocities are long, and a lecture needs more than two rows
        window.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.BottomDockWidgetArea)
        window.setCorner(Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.BottomDockWidgetArea)
        window.showFullScreen()
        screen = window.screen().geometry()
        window.setGeometry(screen)  # without a window manager, full screen is only a state
        window.resizeDocks([window.plots_dock], [round(screen.width() * PLOTS_SHARE)], _WIDE)
        if not self._chosen:
            self.scale = default_scale(screen.height())
        self._apply(self.scale)
        # a share of the screen, and at least the header and EVENT_LOG_ROWS rows of large text
        rows = (EVENT_LOG_ROWS + 3) * log.verticalHeader().defaultSectionSize()  # + header, bars
        height = round(max(screen.height() * EVENT_LOG_SHARE, rows))
        window.resizeDocks([window.event_dock], [height], Qt.Orientation.Vertical)
        self._timer.start()

    def _turn_off(self) -> None:
        self._timer.stop()
        self.window.event_log.verticalScrollBar().valueChanged.disconnect(self._fit_event_columns)
        window, saved = self.window, self._saved
        self._apply(1.0, font=saved["font"])
        log = window.event_log
        log.setTextElideMode(saved["elide"])
        log.setWordWrap(saved["wrap"])
        log.verticalHeader().setDefaultSectionSize(saved["row"])
        header = log.horizontalHeader()
        for column, (mode, width) in enumerate(zip(saved["modes"], saved["widths"], strict=True)):
            header.setSectionResizeMode(column, mode)
            log.setColumnWidth(column, width)
        window.honesty.set_enabled(bool(saved["honest"]))
        window.setWindowState(saved["state"])
        window.restoreGeometry(saved["geometry"])
        window.setCorner(Qt.Corner.BottomRightCorner, saved["corner"])
        window.setCorner(Qt.Corner.BottomLeftCorner, saved["left corner"])
        window.restoreState(saved["docks"])
        window.properties_dock.setVisible(bool(saved["properties"]))
        window.tools_bar.setVisible(bool(saved["tools"]))
        window.live.dock.setVisible(bool(saved["live"]))
        # The font and layout changes are posted events: deliver them now. Left for the
        # interpreter's exit, they would reach pyqtgraph's Python items half torn down.
        QCoreApplication.sendPostedEvents()

    def _apply(self, scale: float, font: QFont | None = None) -> None:
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        base = font if font is not None else self._saved["font"]
        scaled = QFont(base)
        scaled.setPointSizeF(base.pointSizeF() * scale)
        app.setFont(scaled)
        scene_items.set_line_scale(scale)
        canvas = self.window.canvas
        canvas.restyle()
        canvas_plot = canvas.plot.getPlotItem()
        self.styler.style_text(canvas_plot, scale)  # the canvas's axes
        # room above the view for half the top tick label (cut at the edge otherwise)
        room = round(QFontMetricsF(scaled).height() / 2)
        canvas_plot.layout.setContentsMargins(1, room, 1, 1)
        legend = QFont(base)  # a QLabel over the canvas view: its font is its own
        legend.setPointSizeF(base.pointSizeF() * (LABEL_SHARE * scale if scale != 1.0 else 1.0))
        canvas.legend.setFont(legend)
        canvas.legend.adjustSize()
        self.styler.apply(scale)
        log = self.window.event_log
        if scale != 1.0:
            log.verticalHeader().setDefaultSectionSize(round(QFontMetricsF(scaled).height() * 1.3))
            header = log.horizontalHeader()
            for column in range(header.count() - 1):
                header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)

    @Slot(int)
    def _fit_event_columns(self, _value: int) -> None:
        self.window.event_log.horizontalHeader().resizeSections(
            QHeaderView.ResizeMode.ResizeToContents
        )

    @Slot()
    def restyle_plots(self) -> None:
        """Style curves added (and titles reset) since the last time."""
        if self.enabled:
            self.styler.apply(self.scale)


def _scaled_pen(pen: QPen, scale: float) -> QPen:
    """``pen`` ``scale`` times as wide (a 0-width pen counts as 1 px) and darkened; as is at 1."""
    styled = QPen(pen)
    if scale != 1.0:
        styled.setWidthF(max(pen.widthF(), 1.0) * scale)
        styled.setColor(contrast_colour(pen.color()))
    return styled


class ScaleDialog(QDialog):
    """A labelled slider (superqt) for the presentation scale; it applies as it moves.

    Parameters
    ----------
    presentation : Presentation
        Whose scale the slider sets.
    """

    def __init__(self, presentation: Presentation) -> None:
        super().__init__(presentation.window)
        self.presentation = presentation
        self.setWindowTitle("Presentation scale")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.slider = QLabeledDoubleSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(*SCALE_RANGE)
        self.slider.setSingleStep(0.1)
        self.slider.setValue(presentation.scale)
        self.slider.valueChanged.connect(self._on_value_changed)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Fonts and lines in presentation mode, × their size:"))
        layout.addWidget(self.slider)
        self.resize(420, self.sizeHint().height())

    @Slot(float)
    def _on_value_changed(self, value: float) -> None:
        self.presentation.set_scale(round(value, 2))
