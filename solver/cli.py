"""The command line: ``python -m solver run SCENE.json --out DIR [options]``.

Runs a scene to its end without Qt and writes the CSV files of the public
contract (docs/CONTRACT.md). Exit status: 0 on success, 2 on invalid input (one
line per problem on stderr, each starting with the JSON path of the field
or the name of the option), 3 when the solver fails mid-run (the message on
stderr; the files hold everything computed up to the failure). That holds
for every input: an unexpected exception anywhere is reported as exit 3 in
one line, its traceback printed only with ``--debug`` (docs/LIMITS.md).
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
import time
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn, TextIO

from solver import kernels
from solver.errors import InputError
from solver.orbits_command import add_orbits_parser, run_orbits_command
from solver.record import Trajectory, write_csv
from solver.reference import NO_REFERENCE, recognise, write_reference_file
from solver.scene import (
    MAGNITUDES,
    MAX_FILE_BYTES,
    MAX_SAMPLES,
    MAX_TIME_STEPS,
    Scene,
    SceneError,
    load_scene,
    run_size_problems,
)
from solver.simulation import STALL_WALL_TIME_S, Watchdog, drive, make_stepper
from solver.sweep_command import add_sweep_parser, run_sweep_command

EXIT_OK = 0
EXIT_INVALID_INPUT = 2
EXIT_SOLVER_FAILED = 3
EXIT_INTERRUPTED = 130

METHODS = ("event-driven", "time-stepping")


class UsageError(Exception):
    """The command line itself is malformed (unknown option, missing argument)."""


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that raises :class:`UsageError` instead of printing and exiting.

    The caller reports the error as one line (exit status 2); the GUI's
    command line uses it too.
    """

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    """The ``python -m solver`` argument parser (``run`` is the one command)."""
    parser = OneLineParser(
        prog="python -m solver",
        description="impactgui's mechanics without the GUI: run a scene, write CSV files.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    run = commands.add_parser(
        "run",
        help="simulate a scene file and write trajectory.csv, contacts.csv, events.csv",
        description=(
            "Simulate SCENE.json and write DIR/trajectory.csv, DIR/contacts.csv and "
            "DIR/events.csv (SI units, full float precision). Exit 0 on success, 2 on "
            "invalid input (one line per problem), 3 when the solver fails mid-run "
            "(files then hold everything up to the failure; any unexpected error is "
            "exit 3 too). Limits: a scene file of at most "
            f"{MAX_FILE_BYTES // 2**20} MiB, at most {MAX_SAMPLES:.0e} output samples "
            f"(t_end / dt_out) and {MAX_TIME_STEPS:.0e} time steps (t_end / dt); a run "
            f"whose simulated time does not advance for {STALL_WALL_TIME_S:g} s of wall "
            "time fails (exit 3); each impact is bounded in collisions, stages and "
            "seconds (docs/LIMITS.md)."
        ),
    )
    run.add_argument("scene", metavar="SCENE.json", help="scene file (impactgui-scene JSON)")
    run.add_argument("--out", metavar="DIR", required=True, help="directory for the CSV files")
    run.add_argument(
        "--t-end", metavar="T", help="end time of the run, s (default: the scene's solver.t_end)"
    )
    run.add_argument(
        "--method",
        metavar="|".join(METHODS),
        help="event-driven (exact impact times) or time-stepping (Moreau–Jean; default: scene)",
    )
    run.add_argument(
        "--dt-out",
        metavar="S",
        help=(
            "spacing of output samples, s (default: solver.dt_out); "
            f"t_end / S is at most {MAX_SAMPLES:.0e}"
        ),
    )
    run.add_argument(
        "--debug",
        action="store_true",
        help=(
            "print the traceback of an unexpected error (exit 3) to stderr, and name each "
            "phase kind and event of an event-driven run as it runs (logger solver.events)"
        ),
    )
    run.add_argument(
        "--reference",
        action="store_true",
        help="also write DIR/reference.csv: the closed form the scene matches, beside each "
        "trajectory row (refused when no closed form matches)",
    )
    add_sweep_parser(commands)
    add_orbits_parser(commands)
    _add_figure_commands(commands)
    commands.add_parser(
        "compile",
        help="compile the solver's numba kernels now, once (the Makefile runs it after install)",
        description=(
            "Compile every numba kernel of the solver (or load it from numba's disk cache), "
            "with a line of progress each, and remember it: a run then never compiles inside "
            "a step. `run` does the same at its start when they are not compiled yet."
        ),
    )
    return parser


