"""Parameter sweeps: one scene run over a grid of values of some of its fields.

A sweep varies fields of a scene named by their JSON path
(:mod:`solver.scene_paths`: ``contact.restitution``, ``forces[0].omega``,
``bodies[0].velocity[1]``). Each :class:`Axis` gives one field its values;
several axes make a grid, their product, in grid order (the last axis
varies fastest, like nested loops in the order given). Every grid point is
an ordinary run of the changed scene; points are independent and run in
parallel on a local process pool or on a Dask distributed cluster. What a
point returns does not depend on where it ran, so the tables — and the CSV
files :meth:`SweepResult.write_csv` makes of them — are the same, byte for
byte, for one worker, several, or a cluster.

Use::

    from solver.sweep import Axis, Sweep, sweep
    result = sweep(scene, [Axis.linspace("forces[0].omega", 5.0, 15.0, 101)],
                   transient=50.0, workers=2)
    result.summary_rows()      # one row per point, columns result.summary_columns
    result.impact_rows()       # one row per impact after the transient
    result.write_csv("out/")   # summary.csv and impacts.csv

or, to stream points as they finish (the app does) and stop early::

    plan = Sweep(scene, axes, transient=50.0)        # every point validated here
    with plan.results(workers=2) as points:          # completion order
        for point in points:
            ...                                      # a PointResult
    # leaving the block early cancels the points not yet run

The tables
----------
``summary.csv`` (:attr:`SweepResult.summary_columns`): ``run`` (the point's
index in grid order, from 0), one column per varied path named exactly as
given, ``status`` (``finished`` or ``failed``), ``t_end`` (the time the run
reached, s), ``n_impacts`` (``impact`` events of the whole run, one per
contact as in ``events.csv``), ``t_zeno`` (time of the first ``zeno`` event:
the accumulation time of the first Zeno sequence, s; empty if none),
``E_dissipated`` (J, at the end), the final state with the columns of
``trajectory.csv`` (``ID.x``, ``ID.vx``, …), ``message`` (the solver's
message: why the point failed, or how it finished), then the period of the
impacts after the transient (:mod:`solver.impact_period`): ``period`` (in
forcing periods ``2π/ω`` of the scene's harmonic forcing, 1 to 32; 0 when
the scene has none or no period up to 32 forcing periods and 64 impacts is
found), ``impacts_per_period`` (0 when none is found) and ``period_s`` (the
period in s, also for a scene without forcing — paper 003's ``T(V)``;
empty when none is found). A scene with compliant contacts adds the first
compliant contact's ``contact_time`` (touch to release, s), ``peak_force``
(its largest force, N) and ``impulse`` (``∫F dt``, N·s), empty when no
contact ended: over decades of stiffness they show the road to the rigid
impact (the contact time → 0, the impulse → ``(1 + e)mV``).

``impacts.csv`` (:attr:`SweepResult.impact_columns`): one row per ``impact``
event at ``t >= transient``: ``run``, the varied paths, ``t`` (s), ``body``,
``other``, ``u_n_minus`` (normal approach speed before, m/s, positive),
``u_n_plus`` (normal separation speed after, m/s), ``impulse`` (normal, N·s),
then the state of ``body`` just before the impact (``x``, ``y``, ``phi``,
``vx``, ``vy``, ``omega`` for a scene with wheels, ``x``, ``vx`` with beads
only; a bead leaves the wheel-only columns empty). The time-stepping method
records an impact's velocities but not its contact's normal: the speeds are
then those velocities along the contact's normal at the impact's position
(:class:`ContactNormals`).

Numbers are written with ``repr`` (the shortest text that reads back as the
same float), as in the other CSV files.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np

from solver.record import ENERGY_COLUMNS, trajectory_columns, write_csv_atomic
from solver.scene import Scene, SceneError, parse_scene, run_size_problems, scene_to_dict
from solver.scene_paths import ScenePathError, check_settable, with_values
from solver.simulation import METHODS, one_blas_thread
from solver.sweep_point import (
    Cell,
    ContactNormals,
    ImpactRecord,
    PointResult,
    PointTask,
    SweepError,
    Value,
    impact_state_columns,
    run_point,
)
from solver.sweep_runners import (
    PARENT_CHECK_S,
    POINTS_PER_WORKER,
    STOP_POLL_S,
    _DaskRunner,
    _PoolRunner,
    default_workers,
)
from solver.system import System

SUMMARY_FILE = "summary.csv"


__all__ = [  # this module's names and its parts' (importable from here as before)
    "CONTACT_COLUMNS",
    "IMPACTS_FILE",
    "IMPACT_COLUMNS",
    "PARENT_CHECK_S",
    "PERIOD_COLUMNS",
    "POINTS_PER_WORKER",
    "STOP_POLL_S",
    "SUMMARY_COLUMNS",
    "SUMMARY_FILE",
    "Axis",
    "Cell",
    "ContactNormals",
    "ImpactRecord",
    "PointResult",
    "PointTask",
    "Sweep",
    "SweepError",
    "SweepResult",
    "Value",
    "default_workers",
    "impact_state_columns",
    "one_blas_thread",
    "run_point",
    "sweep",
]


IMPACTS_FILE = "impacts.csv"


SUMMARY_COLUMNS = ("status", "t_end", "n_impacts", "t_zeno", "E_dissipated")


PERIOD_COLUMNS = ("period", "impacts_per_period", "period_s")
"""The last columns of ``summary.csv``, after ``message``."""


CONTACT_COLUMNS = ("contact_time", "peak_force", "impulse")
"""After the period columns, for a scene with compliant contacts only: the first contact's."""
"""Summary columns between the varied paths and the final state."""


