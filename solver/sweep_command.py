"""The ``python -m solver sweep`` command: options, progress line, files, exit status.

::

    python -m solver sweep SCENE.json --vary PATH=START:STOP:COUNT[:log] [--vary PATH=V1,V2,...]...
        --out DIR [--t-end T] [--transient T] [--dt-out S] [--method ...] [--workers N]
        [--scheduler ADDRESS]

Writes ``DIR/summary.csv`` and ``DIR/impacts.csv`` (see :mod:`solver.sweep`).
Exit status: 0 when every point finished; 2 on invalid input, before
anything runs (one line naming the path or option and the reason); 3 when
some points failed (their rows say why; every other point finished); 130
when interrupted (Ctrl-C): the files then hold every point finished so far.
Progress (points done / total, rate, time left) is drawn on a terminal only.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from solver.errors import InputError
from solver.scene import SceneError, load_scene
from solver.simulation import METHODS
from solver.sweep import Axis, PointResult, Sweep, SweepResult

EXIT_OK = 0
EXIT_INVALID_INPUT = 2
EXIT_POINTS_FAILED = 3
EXIT_INTERRUPTED = 130


def add_sweep_parser(commands: Any) -> argparse.ArgumentParser:
    """Add the ``sweep`` command to ``python -m solver``'s sub-parsers."""
    sweep = commands.add_parser(
        "sweep",
        help="run a scene over a grid of field values; write summary.csv and impacts.csv",
        description=(
            "Run SCENE.json once per grid point, varying scene fields named by their JSON "
            "path (contact.restitution, forces[0].omega, bodies[0].velocity[1]); write "
            "DIR/summary.csv (one row per point) and DIR/impacts.csv (one row per impact "
            "after the transient). Exit 0 when every point finished, 2 on invalid input "
            "(before anything runs), 3 when some points failed, 130 when interrupted "
            "(files then hold every finished point)."
        ),
    )
    sweep.add_argument("scene", metavar="SCENE.json", help="scene file (impactgui-scene JSON)")
    sweep.add_argument(
        "--vary",
        metavar="PATH=START:STOP:COUNT[:log]|PATH=V1,V2,...",
        action="append",
        required=True,
        help="a field and its values (COUNT evenly spaced from START to STOP, on a log "
        "scale with :log, or a list); several --vary make a grid",
    )
    sweep.add_argument("--out", metavar="DIR", required=True, help="directory for the CSV files")
    sweep.add_argument("--t-end", metavar="T", help="end time of every run, s (default: scene)")
    sweep.add_argument(
        "--transient",
        metavar="T",
        default="0",
        help="impacts before T seconds are left out of impacts.csv (default 0)",
    )
    sweep.add_argument(
        "--dt-out",
        metavar="S",
        help="spacing of output samples, s (default: solver.dt_out; a sweep keeps impacts "
        "and the final state, so --dt-out equal to the end time costs least)",
    )
    sweep.add_argument(
        "--method",
        metavar="|".join(METHODS),
        help="event-driven or time-stepping (default: the scene's)",
    )
    sweep.add_argument(
        "--workers", metavar="N", help="processes of the local pool (default: number of cores)"
    )
    sweep.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run on the Dask distributed cluster at ADDRESS (tcp://HOST:PORT) instead",
    )
    sweep.add_argument(
        "--debug",
        action="store_true",
        help="print the traceback of an unexpected error (exit 3) to stderr",
    )
    return sweep