def _add_figure_commands(commands: argparse._SubParsersAction) -> None:
    """The ``papers`` and ``plot`` commands (:mod:`solver.papers.command`, :mod:`solver.plot`)."""
    from solver.papers.command import add_papers_parser
    from solver.plot import add_plot_parser

    add_papers_parser(commands)
    add_plot_parser(commands)


def _positive_option(name: str, text: str | None, problems: list[str]) -> float | None:
    """``text`` as a duration within ``MAGNITUDES["duration"]`` (s), or ``None``.

    Appends a problem line when it is not a number in that range.
    """
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        problems.append(f"{name}: must be a number, got {text!r}")
        return None
    if not math.isfinite(value) or value <= 0:
        problems.append(f"{name}: must be > 0, got {text}")
        return None
    smallest, largest, _unit = MAGNITUDES["duration"]
    if not smallest <= value <= largest:
        problems.append(f"{name}: must lie between {smallest:g} and {largest:g} s, got {text}")
        return None
    return value


def _read_scene(text: str, problems: list[str]) -> Scene | None:
    path = Path(text)
    if not path.exists():
        problems.append(f"SCENE: no such file: {text}")
        return None
    try:
        return load_scene(path)
    except SceneError as error:
        problems.extend(error.problems)
    return None


class ProgressBar:
    """A one-line progress bar on a terminal stream, redrawn at most ten times a second."""

    WIDTH = 30

    def __init__(self, stream: TextIO, t_end: float) -> None:
        self.stream = stream
        self.t_end = t_end
        self._last_draw = -math.inf

    def update(self, t: float, force: bool = False) -> None:
        """Show simulated time ``t`` (s) out of ``t_end``."""
        now = time.monotonic()
        if not force and now - self._last_draw < 0.1:
            return
        self._last_draw = now
        share = min(1.0, max(0.0, t / self.t_end))
        filled = round(share * self.WIDTH)
        bar = "#" * filled + "." * (self.WIDTH - filled)
        self.stream.write(f"\r[{bar}] {share:6.1%}  t = {t:.6g} s of {self.t_end:g} s")
        self.stream.flush()

    def close(self, t: float) -> None:
        """Draw the final state and end the line."""
        self.update(t, force=True)
        self.stream.write("\n")
        self.stream.flush()


def _run_size_problems(
    scene: Scene, t_end: float | None, method: str | None, dt_out: float | None
) -> list[str]:
    """The run-size bounds (samples, time steps) for the settings in effect, as problem lines.

    Each line names the option that set the value, or the scene's field.
    """
    settings = scene.solver
    names = {
        "dt_out": "--dt-out" if dt_out is not None else "solver.dt_out",
        "dt": "solver.dt",
    }
    problems = run_size_problems(
        settings.t_end if t_end is None else t_end,
        settings.dt_out if dt_out is None else dt_out,
        settings.dt,
        settings.method if method is None else method,
    )
    return [f"{names[key]}: {message}" for key, message in problems]


def _report_unexpected(error: BaseException, stderr: TextIO, debug: bool) -> None:
    """The traceback of an unexpected error, with ``--debug`` only."""
    if debug:
        traceback.print_exception(error, file=stderr)