IMPACT_COLUMNS = ("t", "body", "other", "u_n_minus", "u_n_plus", "impulse")
"""Impact columns between the varied paths and the impacting body's state."""


# ------------------------------------------------------------------------ axes


@dataclass(frozen=True)
class Axis:
    """The values one scene field takes in a sweep.

    Parameters
    ----------
    path : str
        The field, as :func:`solver.scene_paths.parse_path` reads it.
    values : tuple of float or str
        Its values, in the units of the scene file, in the order they run.
    """

    path: str
    values: tuple[Value, ...]

    @classmethod
    def linspace(cls, path: str, start: float, stop: float, count: int) -> Axis:
        """``count`` evenly spaced values from ``start`` to ``stop`` (both included).

        Raises
        ------
        SweepError
            If ``count < 1`` or an end is not finite.
        """
        if not (math.isfinite(start) and math.isfinite(stop)):
            raise SweepError(f"{path}: the range must have finite ends, got {start}:{stop}")
        if isinstance(count, bool) or int(count) != count or count < 1:
            raise SweepError(f"{path}: empty range: COUNT must be a whole number >= 1, got {count}")
        return cls(path, tuple(float(x) for x in np.linspace(start, stop, int(count))))

    @classmethod
    def logspace(cls, path: str, start: float, stop: float, count: int) -> Axis:
        """``count`` values from ``start`` to ``stop`` (both included, > 0), evenly spaced in log.

        ``1e3:1e9:13`` gives 1e3, 3.16e3, 1e4, … 1e9 (two a decade).

        Raises
        ------
        SweepError
            If ``count < 1``, an end is not finite or not positive.
        """
        if not (math.isfinite(start) and math.isfinite(stop)):
            raise SweepError(f"{path}: the range must have finite ends, got {start}:{stop}")
        if start <= 0.0 or stop <= 0.0:
            raise SweepError(f"{path}: a log range needs START and STOP > 0, got {start}:{stop}")
        if isinstance(count, bool) or int(count) != count or count < 1:
            raise SweepError(f"{path}: empty range: COUNT must be a whole number >= 1, got {count}")
        values = np.geomspace(start, stop, int(count))
        return cls(path, tuple(float(x) for x in values))

    @classmethod
    def parse(cls, text: str) -> Axis:
        """An axis from ``PATH=START:STOP:COUNT[:log]`` or ``PATH=V1,V2,…``.

        ``:log`` spaces the values evenly on a log scale (:meth:`logspace`).

        A value that reads as a number is a number; any other is kept as a
        string (``contact.impact_law=staged,sequential``).

        Raises
        ------
        SweepError
            Naming the path (or the text) and what is wrong with it.
        """
        path, sep, spec = text.partition("=")
        path = path.strip()
        if not sep or not path:
            raise SweepError(f"--vary {text}: write PATH=START:STOP:COUNT or PATH=V1,V2,...")
        spec = spec.strip()
        if not spec:
            raise SweepError(f"{path}: empty range: no values given")
        if ":" in spec:
            parts = spec.split(":")
            scale = "lin"
            if len(parts) == 4 and parts[3].strip() in ("lin", "log"):
                scale = parts.pop().strip()
            if len(parts) != 3:
                raise SweepError(
                    f"{path}: a range is START:STOP:COUNT or START:STOP:COUNT:log, got {spec!r}"
                )
            try:
                start, stop = float(parts[0]), float(parts[1])
            except ValueError:
                raise SweepError(f"{path}: START and STOP must be numbers, got {spec!r}") from None
            try:
                count = int(parts[2])
            except ValueError:
                raise SweepError(
                    f"{path}: empty range: COUNT must be a whole number >= 1, got {parts[2]!r}"
                ) from None
            if scale == "log":
                return cls.logspace(path, start, stop, count)
            return cls.linspace(path, start, stop, count)
        items = [item.strip() for item in spec.split(",")]
        if any(not item for item in items):
            raise SweepError(f"{path}: empty value in {spec!r}")
        return cls(path, tuple(_value(item) for item in items))


