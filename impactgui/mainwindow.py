"""The main window: canvas in the centre, docks for properties, plots and the event log.

The window ties the editor (``SceneDocument``, ``SceneCanvas``,
``PropertyPanel``) to a run (``SimulationRunner`` in a worker thread, the
``PlaybackClock`` that draws its frames at display rate, the live plots and
the event log). Its menus and actions are declared in ``impactgui.actions``;
the lecture-hall features live in their own modules and are only created and
wired here: ``presentation`` (View ▸ Presentation), ``playback_honesty``,
``motion_plots`` (the Motion dock), ``video_export``, ``image_export``,
``help``, and the status-bar widgets ``run_progress`` and ``pointer_readout``.
Unsaved changes are never lost silently: every way of dropping the scene
(close, new, open, a preset) goes through ``maybe_discard_changes``, which
asks ``confirm_discard`` — a replaceable hook, so tests answer without a
dialog.

Crash recovery (given a ``RecoveryStore``): while the scene has unsaved
changes it is autosaved ``AUTOSAVE_DELAY_MS`` after the last edit and at each
run start, valid or not; the file goes when the scene becomes clean (saved,
or dropped after the prompt) and when the changes are discarded at close.
``offer_recovery`` (at start-up) lists what crashed sessions left and asks
``confirm_restore`` — a hook like ``confirm_discard`` — whether to restore,
discard or keep each one. A restored scene opens unsaved, under its original
file name.

The nonholonomic cart lab: the canvas's impulse tool strikes an axle cart of
the run on screen (``impulse_requested``). The strike is recorded in the
scene at the time shown, in the cart's own axes, and the run is computed
again from the start with it, so the saved scene reproduces the run exactly
(``give_impulse``). Such runs are kept just ahead of the playback
(``IMPULSE_LEAD_S``): little is computed twice.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QSettings, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QCloseEvent
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QMainWindow,
    QMessageBox,
    QVBoxLayout,
    QWidget,
)

from impactgui.actions import install_actions
from impactgui.canvas import SceneCanvas
from impactgui.collector import gui_thread_collector
from impactgui.commands import AddItem
from impactgui.compare import CompareDialog
from impactgui.document import SceneDocument
from impactgui.eventlog import EventLog
from impactgui.file_io import read_scene_in_background
from impactgui.help import HelpPages
from impactgui.image_export import ask_scale, save_png
from impactgui.live import LiveInteraction
from impactgui.motion_plots import MotionPlots
from impactgui.playback import PlaybackBar, PlaybackClock
from impactgui.playback_honesty import PlaybackHonesty
from impactgui.plots import PlotPanel
from impactgui.pointer_readout import PointerReadout
from impactgui.presentation import Presentation
from impactgui.presets import is_bundled
from impactgui.properties import PropertyPanel
from impactgui.recovery import RecoveredScene, RecoveryAnswer, RecoverySession, RecoveryStore
from impactgui.reference_overlay import ReferenceOverlay
from impactgui.run_progress import RunProgress
from impactgui.solver_process import ProcessStepper, needs_process
from impactgui.stage_table import StageTable, with_stage_table
from impactgui.sweep_window import SweepLauncher
from impactgui.video_export import (
    VideoDialog,
    VideoProgress,
    VideoRecorder,
    VideoSettings,
    VideoSettingsError,
)
from impactgui.worker import SimulationRunner
from solver.cart_motion import strike_impulse
from solver.errors import InputError
from solver.frames import Event, Frame, StepOutput
from solver.record import write_csv
from solver.scene import SceneError, scene_to_dict
from solver.simulation import make_stepper

RECENT_FILES_KEY = "recent_files"
RECENT_FILES_LIMIT = 8
SCENE_FILTER = "impactgui scenes (*.json);;All files (*)"
PNG_FILTER = "PNG images (*.png)"
STATUS_GAP_PX = 24
"""Room kept between a status-bar message and the pointer read-out, px."""
AUTOSAVE_DELAY_MS = 2000
"""Quiet time after the last edit before the unsaved scene is autosaved, ms."""
IMPULSE_LEAD_S = 0.2
"""In a run that takes impulses, the solver computes at most this many wall-clock
seconds of playback ahead of the time on screen (unless the speed is "as fast as
possible"), s."""
SOLVER_AHEAD_S = 1.0
"""Seconds of playback (wall clock) the solver may be ahead of the screen before it
computes in the background, leaving the GIL to the drawing."""
CANVAS_START_DELAY_MS = 20
"""The canvas draws a prepared run this long after the plots and the log take it, ms: a
display frame apart, so the window paints and answers between the two (2000 beads: about
10 ms of the GUI thread each)."""

Answer = QMessageBox.StandardButton


class MainWindow(QMainWindow):
    """The impactgui application window.

    Parameters
    ----------
    document : SceneDocument, optional
        The scene to edit (a new, empty one by default).
    settings : QSettings, optional
        Where recent files are remembered (the user's impactgui settings by
        default; tests pass a temporary file).
    recovery : RecoveryStore, optional
        Where unsaved scenes are autosaved for crash recovery; without one,
        nothing is autosaved.

    Attributes
    ----------
    confirm_discard : callable
        ``() -> QMessageBox.StandardButton``: asked before unsaved changes
        would be dropped; ``Save``, ``Discard`` or ``Cancel``. Replace it to
        answer without a dialog.
    confirm_restore : callable
        ``(RecoveredScene) -> RecoveryAnswer``: asked by ``offer_recovery``
        for each scene a crashed session left. Replace it to answer without
        a dialog.
    autosave_timer : QTimer
        Single-shot, restarted by every edit; its timeout autosaves.
    runner : SimulationRunner or None
        The current (or last) run; ``None`` before the first Run and after
        Reset.
    frames_drawn : int
        Frames handed to the canvas so far (the benchmark counts these).
    """

    frames_arrived = Signal(int)
    """Frames computed so far in the current run (GUI thread; tests wait on it)."""
    run_state_changed = Signal(str)
    """``"idle"``, ``"running"``, ``"paused"``, ``"finished"``, ``"failed"`` or ``"stopped"``."""

    def __init__(
        self,
        document: SceneDocument | None = None,
        settings: QSettings | None = None,
        recovery: RecoveryStore | None = None,
    ) -> None:
        super().__init__()
        # made now, in the GUI thread, so that Run allocates nothing before holding it
        self._collector = gui_thread_collector()
        self.doc = document if document is not None else SceneDocument(self)
        self.settings = settings if settings is not None else QSettings("impactgui", "impactgui")
        self.confirm_discard: Callable[[], QMessageBox.StandardButton] = self._ask_discard
        self.confirm_restore: Callable[[RecoveredScene], RecoveryAnswer] = self._ask_restore
        self.recovery = recovery
        self._session: RecoverySession | None = (
            recovery.open_session() if recovery is not None else None
        )
        self.autosave_timer = QTimer(self)
        self.autosave_timer.setSingleShot(True)
        self.autosave_timer.setInterval(AUTOSAVE_DELAY_MS)
        self.runner: SimulationRunner | None = None
        self.frames_drawn = 0
        self.run_state = "idle"
        self._step_pending = False
        self._resume_at: tuple[float, bool] | None = None
        """Where the screen goes on once the run being prepared is ready (a strike's time)."""
        self._compare_dialogs: list[CompareDialog] = []
        self._abandoned: list[SimulationRunner] = []
        """Runs reset while their solver was being built; kept until their thread ends."""
        self._video: VideoProgress | None = None
        self._pointer_at: tuple[float, float] | None = None
        """Where the pointer moved, while its read-out waits for the tool (m)."""
        self._shut_down = False

        self.canvas = SceneCanvas(self.doc)
        self.clock = PlaybackClock(self)
        self.playback_bar = PlaybackBar(self.clock)
        self.properties = PropertyPanel(self.doc)
        self.plots = PlotPanel()
        self.motion_plots = MotionPlots()
        self.event_log = EventLog()
        self.stage_table = StageTable()
        self.progress = RunProgress()
        self.pointer = PointerReadout()
        self.run_label = self.progress.label
        self.honesty = PlaybackHonesty(
            lambda: [*self.plots.plots, *self.motion_plots.plots],
            self.event_log,
            self,
            stage_table=self.stage_table,
        )
        self.presentation = Presentation(self)
        self.help = HelpPages(self)
        self.sweeps = SweepLauncher(self)

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.canvas, 1)
        layout.addWidget(self.playback_bar)
        self.setCentralWidget(central)
        self.properties_dock = self._dock("Properties", self.properties, "properties")
        self.plots_dock = self._dock("Plots", self.plots, "plots")
        events = with_stage_table(self.event_log, self.stage_table)
        self.event_dock = self._dock("Event log", events, "events")
        self.motion_dock = self._dock("Motion", self.motion_plots, "motion")
        self.reference_view = ReferenceOverlay()
        self.reference_dock = self._dock("Reference", self.reference_view, "reference")
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.properties_dock)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.plots_dock)
        self.tabifyDockWidget(self.plots_dock, self.motion_dock)
        self.tabifyDockWidget(self.motion_dock, self.reference_dock)
        self.plots_dock.raise_()
        # behind the live plots, the motion plots draw nothing until their tab is raised
        self.motion_plots.set_shown(False)
        self.motion_dock.visibilityChanged.connect(self.motion_plots.set_shown)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.event_dock)
        self.resizeDocks([self.properties_dock], [250], Qt.Orientation.Horizontal)
        self.resizeDocks([self.plots_dock], [520], Qt.Orientation.Horizontal)
        self.resizeDocks([self.event_dock], [150], Qt.Orientation.Vertical)
        self.statusBar().addPermanentWidget(self.pointer)
        self.statusBar().addPermanentWidget(self.progress)

        install_actions(self)
        self._fill_recent_menu()
        self._connect()
        self.live = LiveInteraction(self)  # the Live dock and the grab tool's requests
        self._update_title()
        self._update_run_actions()
        self.resize(1400, 900)

    # ----------------------------------------------------------------- set-up

    def _dock(self, title: str, widget: QWidget, name: str) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        return dock

    def _connect(self) -> None:
        self.doc.changed.connect(self._on_document_changed)
        self.doc.dirty_changed.connect(self._on_dirty_changed)
        self.doc.path_changed.connect(self._on_path_changed)
        self.autosave_timer.timeout.connect(self._on_autosave_timeout)
        self.canvas.status_message.connect(self._on_status_message)
        self.canvas.impulse_requested.connect(self._on_impulse_requested)
        self.presets_menu.preset_chosen.connect(self._on_preset_chosen)
        self.clock.frame_shown.connect(self._on_frame_shown)
        self.clock.time_changed.connect(self._on_time_changed)
        self.clock.playing_changed.connect(self._on_playing_changed)
        self.event_log.time_selected.connect(self._on_event_time_selected)
        self.stage_table.time_selected.connect(self._on_event_time_selected)
        self.doc.selection_changed.connect(self._on_selection_changed)
        self.canvas.pointer_moved.connect(self._on_pointer_moved)
        self.presentation.toggled.connect(self._on_presentation_toggled)
        self.honesty.until_changed.connect(self.plots.set_until)

    # ------------------------------------------------------------- messages

    def warn(self, title: str, text: str, details: list[str] | tuple[str, ...] = ()) -> None:
        """Tell the user something went wrong, without blocking (window-modal box)."""
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, Answer.Ok, self)
        if details:
            box.setInformativeText("\n".join(details[:20]))
            if len(details) > 20:
                box.setDetailedText("\n".join(details))
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.statusBar().showMessage(f"{text} {details[0] if details else ''}".strip(), 10000)

    @Slot(str)
    def _on_status_message(self, text: str) -> None:
        self.show_hint(text, 5000)

    def show_hint(self, text: str, timeout_ms: int) -> None:
        """A status-bar message cut with "…" before the pointer read-out; whole in the tooltip.

        Longer than the room left of the read-out, it ran into it.
        """
        bar = self.statusBar()
        room = self.pointer.mapTo(bar, self.pointer.rect().topLeft()).x() - STATUS_GAP_PX
        shown = text
        if self.pointer.isVisible() and room > 0:
            shown = bar.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, room)
        bar.setToolTip(text if shown != text else "")
        bar.showMessage(shown, timeout_ms)

    @Slot(str, object, object)
    def _on_impulse_requested(self, body_id: str, point: object, vector: object) -> None:
        self.give_impulse(body_id, point, vector)

    def give_impulse(self, body_id: str, point: Any, vector: Any) -> bool:
        """Strike an axle cart of the run on screen: the impulse tool's request.

        ``point`` (m) and ``vector`` (the impulse S, N·s), world axes, are read
        off the cart as it is on screen. The strike is recorded in the scene,
        as an undoable edit: an impulse in the cart's own axes at the time of
        the frame shown (``solver.cart_motion.strike_impulse``). The run is
        then computed again from the start, exactly as ``python -m solver
        run`` computes the saved scene, and the screen goes on from the
        strike's time (or stays there when paused). Returns False, with a
        status-bar message, when no run is shown or the strike is refused
        (off the axle, zero).
        """
        runner = self.runner
        if runner is None or runner.system is None or not runner.accepts_impulses:
            self.statusBar().showMessage(
                "Strikes act on the axle carts of a run: press Run, or drag the impulse "
                "now to schedule it at t = 0.",
                8000,
            )
            return False
        try:
            shown = self.clock.index
            frame = runner.trajectory.frame(shown) if shown >= 0 else None
            q, t = (frame.q, frame.t) if frame is not None else (runner.system.q0, 0.0)
            strike = strike_impulse(runner.system, q, t, body_id, point, vector)
        except InputError as error:
            self.statusBar().showMessage(f"Impulse refused: {error}", 8000)
            return False
        playing = self.clock.is_playing
        self.doc.push(AddItem(self.doc, "impulses", strike))
        if not self.start_run():
            return False
        self._resume_at = (float(strike["time"]), playing)
        if not playing:
            self._set_run_state("paused")
        size = float(np.hypot(*strike["vector"]))
        self.statusBar().showMessage(
            f"impulse S = {size:.3g} N·s on {body_id} at t = {strike['time']:.4g} s, "
            f"{strike['point'][0]:+.3g} m along the axle: recorded in the scene (undo with "
            "Ctrl+Z), run computed again",
            8000,
        )
        return True

    def scene_name(self) -> str:
        """The scene in words: its file's name, else its title (a preset's copy), else Untitled."""
        if self.doc.path is not None:
            return self.doc.path.name
        return str(self.doc.data.get("title") or "Untitled")

    def rerun_with(self, collection: str, item: dict[str, Any], t: float, message: str) -> bool:
        """Record a user's action at ``t`` (s) in the scene and compute the run again.

        As a strike (``give_impulse``): ``item`` is added to ``collection`` as an
        undoable edit, the run is computed again from the start exactly as the
        command line computes the saved scene, and the screen goes on from
        ``t`` (or stays there when paused). ``message`` goes to the status bar.
        """
        playing = self.clock.is_playing
        self.doc.push(AddItem(self.doc, collection, item))
        if not self.start_run():
            return False
        self._resume_at = (float(t), playing)
        if not playing:
            self._set_run_state("paused")
        self.statusBar().showMessage(f"{message}: recorded in the scene (undo with Ctrl+Z)", 8000)
        return True

    def _ask_discard(self) -> QMessageBox.StandardButton:
        return QMessageBox.question(
            self,
            "Unsaved changes",
            f"“{self.scene_name()}” has unsaved changes. Save them?",
            Answer.Save | Answer.Discard | Answer.Cancel,
            Answer.Save,
        )

    def maybe_discard_changes(self) -> bool:
        """True when the scene may be dropped: it is clean, or saved / discarded on request."""
        if not self.doc.is_dirty:
            return True
        answer = self.confirm_discard()
        if answer == Answer.Save:
            return self.save()
        return answer == Answer.Discard

    # ------------------------------------------------------------------ files

    def new_scene(self) -> bool:
        """File ▸ New, after the unsaved-changes prompt; False when cancelled."""
        if not self.maybe_discard_changes():
            return False
        self.reset_run()
        self.doc.new()
        return True

    def open_file(self, path: str | Path | None = None) -> bool:
        """Open a scene file (asks for one when ``path`` is None); False when not opened."""
        if not self.maybe_discard_changes():
            return False
        if path is None:
            start = str(self.doc.path.parent) if self.doc.path else ""
            chosen, _ = QFileDialog.getOpenFileName(self, "Open scene", start, SCENE_FILTER)
            if not chosen:
                return False
            path = chosen
        return self._load(Path(path))

    def _load(self, path: Path) -> bool:
        """Read ``path`` and show it; a bundled preset (``is_bundled``) opens as an untitled copy.

        A file that cannot be read leaves the scene and the current run as they were.
        """
        try:
            scene = read_scene_in_background(path, self)
        except SceneError as error:
            self.warn("Cannot open scene", f"{path.name} is not a valid scene:", error.problems)
            return False
        self.reset_run()
        if is_bundled(path):
            # presets are read-only: a copy with no file, Save asks where
            self.doc.set_data(scene_to_dict(scene))
            self.statusBar().showMessage(
                f"preset: {self.scene_name()} (a copy: Save asks for a new file)", 5000
            )
            return True
        self.doc.load(path, read=lambda _file: scene)
        self._remember_recent(path)
        self.statusBar().showMessage(f"opened {path}", 5000)
        return True

    def open_preset(self, path: str | Path) -> bool:
        """Open a bundled scene as an unsaved copy, its title kept (saving asks for a new name)."""
        if not self.maybe_discard_changes():
            return False
        return self._load(Path(path))

    def save(self) -> bool:
        """File ▸ Save (Save As when the scene has no file yet); False when not saved."""
        if self.doc.path is None:
            return self.save_as()
        return self._save_to(self.doc.path)

    def save_as(self, path: str | Path | None = None) -> bool:
        """Save under ``path`` (asks for one when None); False when not saved."""
        if path is None:
            start = str(self.doc.path) if self.doc.path else "scene.json"
            chosen, _ = QFileDialog.getSaveFileName(self, "Save scene as", start, SCENE_FILTER)
            if not chosen:
                return False
            path = chosen
        return self._save_to(Path(path))

    def _save_to(self, path: Path) -> bool:
        if is_bundled(path):
            self.warn(
                "Cannot save",
                f"{path.name} is a bundled preset and stays as it is: save the scene under "
                "another name.",
            )
            return False
        try:
            written = self.doc.save(path)
        except SceneError as error:
            self.warn("Cannot save", "The scene is not valid, nothing was written:", error.problems)
            return False
        except Exception as error:  # every failure to save is a message
            self.warn("Cannot save", f"Could not write {path}: {_reason(error)}")
            return False
        self._remember_recent(written)
        self.statusBar().showMessage(f"saved {written}", 5000)
        return True

    def export_csv(self, directory: str | Path | None = None) -> Path | None:
        """Write the run's ``trajectory.csv``, ``contacts.csv``, ``events.csv`` into ``directory``.

        Uses the command line's writer, so the files are byte-identical to
        ``python -m solver run`` for the same run. Returns the directory, or
        None when there is nothing to export or the user cancelled.
        """
        if self.runner is None or len(self.runner.trajectory) == 0:
            self.warn("Nothing to export", "Run the scene first: there are no frames yet.")
            return None
        if directory is None:
            chosen = QFileDialog.getExistingDirectory(self, "Export CSV into directory")
            if not chosen:
                return None
            directory = chosen
        try:
            write_csv(self.runner.trajectory, directory)
        except Exception as error:  # every failure to export is a message
            self.warn("Export failed", f"Could not write to {directory}: {_reason(error)}")
            return None
        self.statusBar().showMessage(f"CSV written to {directory}", 5000)
        return Path(directory)

    def export_canvas_png(self, path: str | Path | None = None, scale: float | None = None) -> bool:
        """Save the canvas as a PNG image, ``scale`` times its size on screen.

        Without ``path`` the file and the resolution (screen, 2×, 3000 px
        wide) are asked for; with a path, ``scale`` defaults to 1.
        """
        return self._export_png(self.canvas.plot, "Export canvas", path, scale)

    def export_plots_png(self, path: str | Path | None = None, scale: float | None = None) -> bool:
        """Save the plots as a PNG image, ``scale`` times their size (as ``export_canvas_png``)."""
        self.plots.redraw()
        return self._export_png(self.plots.graphics, "Export plots", path, scale)

    def _export_png(
        self, widget: QWidget, title: str, path: str | Path | None, scale: float | None
    ) -> bool:
        if not path:
            path = self._ask_png_path(title)
            if not path:
                return False
            if scale is None:
                scale = ask_scale(self, widget)
                if scale is None:
                    return False
        return self._report_png(path, save_png(widget, path, 1.0 if scale is None else scale))

    def export_video(self, settings: VideoSettings | None = None) -> VideoProgress | None:
        """File ▸ Export video: record the run so far as MP4 or GIF, with a progress dialog.

        Without ``settings`` a dialog asks for them. Returns the progress
        dialog (the recording goes on in the event loop), or None when
        cancelled or there is nothing to record.
        """
        if settings is None:
            dialog = VideoDialog(self)
            if dialog.exec() != VideoDialog.DialogCode.Accepted:
                return None
            settings = dialog.settings()
        try:
            recorder = VideoRecorder(self, settings)
        except VideoSettingsError as error:
            self.warn("Cannot export video", str(error))
            return None
        self.pause_run()
        progress = VideoProgress(recorder, self)
        progress.finished.connect(self._on_video_finished)
        self._video = progress
        return progress

    @Slot(int)
    def _on_video_finished(self, _result: int) -> None:
        progress, self._video = self._video, None
        if progress is None:
            return
        settings = progress.recorder.settings
        if progress.recorder.completed:
            self.statusBar().showMessage(
                f"video written to {settings.path} ({progress.recorder.count} frames)", 8000
            )
        else:
            self.statusBar().showMessage("video export cancelled", 5000)

    def _ask_png_path(self, title: str) -> str:
        chosen, _ = QFileDialog.getSaveFileName(self, title, "impactgui.png", PNG_FILTER)
        return chosen

    def _report_png(self, path: str | Path, ok: object) -> bool:
        if ok is False:
            self.warn("Export failed", f"Could not write {path}.")
            return False
        self.statusBar().showMessage(f"image written to {path}", 5000)
        return True

    # --------------------------------------------------------- crash recovery

    def autosave(self) -> bool:
        """Write the unsaved scene (valid or not) to the recovery file now.

        Returns True when written; False when there is nothing to write (no
        recovery store, or no unsaved changes) or writing failed (said in the
        status bar).
        """
        self.autosave_timer.stop()
        if self._session is None or not self.doc.is_dirty:
            return False
        try:
            self._session.write(self.doc.data, self.doc.path)
        except Exception as error:  # an autosave never stops the editor
            self.statusBar().showMessage(f"autosave failed: {_reason(error)}", 10000)
            return False
        return True

    def offer_recovery(self) -> bool:
        """At start-up: offer each scene a crashed session left, newest first.

        ``confirm_restore`` answers for each: restore it (and stop asking),
        discard it, or keep it for later. Returns True when a scene was restored.
        """
        if self.recovery is None:
            return False
        pending = self.recovery.pending()
        if self.recovery.set_aside:  # one status-bar line; the start goes on
            first, more = self.recovery.set_aside[0], len(self.recovery.set_aside) - 1
            also = f" (and {more} more)" if more else ""
            self.statusBar().showMessage(f"damaged autosave set aside: {first}{also}", 30000)
        for recovered in pending:
            answer = self.confirm_restore(recovered)
            if answer == RecoveryAnswer.RESTORE:
                return self.restore(recovered)
            if answer == RecoveryAnswer.DISCARD:
                recovered.discard()
        return False

    def restore(self, recovered: RecoveredScene) -> bool:
        """Open a recovered scene, unsaved, under its original file; False when cancelled.

        An invalid scene opens as it was, its problems listed in the property
        panel; one not even shaped like a scene (a body that is not an
        object, say) is refused with the reason, and its file is kept. The
        crashed session's files are deleted once this window's own autosave
        holds the scene.
        """
        if not self.maybe_discard_changes():
            return False
        self.reset_run()
        try:
            # no file name: Save asks where, the stored original path is not trusted
            self.doc.restore(recovered.data, None)
        except SceneError as error:
            # renamed aside and kept: the user may mend the file by hand
            try:
                kept = f"kept as {recovered.set_aside()}"
            except OSError as failure:
                kept = f"left in place ({_reason(failure)})"
            self.warn(
                "Cannot restore",
                f"The autosaved scene {recovered.scene_file.name} is damaged ({kept}):",
                error.problems,
            )
            return False
        if self._session is None or self.autosave():
            recovered.discard()
        where = recovered.original_path or "an unsaved scene"
        self.statusBar().showMessage(
            f"restored the unsaved changes to {where}; Save asks where to save them", 10000
        )
        return True

    @staticmethod
    def restore_question(recovered: RecoveredScene) -> tuple[str, str]:
        """The restore question's text and informative text for ``recovered``.

        Its fields were checked when it was read (``RecoveryStore.pending``):
        the time converts to local time, the title and path are short text.
        """
        where = recovered.original_path or "a scene that was never saved"
        saved = recovered.saved_at.astimezone().strftime("%Y-%m-%d %H:%M:%S")
        text = (
            f"impactgui did not shut down cleanly. Unsaved changes to "
            f"“{recovered.title or 'Untitled'}” were kept."
        )
        return text, f"From: {where}\nAutosaved: {saved}"

    def _ask_restore(self, recovered: RecoveredScene) -> RecoveryAnswer:
        text, informative = self.restore_question(recovered)
        box = QMessageBox(QMessageBox.Icon.Question, "Recover unsaved changes", text, parent=self)
        box.setInformativeText(informative)
        restore = box.addButton("Restore", QMessageBox.ButtonRole.AcceptRole)
        discard = box.addButton(Answer.Discard)
        later = box.addButton("Not now", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(restore)
        box.setEscapeButton(later)
        box.exec()
        clicked = box.clickedButton()
        if clicked is restore:
            return RecoveryAnswer.RESTORE
        if clicked is discard:
            return RecoveryAnswer.DISCARD
        return RecoveryAnswer.LATER

    @Slot()
    def _on_autosave_timeout(self) -> None:
        self.autosave()

    def _end_recovery(self, *, remove: bool) -> None:
        """Stop autosaving; delete the recovery file when its changes were saved or discarded."""
        self.autosave_timer.stop()
        if self._session is not None:
            if remove:
                self._session.remove()
            self._session.close()
            self._session = None

    # ----------------------------------------------------------- recent files

    def recent_files(self) -> list[str]:
        """Recently opened or saved scene files, newest first."""
        value = self.settings.value(RECENT_FILES_KEY, [])
        if isinstance(value, str):
            return [value]
        return [str(item) for item in value or []]

    def _remember_recent(self, path: Path) -> None:
        text = str(Path(path).resolve())
        files = [text] + [item for item in self.recent_files() if item != text]
        self.settings.setValue(RECENT_FILES_KEY, files[:RECENT_FILES_LIMIT])
        self._fill_recent_menu()

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        for text in self.recent_files():
            action = self.recent_menu.addAction(text)
            action.setData(text)
            action.triggered.connect(self._on_recent)
        self.recent_menu.setEnabled(bool(self.recent_files()))

    # -------------------------------------------------------------------- run

    def start_run(self) -> bool:
        """Run ▸ Run: start a run of the scene, or resume a paused one. False on bad input.

        The scene is checked here (its problems are known since its last
        change); the solver is compiled in the worker thread, the window
        showing "preparing" and answering meanwhile (a scene of 2000 beads
        takes seconds to compile). The plots, log and clock are given the
        run once it is prepared (``_on_run_prepared``).
        """
        if self.runner is not None:
            if self.runner.is_running:
                self.runner.resume()
            elif self.clock.time >= self.clock.end_time():
                self.clock.seek(0.0)
            self.clock.play()
            self._set_run_state("running" if self.runner.is_running else self.runner.status)
            return True
        # Nothing is collected from here on: what start_run allocates before the
        # worker's own hold could cross generation 0's threshold, and a collection
        # then may walk the oldest generation (seconds for a 2000-bead scene).
        self._collector.hold()
        try:
            return self._start_new_run()
        finally:
            self._collector.release()

    def _start_new_run(self) -> bool:
        """``start_run`` for a scene not yet run: check it, then start its worker."""
        self.properties.apply_pending()
        refused = self.properties.refused()
        if refused:
            self.warn(
                "Cannot run",
                "Not run: a field in red holds a refused value (correct it or undo):",
                refused,
            )
            return False
        self.autosave()
        problems = self.doc.problems()
        if problems:
            self.warn("Cannot run", "The scene has problems:", problems)
            return False
        scene = self.doc.scene()  # validated with problems(): nothing is copied or parsed here
        child = ProcessStepper(scene) if needs_process(scene) else None  # see solver_process
        runner = SimulationRunner(
            parent=self,
            prepare=child.start if child is not None else lambda: make_stepper(scene),
            cancel=child.kill if child is not None else None,
        )
        runner.prepared.connect(self._on_run_prepared)
        runner.preparation_failed.connect(self._on_run_preparation_failed)
        runner.frames_added.connect(self._on_frames_added)
        runner.ended.connect(self._on_run_ended)
        self.runner = runner
        self.canvas.set_editing_enabled(False)
        self.properties.setEnabled(False)
        self.frames_drawn = 0
        runner.start()
        self._set_run_state("running")
        return True

    @Slot()
    def _on_run_prepared(self) -> None:
        """The worker has compiled the scene: hand the run to the plots, log and clock."""
        runner = self.runner
        if runner is None or runner.system is None:
            return
        self.plots.set_run(runner.trajectory, runner.system)
        self.motion_plots.set_run(runner.trajectory, runner.system, self._selected_body())
        self.reference_view.set_run(runner.trajectory, runner.system)
        self.event_log.set_system(runner.system)
        self.stage_table.set_system(runner.system)
        self.progress.start(runner.system.scene.solver.t_end)
        self.clock.set_trajectory(runner.trajectory)
        self._update_horizon()
        # the canvas makes its drawing of the run a display frame later, so that this turn,
        # the canvas's and the first frame's each stall the window less
        QTimer.singleShot(CANVAS_START_DELAY_MS, self._start_canvas_run)
        if self._resume_at is not None:
            self.clock.resume_at(*self._resume_at)
            self._resume_at = None
        elif self.run_state == "running":
            self.clock.play()
        self._show_progress()

    @Slot()
    def _start_canvas_run(self) -> None:
        """The canvas draws the prepared run's bodies, before its first frame comes."""
        runner = self.runner
        if runner is not None and runner.system is not None:
            self.canvas.start_run(runner.system)

    @Slot(object)
    def _on_run_preparation_failed(self, error: BaseException) -> None:
        """The solver refused the scene or could not start: say why (the run ends as failed)."""
        if isinstance(error, SceneError):
            self.warn("Cannot run", "The scene has problems:", error.problems)
        elif isinstance(error, InputError):
            self.warn("Cannot run", "The solver refused the scene:", str(error).splitlines())
        else:
            detail = f"{type(error).__name__}: {error}"
            self.warn("Cannot run", "The solver could not start:", [detail])

    def pause_run(self) -> None:
        """Run ▸ Pause: hold the solver and the playback (also once the solver has finished)."""
        self.clock.pause()
        if self.runner is not None and self.runner.is_running:
            self.runner.pause()
            self._set_run_state("paused")

    def step_run(self) -> None:
        """Run ▸ Step: pause, then show the next frame (computing it if need be)."""
        if self.runner is None:
            if not self.start_run():
                return
        assert self.runner is not None
        self.pause_run()
        if not self.clock.step_frame() and self.runner.is_running:
            self._step_pending = True
            self.runner.step_once()

    def reset_run(self) -> None:
        """Run ▸ Reset: stop the run, drop its frames and go back to editing."""
        self._stop_runner()
        self.runner = None
        self._step_pending = False
        self._resume_at = None
        self.clock.pause()
        self.clock.set_trajectory(None)
        self.canvas.clear_animation()
        self.plots.clear()
        self.motion_plots.clear()
        self.reference_view.clear()
        self.event_log.set_system(None)
        self.stage_table.set_system(None)
        self.canvas.set_editing_enabled(True)
        self.properties.setEnabled(True)
        self._set_run_state("idle")

    def _stop_runner(self) -> None:
        runner = self.runner
        if runner is None:
            return
        if not self._shut_down and runner.is_running:
            # never wait for the solver: a step, or the build, may take long (a child
            # process is killed at once); the thread is joined once it has ended
            runner.abandon()
            runner.thread_finished.connect(self._forget_abandoned)
            self._abandoned.append(runner)
        else:
            runner.stop()

    @Slot()
    def _forget_abandoned(self) -> None:
        """An abandoned run's thread has ended: join it and let the runner go."""
        runner = self.sender()
        if runner in self._abandoned:
            self._abandoned.remove(runner)
            runner.stop()
            runner.deleteLater()

    def open_compare(self) -> CompareDialog | None:
        """Run ▸ Compare impact laws: a dialog running the scene under several laws."""
        try:
            scene = self.doc.scene()
        except SceneError as error:
            self.warn("Cannot compare", "The scene has problems:", error.problems)
            return None
        dialog = CompareDialog(
            scene, self, self.canvas, (self.clock.time_changed, self.run_state_changed)
        )
        dialog.finished.connect(self._on_compare_closed)
        self._compare_dialogs.append(dialog)
        dialog.show()
        return dialog

    def _set_run_state(self, state: str) -> None:
        self.run_state = state
        self._update_run_actions()
        self.run_state_changed.emit(state)

    @Slot(bool)
    def _on_playing_changed(self, _playing: bool) -> None:
        self._update_run_actions()

    def _update_run_actions(self) -> None:
        running = self.run_state == "running"
        has_run = self.runner is not None
        # the animation plays on after the solver has finished: Pause (F6) holds it there,
        # Run (F5) plays on
        playing = has_run and self.clock.is_playing
        self.run_action.setEnabled(not (running or playing))
        self.pause_action.setEnabled(running or playing)
        self.reset_action.setEnabled(has_run)
        self.export_csv_action.setEnabled(has_run)
        self.export_video_action.setEnabled(has_run)
        self._show_progress()

    def _show_progress(self) -> None:
        if self.runner is None:
            self.progress.idle()
        elif self.runner.is_preparing:
            self.progress.preparing()
        else:
            self.progress.show_state(self.run_state, self.clock.end_time())

    @Slot(object)
    def _on_frames_added(self, batch: StepOutput) -> None:
        assert self.runner is not None
        self.plots.add_output(batch)
        self.reference_view.add_output(batch)
        self.event_log.append(batch.events)
        self.stage_table.append(batch.events)
        for event in batch.events:
            if event.type == "impulse":
                self.statusBar().showMessage(
                    f"impulse on {event.body} at t = {event.t:.4f} s: |S| = "
                    f"{event.normal_impulse:.4g} N·s, ΔT = {event.energy_change:+.4g} J",
                    8000,
                )
            elif event.type == "accuracy":  # time-stepping: its penetration and drift
                self.statusBar().showMessage(event.message, 15000)
        if self._step_pending and self.clock.step_frame():
            self._step_pending = False
        self._show_progress()
        self.frames_arrived.emit(len(self.runner.trajectory))

    @Slot(str, str)
    def _on_run_ended(self, status: str, message: str) -> None:
        assert self.runner is not None
        self._step_pending = False
        self.plots.finish()
        self.motion_plots.redraw()
        self.reference_view.finish()
        if status == "failed":
            recorded = self.runner.trajectory.events[-5:]
            if not any(event.type == "error" for event in recorded):
                failure = Event(t=self.clock.end_time(), type="error", message=message)
                self.event_log.append([failure])
            self.statusBar().showMessage(f"solver failed: {message}")
        elif status == "finished":
            text = f"run finished: {message}" if message else "run finished"
            accuracy = [e for e in self.runner.trajectory.events[-3:] if e.type == "accuracy"]
            if accuracy:  # a time-stepping run says how wrong it is
                text += f"; {accuracy[-1].message}"
            self.statusBar().showMessage(text, 30000)
        self.event_log.flush()
        self._set_run_state(status)

    @Slot(object, object)
    def _on_frame_shown(self, frame: Frame, events: tuple[Event, ...]) -> None:
        if self.runner is None or self.runner.system is None:
            return
        self.canvas.show_frame(frame, self.runner.system, events)
        self.frames_drawn += 1

    @Slot(float)
    def _on_time_changed(self, t: float) -> None:
        self.plots.set_cursor(t)
        self.motion_plots.set_cursor(t)
        self.honesty.set_time(t)
        self._update_horizon()
        if self.run_state in ("finished", "failed") and t >= self.clock.end_time():
            self.clock.pause()  # the whole run was shown: Run plays it again from the start
        if self.runner is not None and self.runner.is_running:
            speed = self.clock.speed
            lead = self.clock.end_time() - t
            self.runner.set_ahead(not math.isinf(speed) and lead > SOLVER_AHEAD_S * speed)

    def _update_horizon(self) -> None:
        """Keep a run that takes impulses ``IMPULSE_LEAD_S`` of playback ahead of the screen."""
        if self.runner is None or not self.runner.accepts_impulses:
            return
        speed = self.clock.speed
        lead = None if math.isinf(speed) else self.clock.time + IMPULSE_LEAD_S * speed
        self.runner.set_horizon(lead)

    @Slot(float)
    def _on_event_time_selected(self, t: float) -> None:
        self.clock.pause()
        self.clock.seek(t)

    # ------------------------------------------------------------------- view

    def _selected_body(self) -> str | None:
        """Id of the body selected in the scene, if a body is."""
        selection = self.doc.selection
        if selection is None or selection[0] != "bodies":
            return None
        bodies = self.doc.data.get("bodies", [])
        if not 0 <= selection[1] < len(bodies):
            return None
        return str(bodies[selection[1]].get("id", ""))

    @Slot(float, float)
    def _on_pointer_moved(self, x: float, y: float) -> None:
        # read once the tool has had the same move: a drag reaches it after this signal,
        # and the size read now would be the previous move's ("wall 1.900 m" for 2 m)
        if self._pointer_at is None:
            QTimer.singleShot(0, self._show_pointer)
        self._pointer_at = (x, y)

    @Slot()
    def _show_pointer(self) -> None:
        if self._pointer_at is None:
            return
        canvas, position = self.canvas, self._pointer_at
        self._pointer_at = None
        position = canvas.snap(position) if canvas.editing_enabled else position
        self.pointer.show_pointer(position, canvas.tool.name, canvas.preview_points())

    @Slot(object)
    def _on_selection_changed(self, _selection: object) -> None:
        if self.runner is not None:
            self.motion_plots.choose(self._selected_body())

    def set_honest(self, enabled: bool) -> None:
        """View ▸ Show only up to the playback time: plots and event log hide what comes next."""
        self.honesty.set_enabled(enabled)
        self._sync_view_actions()

    @Slot(bool)
    def _on_presentation_toggled(self, _enabled: bool) -> None:
        self._sync_view_actions()
        runner = self.runner
        if runner is not None and runner.system is not None and self.clock.index >= 0:
            # the canvas was drawn afresh: show the frame of the playback time again
            self.canvas.show_frame(runner.trajectory.frame(self.clock.index), runner.system)

    def _sync_view_actions(self) -> None:
        for action, checked in (
            (self.presentation_action, self.presentation.enabled),
            (self.honesty_action, self.honesty.enabled),
        ):
            if action.isChecked() != checked:
                action.blockSignals(True)
                action.setChecked(checked)
                action.blockSignals(False)

    # --------------------------------------------------------------- document

    @Slot()
    def _on_document_changed(self) -> None:
        self.clock.loop_end = None  # only an orbit just opened from a sweep plays in a loop
        if self.runner is not None:
            self.reset_run()
            self.statusBar().showMessage("the scene changed: run reset", 5000)
        if self._session is not None and self.doc.is_dirty:
            self.autosave_timer.start()
        self._update_title()

    @Slot(bool)
    def _on_dirty_changed(self, dirty: bool) -> None:
        if self._session is not None:
            if dirty:
                self.autosave_timer.start()
            else:
                self.autosave_timer.stop()
                self._session.remove()
        self._update_title()

    @Slot(object)
    def _on_path_changed(self, _path: object) -> None:
        self._update_title()

    def _update_title(self) -> None:
        title = self.doc.data.get("title") or "Untitled"
        where = f" — {self.doc.path.name}" if self.doc.path else ""
        self.setWindowTitle(f"{title}{where}[*] — impactgui")
        self.setWindowModified(self.doc.is_dirty)

    # ------------------------------------------------------------- menu slots

    @Slot()
    def _on_recent(self) -> None:
        action = self.sender()
        if isinstance(action, QAction):
            self.open_file(action.data())

    @Slot(object)
    def _on_preset_chosen(self, path: Path) -> None:
        self.open_preset(path)

    @Slot(int)
    def _on_compare_closed(self, _result: int) -> None:
        for dialog in [d for d in self._compare_dialogs if not d.isVisible()]:
            dialog.shutdown()
            self._compare_dialogs.remove(dialog)

    # --------------------------------------------------------------- shutdown

    def shutdown(self) -> None:
        """Stop playback and join every worker thread; idempotent.

        Unsaved changes are autosaved and their recovery file is kept (only
        ``close`` after the unsaved-changes prompt deletes it): it is offered
        at the next start-up. Presentation mode ends (the application's
        font is the user's again).
        """
        self.autosave()
        self._end_recovery(remove=False)
        self.clock.pause()
        self._shut_down = True
        self._stop_runner()
        for runner in self._abandoned:
            runner.stop()
        self._abandoned.clear()
        if self._video is not None:
            self._video.cancel()
        self.presentation.set_enabled(False)
        for dialog in self._compare_dialogs:
            dialog.shutdown()
        self.sweeps.shutdown()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Ask about unsaved changes, then stop the run and close."""
        if not self._shut_down:
            if not self.maybe_discard_changes():
                event.ignore()
                return
            self._end_recovery(remove=True)
        self.shutdown()
        super().closeEvent(event)


def _reason(error: BaseException) -> str:
    """An exception in words for a message box: the OS's text, else the exception's."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__