class SweepProgress:
    """One line on a terminal: points done / total, rate, time left (≤ 10 redraws a second).

    A count that comes less than ``INTERVAL_S`` after the last redraw is drawn
    when that interval is over (by a timer thread), so the line never shows
    fewer points than are done for longer than that.
    """

    WIDTH = 30
    INTERVAL_S = 0.1

    def __init__(self, stream: TextIO, total: int) -> None:
        self.stream = stream
        self.total = total
        self._start = time.monotonic()
        self._last_draw = -math.inf
        self._done = 0
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._closed = False

    def update(self, done: int, force: bool = False) -> None:
        """Show ``done`` points finished out of ``total``."""
        with self._lock:
            self._done = done
            wait_s = self._last_draw + self.INTERVAL_S - time.monotonic()
            if force or wait_s <= 0.0:
                self._draw()
            elif self._timer is None:
                self._timer = threading.Timer(wait_s, self._draw_late)
                self._timer.daemon = True
                self._timer.start()

    def close(self, done: int) -> None:
        """Draw the final count and end the line."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            self._closed = True
            self._done = done
            self._draw()
            self.stream.write("\n")
            self.stream.flush()

    def _draw_late(self) -> None:
        with self._lock:
            self._timer = None
            if not self._closed:
                self._draw()

    def _draw(self) -> None:
        now = time.monotonic()
        self._last_draw = now
        done = self._done
        elapsed = max(now - self._start, 1e-9)
        rate = done / elapsed
        left = (self.total - done) / rate if rate > 0 else math.inf
        filled = round(self.WIDTH * done / max(self.total, 1))
        bar = "#" * filled + "." * (self.WIDTH - filled)
        self.stream.write(
            f"\r[{bar}] {done}/{self.total} points  {rate:.3g} points/s  {_duration(left)} left "
        )
        self.stream.flush()


PIPE_MIN_POINTS = 10
"""In a pipe (not a terminal), sweeps of at least this many points print a progress line at
every tenth of the way; smaller ones, which end quickly, stay silent."""


class PipeProgress:
    """Plain lines for a pipe or a log file: ``"12 / 29 points"`` at every tenth of the way."""

    def __init__(self, stream: TextIO, total: int) -> None:
        self.stream = stream
        self.total = total
        self.step = max(1, math.ceil(total / 10))
        self._printed = -1
        self._lock = threading.Lock()

    def update(self, done: int, force: bool = False) -> None:
        """Print ``done`` when it reaches the next tenth (or ``force``)."""
        with self._lock:
            if force or done // self.step > max(self._printed, 0) // self.step:
                self._print(done)

    def close(self, done: int) -> None:
        """Print the final count (once)."""
        with self._lock:
            if done != self._printed:
                self._print(done)

    def _print(self, done: int) -> None:
        self._printed = done
        self.stream.write(f"{done} / {self.total} points\n")
        self.stream.flush()


def _progress(stream: TextIO, total: int) -> SweepProgress | PipeProgress | None:
    """The progress shown for a sweep of ``total`` points on ``stream`` (stderr), if any."""
    if stream.isatty():
        progress: SweepProgress | PipeProgress = SweepProgress(stream, total)
    elif total >= PIPE_MIN_POINTS:
        progress = PipeProgress(stream, total)
    else:
        return None
    progress.update(0, force=True)  # at once: the first points may take long
    return progress


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "--"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds // 60 % 60:02d} min"


def _number(name: str, text: str | None, lower: float, strict: bool) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{name}: must be a number, got {text!r}") from None
    if not math.isfinite(value) or value < lower or (strict and value == lower):
        raise InputError(f"{name}: must be {'>' if strict else '>='} {lower:g}, got {text}")
    return value


def _plan(args: argparse.Namespace) -> tuple[Sweep, int | None]:
    """The validated sweep and worker count, or ``InputError`` with one line."""
    t_end = _number("--t-end", args.t_end, 0.0, strict=True)
    dt_out = _number("--dt-out", args.dt_out, 0.0, strict=True)
    transient = _number("--transient", args.transient, 0.0, strict=False) or 0.0
    workers = None
    if args.workers is not None:
        try:
            workers = int(args.workers)
        except ValueError:
            raise InputError(f"--workers: must be a whole number, got {args.workers!r}") from None
        if workers < 1:
            raise InputError(f"--workers: must be >= 1, got {workers}")
    if not Path(args.scene).is_file():
        raise InputError(f"SCENE: no such file: {args.scene}")
    out_dir = Path(args.out)
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"--out: not a directory: {args.out}")
    scene = load_scene(args.scene)
    axes = [Axis.parse(text) for text in args.vary]
    plan = Sweep(scene, axes, t_end=t_end, transient=transient, method=args.method, dt_out=dt_out)
    try:  # the points may take hours: make sure their files can be written first
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"--out: cannot create {args.out}: {error.strerror or error}") from None
    if not os.access(out_dir, os.W_OK | os.X_OK):
        raise InputError(f"--out: cannot write to {args.out}: permission denied")
    return plan, workers


@contextlib.contextmanager
def _ctrl_c_held() -> Iterator[list[int]]:
    """Hold Ctrl-C (SIGINT) while the files are written; the list names the signals that came.

    A Ctrl-C that arrives after the last point, while ``summary.csv`` and
    ``impacts.csv`` are written, must not end the command with a traceback:
    the files are finished, then the command reports the interruption (exit 130).
    Outside the main thread signals cannot be handled, and nothing is held.
    """
    came: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield came
        return
    previous = signal.signal(signal.SIGINT, lambda number, _frame: came.append(number))
    try:
        yield came
    finally:
        signal.signal(signal.SIGINT, previous)


def run_sweep_command(args: argparse.Namespace, stderr: TextIO) -> int:
    """Run the parsed ``sweep`` command; return the exit status."""
    try:
        plan, workers = _plan(args)
    except KeyboardInterrupt:
        print("interrupted before any point ran; nothing written", file=stderr)
        return EXIT_INTERRUPTED
    except SceneError as error:
        for line in error.problems:
            print(line, file=stderr)
        return EXIT_INVALID_INPUT
    except InputError as error:
        print(str(error).splitlines()[0], file=stderr)
        return EXIT_INVALID_INPUT
    progress = _progress(stderr, len(plan))

    def on_point(_point: PointResult, done: int, _total: int) -> None:
        if progress is not None:
            progress.update(done)

    status = EXIT_OK
    try:
        result = plan.run(workers=workers, scheduler=args.scheduler, on_point=on_point)
    except InputError as error:
        if progress is not None:
            progress.close(0)
        print(str(error).splitlines()[0], file=stderr)
        return EXIT_INVALID_INPUT
    except KeyboardInterrupt as interrupt:
        result = getattr(interrupt, "partial", None) or SweepResult(plan)
        status = EXIT_INTERRUPTED
    try:
        with _ctrl_c_held() as interrupted:
            if progress is not None:
                progress.close(len(result.by_run))
            result.write_csv(args.out)
        if interrupted:
            status = EXIT_INTERRUPTED
    except OSError as error:
        print(f"--out: cannot write to {args.out}: {error.strerror or error}", file=stderr)
        return EXIT_INVALID_INPUT
    if status == EXIT_INTERRUPTED:
        print(
            f"interrupted: {len(result.by_run)} of {len(plan)} points finished and written",
            file=stderr,
        )
        return status
    failed = [point for point in result.points if point.status == "failed"]
    if failed:
        print(
            f"{len(failed)} of {len(plan)} points failed (see {args.out}/summary.csv); "
            f"first: run {failed[0].run}: {failed[0].message}",
            file=stderr,
        )
        return EXIT_POINTS_FAILED
    return EXIT_OK