def _value(text: str) -> Value:
    try:
        number = float(text)
    except ValueError:
        return text
    return number if math.isfinite(number) else text


# -------------------------------------------------------------------- the plan


class Sweep:
    """A sweep, validated: its grid, the changed scene of every point, the table columns.

    Parameters
    ----------
    scene : Scene
        The scene every point starts from.
    axes : sequence of Axis
        The varied fields (at least one; each path at most once).
    t_end : float, optional
        End time of every run (s); default the scene's (or the varied) ``solver.t_end``.
    transient : float
        Impacts before this time (s) are left out of the impact table.
    method : {"event-driven", "time-stepping"}, optional
        Default the scene's ``solver.method``.
    dt_out : float, optional
        Output sample spacing of every run (s); default the scene's. A sweep
        keeps impacts and the final state, so ``dt_out = t_end`` saves the
        cost of samples nobody reads without changing them.

    Raises
    ------
    SweepError
        Before anything runs: an unknown path, a value some point's scene
        refuses, an empty range, a bad option — one line naming the path.

    Attributes
    ----------
    axes : tuple of Axis
    points : list of tuple
        The values of every point, in grid order.
    summary_columns, impact_columns : list of str
        Column names of the two tables.
    """

    def __init__(
        self,
        scene: Scene,
        axes: Sequence[Axis],
        *,
        t_end: float | None = None,
        transient: float = 0.0,
        method: str | None = None,
        dt_out: float | None = None,
    ) -> None:
        if not axes:
            raise SweepError("--vary: a sweep needs at least one varied field")
        paths = [axis.path for axis in axes]
        for path in paths:
            if paths.count(path) > 1:
                raise SweepError(f"{path}: varied twice")
        if t_end is not None and not (math.isfinite(t_end) and t_end > 0):
            raise SweepError(f"--t-end: must be > 0, got {t_end}")
        if not (math.isfinite(transient) and transient >= 0):
            raise SweepError(f"--transient: must be >= 0, got {transient}")
        if dt_out is not None and not (math.isfinite(dt_out) and dt_out > 0):
            raise SweepError(f"--dt-out: must be > 0, got {dt_out}")
        if method is not None and method not in METHODS:
            raise SweepError(f"--method: must be one of {', '.join(METHODS)}, got {method!r}")
        for axis in axes:
            if not axis.values:
                raise SweepError(f"{axis.path}: empty range: no values given")
            try:
                check_settable(scene, axis.path)
            except ScenePathError as error:
                raise SweepError(str(error)) from None
        self.scene = scene
        self.axes = tuple(axes)
        self.t_end = t_end
        self.transient = float(transient)
        self.method = method
        self.dt_out = dt_out
        self.points: list[tuple[Value, ...]] = list(product(*(axis.values for axis in axes)))
        self._scenes = [self._changed_scene(values) for values in self.points]
        system = System(scene)
        self.state_columns = trajectory_columns(system)[2 : -len(ENERGY_COLUMNS)]
        self.impact_state_columns = impact_state_columns(system)
        self.summary_columns = [
            "run",
            *paths,
            *SUMMARY_COLUMNS,
            *self.state_columns,
            "message",
            *PERIOD_COLUMNS,
            *(CONTACT_COLUMNS if scene.has_compliance else ()),
        ]
        self.impact_columns = ["run", *paths, *IMPACT_COLUMNS, *self.impact_state_columns]

    def _changed_scene(self, values: tuple[Value, ...]) -> dict[str, Any]:
        assignment = dict(zip((axis.path for axis in self.axes), values, strict=True))
        given = ", ".join(f"{path} = {value!r}" for path, value in assignment.items())
        try:
            scene = with_values(self.scene, assignment)
        except SceneError as error:
            problem = error.problems[0]
            if problem.startswith(tuple(f"{path}:" for path in assignment)):
                raise SweepError(problem) from None
            raise SweepError(f"{given}: the scene refuses it: {problem}") from None
        settings = scene.solver
        t_end = settings.t_end if self.t_end is None else self.t_end
        method = settings.method if self.method is None else self.method
        dt_out = settings.dt_out if self.dt_out is None else self.dt_out
        for key, problem in run_size_problems(t_end, dt_out, settings.dt, method):
            raise SweepError(f"solver.{key} at {given}: {problem}")
        return scene_to_dict(scene)

    def __len__(self) -> int:
        """Number of points."""
        return len(self.points)

    def point_scene(self, run: int) -> Scene:
        """The scene of point ``run`` (grid order, from 0): the base scene with its values."""
        return parse_scene(self._scenes[run])

    def task(self, run: int) -> PointTask:
        """The task of point ``run`` (grid order, from 0)."""
        return PointTask(
            run=run,
            values=self.points[run],
            scene=self._scenes[run],
            t_end=self.t_end,
            method=self.method,
            dt_out=self.dt_out,
            transient=self.transient,
        )

    @contextmanager
    def results(
        self,
        workers: int | None = None,
        scheduler: str | None = None,
        stop: threading.Event | None = None,
    ) -> Iterator[Iterator[PointResult]]:
        """Run every point; yields an iterator of :class:`PointResult` in completion order.

        Parameters
        ----------
        workers : int, optional
            Processes of the local pool; default the number of cores this
            process may use. Ignored with ``scheduler``.
        scheduler : str, optional
            Address of a running Dask distributed scheduler
            (``tcp://HOST:PORT``): the points run on its cluster instead.
        stop : threading.Event, optional
            Set from another thread (an app's cancel button), it ends the
            iteration within ``STOP_POLL_S`` seconds, even while no point
            finishes.

        Notes
        -----
        Leaving the ``with`` block (normally, by ``break``, by an exception
        or by ``KeyboardInterrupt``) cancels the points not yet done and
        stops the workers. Workers ignore SIGINT: Ctrl-C reaches the caller
        only. A point lost with its worker (a killed process) is a ``failed``
        point with the reason.

        Raises
        ------
        SweepError
            Dask is not installed, or the scheduler cannot be reached.
        """
        runner = _DaskRunner(scheduler) if scheduler else _PoolRunner(workers)
        try:
            yield runner.run(
                [self.task(run) for run in range(len(self))], stop or threading.Event()
            )
        finally:
            runner.stop()

    def run(
        self,
        workers: int | None = None,
        scheduler: str | None = None,
        on_point: Callable[[PointResult, int, int], None] | None = None,
    ) -> SweepResult:
        """Run every point and return the tables.

        ``on_point(point, done, total)`` is called in this thread as each
        point finishes. On ``KeyboardInterrupt`` the points finished so far
        are kept: the exception carries them as ``partial`` (a
        :class:`SweepResult`) before it propagates.
        """
        result = SweepResult(self)
        try:
            with self.results(workers, scheduler) as points:
                for point in points:
                    result.add(point)
                    if on_point is not None:
                        on_point(point, len(result.points), len(self))
        except KeyboardInterrupt as interrupt:
            interrupt.partial = result  # type: ignore[attr-defined]
            raise
        return result


