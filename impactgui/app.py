"""The ``impactgui`` command: open the window, or run a scene headless when there is no screen.

    impactgui [SCENE.json] [--run] [--screenshot PNG --after SECONDS] [--out DIR]
    impactgui SCENE.json --video OUT.mp4 [--video-size 1280x720] [--fps 30]
              [--video-speed 1] [--video-plots]

With a display, the window opens on SCENE.json (the bundled paper-004 wheel
by default); ``--run`` starts the run; ``--screenshot`` saves the whole
window as PNG after that many wall-clock seconds and exits 0. Without a
display (no ``DISPLAY`` / ``WAYLAND_DISPLAY``, and ``QT_QPA_PLATFORM`` not
``offscreen`` / ``minimal``) it says so, runs the scene to its end with the
solver, writes the CSV files to ``--out`` (``./impactgui-output``) and a PNG
of the window after the run, rendered offscreen. Exit status: 0 on success,
1 when an image cannot be written, 2 for a bad command line or scene file
(one line per problem on stderr), 3 when the solver fails mid-run (the
files hold everything up to the failure).

``--video OUT.mp4`` (or ``.gif``) never opens a window: it runs the scene
to its end offscreen and records the canvas (``--video-plots``: with the
plots beside it) at the chosen size and frame rate, ``--video-speed``
simulated seconds per second of video; progress goes to stderr. A run the
solver stops early is recorded up to the failure, exit 3.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from impactgui.display_check import install_hint, missing_xcb_packages, uses_xcb
from solver.cli import OneLineParser, UsageError
from solver.scene import SceneError, load_scene

if TYPE_CHECKING:
    from PySide6.QtWidgets import QApplication

    from impactgui.mainwindow import MainWindow
    from impactgui.video_export import VideoSettings

EXIT_OK = 0
EXIT_IMAGE_FAILED = 1
EXIT_INVALID_INPUT = 2
EXIT_SOLVER_FAILED = 3

DEFAULT_OUT = Path("impactgui-output")
HEADLESS_PNG = "impactgui.png"
_HEADLESS_PLATFORMS = ("offscreen", "minimal")


def build_parser() -> argparse.ArgumentParser:
    """The ``impactgui`` argument parser."""
    parser = OneLineParser(
        prog="impactgui",
        description=(
            "A desktop laboratory for nonsmooth mechanics: draw walls, curbs and arcs, place "
            "wheels, beads and springs, press Run. Without a display, runs the scene headless "
            "and writes CSV files and a PNG."
        ),
    )
    parser.add_argument(
        "scene",
        nargs="?",
        metavar="SCENE.json",
        help="scene file to open (default: the bundled wheel against a curb, paper 004)",
    )
    parser.add_argument("--run", action="store_true", help="start the run at once")
    parser.add_argument(
        "--screenshot",
        metavar="PNG",
        help="save the whole window as PNG after --after seconds, then exit 0",
    )
    parser.add_argument(
        "--after",
        metavar="SECONDS",
        type=float,
        default=1.0,
        help="wall-clock seconds before --screenshot is taken (default 1)",
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        help=f"without a display: directory for the CSV files and PNG (default ./{DEFAULT_OUT})",
    )
    video = parser.add_argument_group("video (no window)")
    video.add_argument(
        "--video", metavar="OUT", help="run the scene and record it as OUT.mp4 or OUT.gif"
    )
    video.add_argument(
        "--video-size",
        metavar="WxH",
        default="1280x720",
        help="frame size in pixels, even numbers (default 1280x720)",
    )
    video.add_argument(
        "--fps", type=float, default=30.0, help="frames per second of video (default 30)"
    )
    video.add_argument(
        "--video-speed",
        metavar="SPEED",
        type=float,
        default=1.0,
        help="simulated seconds per second of video (default 1: real time)",
    )
    video.add_argument(
        "--video-plots", action="store_true", help="record the plots beside the canvas"
    )
    return parser


def has_display() -> bool:
    """True when Qt can show a window (or is told to render offscreen)."""
    if os.environ.get("QT_QPA_PLATFORM", "").split(":")[0] in _HEADLESS_PLATFORMS:
        return True
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _scene_path(text: str | None) -> Path:
    from impactgui.presets import DEFAULT_SCENE

    return Path(text) if text else DEFAULT_SCENE


def main(argv: Sequence[str] | None = None, stderr: TextIO | None = None) -> int:
    """Entry point of ``impactgui``; returns the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name (``sys.argv[1:]`` by default).
    stderr : text stream, optional
        Where problems and notices go (``sys.stderr`` by default).
    """
    stderr = sys.stderr if stderr is None else stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as error:
        print(f"impactgui: {error} (see --help)", file=stderr)
        return EXIT_INVALID_INPUT
    except SystemExit as done:
        return int(done.code or 0)
    if not (math.isfinite(args.after) and args.after >= 0):
        print(f"--after: must be a number of seconds >= 0, got {args.after}", file=stderr)
        return EXIT_INVALID_INPUT
    video = None
    if args.video:
        from impactgui.video_export import VideoSettings, VideoSettingsError, parse_size

        try:
            width, height = parse_size(args.video_size)
            video = VideoSettings(
                Path(args.video), width, height, args.fps, args.video_speed, args.video_plots
            ).check()
        except VideoSettingsError as error:
            print(f"impactgui: {error}", file=stderr)
            return EXIT_INVALID_INPUT
    path = _scene_path(args.scene)
    try:
        load_scene(path)
    except SceneError as error:
        print(f"impactgui: cannot open {path}:", file=stderr)
        for line in error.problems:
            print(line, file=stderr)
        return EXIT_INVALID_INPUT
    headless = not has_display()
    if video is not None:
        headless = True  # recorded offscreen: no window, with a display or without
    elif headless:
        print(
            "impactgui: no display (DISPLAY and WAYLAND_DISPLAY are not set): "
            "running the scene headless, rendering offscreen",
            file=stderr,
        )
    elif uses_xcb(os.environ, sys.platform) and (missing := missing_xcb_packages()):
        # Qt would abort the process ("Could not load the Qt platform plugin xcb").
        print(
            "impactgui: the X11 display cannot be used, Qt's xcb platform needs the Debian "
            f"packages {', '.join(missing)} ({install_hint(missing)}): "
            "running the scene headless, rendering offscreen",
            file=stderr,
        )
        headless = True
    if headless:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

    from PySide6.QtWidgets import QApplication

    from impactgui.mainwindow import MainWindow
    from impactgui.recovery import RecoveryStore

    app = QApplication.instance() or QApplication(["impactgui"])
    app.setApplicationName("impactgui")
    if not _compile_kernels_if_cold(stderr):
        load_kernels_in_background()
    app.setOrganizationName("impactgui")
    # Crash recovery only in an interactive session: a headless or --screenshot run
    # must never stop at the "restore unsaved scene?" question.
    interactive = not headless and not args.screenshot and video is None
    window = MainWindow(recovery=RecoveryStore() if interactive else None)
    if not window.open_file(path):
        window.shutdown()
        return EXIT_INVALID_INPUT
    window.show()
    if interactive:
        window.offer_recovery()
    try:
        if video is not None:
            return _record_video(app, window, video, stderr)
        if headless:
            out_dir = Path(args.out) if args.out else DEFAULT_OUT
            png = Path(args.screenshot) if args.screenshot else out_dir / HEADLESS_PNG
            return _run_headless(app, window, out_dir, png, stderr)
        if args.run:
            window.start_run()
        if args.screenshot:
            return _screenshot_after(app, window, Path(args.screenshot), args.after, stderr)
        return app.exec()
    finally:
        window.shutdown()


def load_kernels_in_background() -> threading.Thread:
    """Load the solver's compiled kernels from numba's disk cache in a thread of their own.

    Each process loads numba and every kernel it calls once, at the kernel's
    first call: done inside a run's first step, that took 0.4-0.5 s (numba's
    import 0.17 s, a cached kernel's load 0.1-0.3 s) in the worker thread
    while the window animated the run's start, sharing the interpreter lock
    with it. Here it is done while the window opens and waits for the user
    (about 1.2 s of CPU); a run started meanwhile waits for numba's own lock.
    """
    from solver import kernels

    thread = threading.Thread(target=kernels.compile_all, name="kernels", daemon=False)
    thread.start()
    return thread


def _compile_kernels_if_cold(stderr: TextIO) -> bool:
    """The first start after an install compiles the solver's kernels, once, with progress.

    A progress dialog (and the same lines on stderr) while :mod:`solver.kernels`
    compiles, before the window opens: no run then compiles inside a step.
    True when it compiled (the kernels are loaded then).
    """
    from solver import kernels

    if not kernels.is_cold():
        return False
    from PySide6.QtWidgets import QApplication, QProgressDialog

    dialog = QProgressDialog(
        "Compiling the solver's kernels, once…", "", 0, len(kernels.KERNEL_NAMES)
    )
    dialog.setWindowTitle("impactgui")
    dialog.setCancelButton(None)
    dialog.setMinimumDuration(0)
    printed = kernels.print_progress(stderr)

    def report(done: int, total: int, name: str) -> None:
        printed(done, total, name)
        label = f"{done + 1}/{total} {name}…" if done < total else "done"
        dialog.setLabelText(f"Compiling the solver's kernels, once: {label}")
        dialog.setValue(done)
        QApplication.processEvents()

    kernels.compile_all(report)
    dialog.close()
    return True


def _save_window(window: MainWindow, png: Path, stderr: TextIO) -> bool:
    png.parent.mkdir(parents=True, exist_ok=True)
    if window.grab().save(str(png), "PNG"):
        return True
    print(f"impactgui: could not write {png}", file=stderr)
    return False


def _screenshot_after(
    app: QApplication, window: MainWindow, png: Path, seconds: float, stderr: TextIO
) -> int:
    from PySide6.QtCore import QTimer

    outcome = {"code": EXIT_OK}

    def take() -> None:
        if not _save_window(window, png, stderr):
            outcome["code"] = EXIT_IMAGE_FAILED
        window.shutdown()
        app.quit()

    QTimer.singleShot(round(seconds * 1000), window, take)
    app.exec()
    return outcome["code"]


def _run_headless(
    app: QApplication, window: MainWindow, out_dir: Path, png: Path, stderr: TextIO
) -> int:
    from impactgui.playback import AS_FAST_AS_POSSIBLE

    window.playback_bar.set_speed(AS_FAST_AS_POSSIBLE)
    outcome = {"code": EXIT_OK}

    def finish(state: str) -> None:
        if state not in ("finished", "failed", "stopped"):
            return
        window.clock.seek(window.clock.end_time())
        window.plots.redraw()
        app.processEvents()
        if window.export_csv(out_dir) is None:
            outcome["code"] = EXIT_INVALID_INPUT
        else:
            print(f"impactgui: CSV files written to {out_dir}/", file=stderr)
        if _save_window(window, png, stderr):
            print(f"impactgui: picture of the run written to {png}", file=stderr)
        elif outcome["code"] == EXIT_OK:
            outcome["code"] = EXIT_IMAGE_FAILED
        if state == "failed" and window.runner is not None:
            print(f"solver failed: {window.runner.message}", file=stderr)
            outcome["code"] = EXIT_SOLVER_FAILED
        app.quit()

    window.run_state_changed.connect(finish)
    if not window.start_run():
        print("impactgui: the scene cannot be run", file=stderr)
        return EXIT_INVALID_INPUT
    app.exec()
    return outcome["code"]


def _record_video(
    app: QApplication, window: MainWindow, settings: VideoSettings, stderr: TextIO
) -> int:
    """Run the scene to its end as fast as possible, then record it; the exit status."""
    from impactgui.playback import AS_FAST_AS_POSSIBLE
    from impactgui.video_export import VideoRecorder

    window.playback_bar.set_speed(AS_FAST_AS_POSSIBLE)
    window.run_state_changed.connect(
        lambda state: app.quit() if state in ("finished", "failed", "stopped") else None
    )
    if not window.start_run():
        print("impactgui: the scene cannot be run", file=stderr)
        return EXIT_INVALID_INPUT
    app.exec()
    window.clock.seek(window.clock.end_time())
    window.plots.redraw()
    app.processEvents()
    recorder = VideoRecorder(window, settings)
    step = max(1, recorder.count // 10)
    try:
        for done in recorder.frames():
            if done % step == 0 or done == recorder.count:
                print(f"impactgui: video frame {done} of {recorder.count}", file=stderr)
    except OSError as error:
        print(f"impactgui: could not write {settings.path}: {error}", file=stderr)
        return EXIT_IMAGE_FAILED
    print(
        f"impactgui: video written to {settings.path} ({recorder.count} frames, "
        f"{settings.width}x{settings.height}, {settings.fps:g} frames/s)",
        file=stderr,
    )
    if window.run_state == "failed" and window.runner is not None:
        print(f"solver failed: {window.runner.message}", file=stderr)
        return EXIT_SOLVER_FAILED
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