def run_scene(
    scene: Scene,
    out_dir: Path,
    t_end: float | None,
    method: str | None,
    dt_out: float | None,
    stderr: TextIO,
    debug: bool = False,
    watchdog: Watchdog | None = None,
) -> int:
    """Simulate ``scene``, write the CSV files into ``out_dir``; return the exit status.

    An unexpected exception while the system is compiled or the run is
    stepped ends it with exit 3 and the files computed so far; ``debug``
    prints its traceback. ``watchdog`` (default ``Watchdog()``) fails a run
    whose simulated time stops advancing.
    """
    with _phase_log(stderr, debug):
        try:
            stepper = make_stepper(scene, t_end=t_end, method=method, dt_out=dt_out)
        except InputError as error:
            for line in str(error).splitlines():
                print(line, file=stderr)
            return EXIT_INVALID_INPUT
        except Exception as error:
            _report_unexpected(error, stderr, debug)
            print(f"solver failed: internal error ({type(error).__name__}: {error})", file=stderr)
            return EXIT_SOLVER_FAILED
        trajectory = Trajectory(stepper.system)
        progress = ProgressBar(stderr, t_end or scene.solver.t_end) if stderr.isatty() else None
        status = EXIT_OK
        try:
            unexpected = drive(
                stepper, trajectory, watchdog, None if progress is None else progress.update
            )
            if unexpected is not None:
                _report_unexpected(unexpected, stderr, debug)
        except KeyboardInterrupt:
            trajectory.status, trajectory.message = "failed", f"interrupted at t = {stepper.t!r} s"
            status = EXIT_INTERRUPTED
        finally:
            if progress is not None:
                progress.close(stepper.t)
            write_csv(trajectory, out_dir)
        if trajectory.status == "failed":
            print(f"solver failed: {trajectory.message}", file=stderr)
            return status or EXIT_SOLVER_FAILED
        return EXIT_OK


@contextmanager
def _phase_log(stderr: TextIO, debug: bool) -> Iterator[None]:
    """With ``debug``, the stepper's parts log each phase kind and event (``solver.events``)
    to ``stderr`` for the block; nothing otherwise."""
    if not debug:
        yield
        return
    handler = logging.StreamHandler(stderr)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    logger = logging.getLogger("solver")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def main(argv: Sequence[str] | None = None, stderr: TextIO | None = None) -> int:
    """Entry point of ``python -m solver``; returns the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; ``sys.argv[1:]`` by default.
    stderr : text stream, optional
        Where problems, failures and the progress bar go; ``sys.stderr`` by
        default. The progress bar is drawn only when it is a terminal.
    """
    stderr = sys.stderr if stderr is None else stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as error:
        print(f"{parser.prog}: {error} (see --help)", file=stderr)
        return EXIT_INVALID_INPUT
    except SystemExit as done:
        return int(done.code or 0)
    if args.command is None:
        parser.print_help(stderr)
        return EXIT_INVALID_INPUT
    try:
        if args.command == "sweep":
            return run_sweep_command(args, stderr)
        if args.command == "orbits":
            return run_orbits_command(args, stderr)
        if args.command == "papers":
            from solver.papers.command import run_papers_command

            return run_papers_command(args, stderr)
        if args.command == "plot":
            from solver.plot import run_plot_command

            return run_plot_command(args, stderr)
        if args.command == "compile":
            kernels.compile_all(kernels.print_progress(stderr))
            return 0
        return _run_command(args, stderr)
    except Exception as error:
        _report_unexpected(error, stderr, getattr(args, "debug", False))
        print(f"solver failed: internal error ({type(error).__name__}: {error})", file=stderr)
        return EXIT_SOLVER_FAILED


def _run_command(args: argparse.Namespace, stderr: TextIO) -> int:
    """``run`` with parsed arguments: check every input, then simulate."""
    problems: list[str] = []
    t_end = _positive_option("--t-end", args.t_end, problems)
    dt_out = _positive_option("--dt-out", args.dt_out, problems)
    if args.method is not None and args.method not in METHODS:
        problems.append(f"--method: must be one of {', '.join(METHODS)}, got {args.method!r}")
    scene = _read_scene(args.scene, problems)
    if args.reference and scene is not None and recognise(scene, t_end) is None:
        problems.append(f"--reference: {NO_REFERENCE}")
    if scene is not None and not problems:
        problems += _run_size_problems(scene, t_end, args.method, dt_out)
    out_dir = Path(args.out)
    if out_dir.exists() and not out_dir.is_dir():
        problems.append(f"--out: not a directory: {args.out}")
    if problems:
        for line in problems:
            print(line, file=stderr)
        return EXIT_INVALID_INPUT
    assert scene is not None
    # the first run after an install compiles the kernels here, saying so, not in a step
    kernels.compile_if_cold(kernels.print_progress(stderr))
    try:
        status = run_scene(scene, out_dir, t_end, args.method, dt_out, stderr, args.debug)
        if args.reference and status != EXIT_INVALID_INPUT:
            write_reference_file(scene, out_dir, t_end)
        return status
    except OSError as error:
        print(f"--out: cannot write to {args.out}: {error.strerror or error}", file=stderr)
        return EXIT_INVALID_INPUT