@dataclass
class SweepResult:
    """The points of a sweep finished so far, kept in grid order.

    ``summary_rows()`` and ``impact_rows()`` give the tables as lists of
    cells (``None`` for an empty field), with the columns
    ``summary_columns`` and ``impact_columns``; :meth:`write_csv` writes them.
    """

    sweep: Sweep
    by_run: dict[int, PointResult] = field(default_factory=dict)

    @property
    def summary_columns(self) -> list[str]:
        return self.sweep.summary_columns

    @property
    def impact_columns(self) -> list[str]:
        return self.sweep.impact_columns

    @property
    def points(self) -> list[PointResult]:
        """The finished points in grid order."""
        return [self.by_run[run] for run in sorted(self.by_run)]

    @property
    def complete(self) -> bool:
        """Whether every point of the sweep has a result."""
        return len(self.by_run) == len(self.sweep)

    def add(self, point: PointResult) -> None:
        """Keep one point's result."""
        self.by_run[point.run] = point

    def summary_rows(self) -> list[list[Cell]]:
        """One row per finished point, in grid order."""
        return [point.summary_row() for point in self.points]

    def impact_rows(self) -> list[list[Cell]]:
        """One row per impact after the transient, by point in grid order, then time."""
        return [row for point in self.points for row in point.impact_rows()]

    def write_csv(self, out_dir: str | os.PathLike[str]) -> dict[str, Path]:
        """Write ``summary.csv`` and ``impacts.csv`` into ``out_dir`` (created if missing).

        Each file is written to a temporary name and renamed: a reader sees
        the old file or the complete new one. Returns ``{"summary": path,
        "impacts": path}``.
        """
        directory = Path(out_dir)
        directory.mkdir(parents=True, exist_ok=True)
        paths = {"summary": directory / SUMMARY_FILE, "impacts": directory / IMPACTS_FILE}
        write_csv_atomic(paths["summary"], self.summary_columns, map(_cells, self.summary_rows()))
        write_csv_atomic(paths["impacts"], self.impact_columns, map(_cells, self.impact_rows()))
        return paths


def _cells(row: list[Cell]) -> list[str]:
    return [_text(cell) for cell in row]


def _text(cell: Cell) -> str:
    if cell is None:
        return ""
    if isinstance(cell, float):
        return repr(cell)
    return str(cell)


def sweep(
    scene: Scene,
    axes: Sequence[Axis] | Mapping[str, Sequence[Value]],
    *,
    t_end: float | None = None,
    transient: float = 0.0,
    method: str | None = None,
    dt_out: float | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    on_point: Callable[[PointResult, int, int], None] | None = None,
) -> SweepResult:
    """Run ``scene`` over a grid of field values; the Python API of ``python -m solver sweep``.

    Parameters
    ----------
    scene : Scene
        The scene every point starts from.
    axes : sequence of Axis, or mapping of path to values
        The varied fields and their values (grid = product, in the order given).
    t_end, transient, method, dt_out
        As for :class:`Sweep`.
    workers, scheduler
        As for :meth:`Sweep.results`.
    on_point : callable, optional
        ``on_point(point, done, total)`` after each point.

    Returns
    -------
    SweepResult
        Both tables, in grid order.

    Raises
    ------
    SweepError
        The sweep is refused (before anything runs).
    """
    if isinstance(axes, Mapping):
        axes = [Axis(path, tuple(values)) for path, values in axes.items()]
    plan = Sweep(scene, axes, t_end=t_end, transient=transient, method=method, dt_out=dt_out)
    return plan.run(workers=workers, scheduler=scheduler, on_point=on_point)
