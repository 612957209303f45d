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
import multiprocessing
import os
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice, product
from multiprocessing import forkserver
from pathlib import Path
from typing import Any

import numpy as np

from solver.contact_pairs import continued_nearest
from solver.errors import InputError, SolverError
from solver.frames import Event, Frame
from solver.geometry import disk_contact_from_nearest, disk_disk_contact
from solver.impact_period import NO_PERIOD, ImpactPeriod, forcing_period, impact_period
from solver.record import ENERGY_COLUMNS, trajectory_columns, write_csv_atomic
from solver.scene import Scene, SceneError, parse_scene, run_size_problems, scene_to_dict
from solver.scene_paths import ScenePathError, check_settable, with_values
from solver.simulation import METHODS, Watchdog, make_stepper, one_blas_thread
from solver.stages import normal_speeds
from solver.system import Contact, System

SUMMARY_FILE = "summary.csv"
IMPACTS_FILE = "impacts.csv"
SUMMARY_COLUMNS = ("status", "t_end", "n_impacts", "t_zeno", "E_dissipated")
PERIOD_COLUMNS = ("period", "impacts_per_period", "period_s")
"""The last columns of ``summary.csv``, after ``message``."""
CONTACT_COLUMNS = ("contact_time", "peak_force", "impulse")
"""After the period columns, for a scene with compliant contacts only: the first contact's."""
"""Summary columns between the varied paths and the final state."""
IMPACT_COLUMNS = ("t", "body", "other", "u_n_minus", "u_n_plus", "impulse")
"""Impact columns between the varied paths and the impacting body's state."""

Value = float | str
"""A value given to a scene field: a number, or a string (``contact.impact_law``)."""
Cell = float | int | str | None
"""One cell of a table: ``None`` is an empty CSV field."""


class SweepError(InputError):
    """A sweep is refused before anything runs; ``str(error)`` is one line naming the path."""


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


# --------------------------------------------------------------- one point


@dataclass(frozen=True)
class PointTask:
    """Everything a worker needs to run one point (plain data: it is pickled).

    ``scene`` is the changed scene as a JSON object.
    """

    run: int
    values: tuple[Value, ...]
    scene: dict[str, Any]
    t_end: float | None
    method: str | None
    transient: float
    dt_out: float | None = None


@dataclass(frozen=True)
class ImpactRecord:
    """One impact of a point: time (s), contact, normal speeds (m/s), impulse (N·s), state.

    ``u_n_minus`` / ``u_n_plus`` are ``None`` when the contact has no normal
    (an axle cart's impulse); ``state`` is the impacting body's state just before, in
    the order of :attr:`SweepResult.impact_state_columns` (``None`` where
    the body has no such coordinate).
    """

    t: float
    body: str
    other: str
    u_n_minus: float | None
    u_n_plus: float | None
    impulse: float
    state: tuple[float | None, ...]


@dataclass(frozen=True)
class PointResult:
    """What one point of a sweep gave.

    Attributes
    ----------
    run : int
        Index of the point in grid order (from 0).
    values : tuple of float or str
        The values of the varied fields, in axis order.
    status : str
        ``"finished"`` or ``"failed"``.
    t_end : float
        Time the run reached (s).
    n_impacts : int
        ``impact`` events of the whole run.
    t_zeno : float or None
        Time of the first ``zeno`` event (s), if any.
    E_dissipated : float or None
        Energy dissipated by the end (J); ``None`` if no frame was computed.
    final_state : tuple of float
        ``[q, v]`` at the end in the columns of ``trajectory.csv`` (empty if no frame).
    message : str
        The solver's message (why it failed, or how it finished).
    impacts : tuple of ImpactRecord
        The impacts at ``t >= transient``.
    period : solver.impact_period.ImpactPeriod
        The period of those impacts (forcing periods, impacts per period, s).
    contact : tuple or None
        ``(contact_time, peak_force, impulse)`` of the first compliant
        contact (``None`` cells if none ended); ``None`` for a rigid scene.
    """

    run: int
    values: tuple[Value, ...]
    status: str
    t_end: float
    n_impacts: int
    t_zeno: float | None
    E_dissipated: float | None
    final_state: tuple[float, ...]
    message: str
    impacts: tuple[ImpactRecord, ...] = ()
    period: ImpactPeriod = NO_PERIOD
    contact: tuple[Cell, ...] | None = None

    def summary_row(self) -> list[Cell]:
        """The point's row of ``summary.csv`` (columns :attr:`SweepResult.summary_columns`)."""
        return [
            self.run,
            *self.values,
            self.status,
            self.t_end,
            self.n_impacts,
            self.t_zeno,
            self.E_dissipated,
            *self.final_state,
            self.message,
            self.period.period,
            self.period.impacts_per_period,
            self.period.seconds,
            *(self.contact or ()),
        ]

    def impact_rows(self) -> list[list[Cell]]:
        """The point's rows of ``impacts.csv`` (columns :attr:`SweepResult.impact_columns`)."""
        return [
            [
                self.run,
                *self.values,
                impact.t,
                impact.body,
                impact.other,
                impact.u_n_minus,
                impact.u_n_plus,
                impact.impulse,
                *impact.state,
            ]
            for impact in self.impacts
        ]


def _state_names(system: System) -> tuple[list[str], list[str]]:
    coords: list[str] = []
    rates: list[str] = []
    for _body, coord_names, rate_names in system.dof_labels:
        coords += [name for name in coord_names if name not in coords]
        rates += [name for name in rate_names if name not in rates]
    return coords, rates


def impact_state_columns(system: System) -> list[str]:
    """Names of the impacting body's state columns for a scene's bodies.

    The coordinates any body has, then its rates, in the order the system
    lists them: ``x,y,phi,vx,vy,omega`` with a wheel, ``x,vx`` for beads only.
    """
    coords, rates = _state_names(system)
    return coords + rates


class _BodyStates:
    """Where each body's coordinates and rates sit in ``q``, ``v`` and the state columns."""

    def __init__(self, system: System) -> None:
        coords, rates = _state_names(system)
        self.columns = coords + rates
        self._slots: dict[str, list[tuple[int, bool, int]]] = {}
        q_start = v_start = 0
        for body, coord_names, rate_names in system.dof_labels:
            slots = [(coords.index(name), True, q_start + k) for k, name in enumerate(coord_names)]
            slots += [
                (len(coords) + rates.index(name), False, v_start + k)
                for k, name in enumerate(rate_names)
            ]
            self._slots[body] = slots
            q_start += len(coord_names)
            v_start += len(rate_names)

    def state(self, body: str, q: np.ndarray, v: np.ndarray) -> tuple[float | None, ...]:
        """``body``'s cells of the state columns (``None`` where it has no such coordinate)."""
        cells: list[float | None] = [None] * len(self.columns)
        for column, is_coordinate, index in self._slots.get(body, []):
            cells[column] = float(q[index] if is_coordinate else v[index])
        return tuple(cells)


class ContactNormals:
    """Normal speeds of impacts recorded without their contact's Jacobian (time-stepping).

    The time-stepping method records an impact's generalized velocities just
    before and after (``Event.v_minus``, ``Event.v_plus``) and its contact by
    name (``body``, ``other``), not the contact's normal. The normal is that
    of the contact's geometry at the impact's position — the one the step
    resolved the impact on — so ``u_n = G·v`` with its Jacobian ``G``.
    """

    def __init__(self, system: System) -> None:
        self._system = system
        self._features = {fid: feature for fid, feature, _e, _mu in system.features}

    def speeds(self, event: Event, q: np.ndarray) -> tuple[float, float] | None:
        """``(u_n_minus, u_n_plus)`` (m/s, positive when approaching / separating) of ``event``.

        Parameters
        ----------
        event : Event
            An ``impact`` event with ``v_minus`` and ``v_plus``.
        q : numpy.ndarray
            Generalized coordinates at the impact.

        Returns
        -------
        tuple of float, or None
            ``None`` when the event has no velocities or the contact no
            normal (a body that is not a disk, centres that coincide).
        """
        if event.v_minus is None or event.v_plus is None:
            return None
        contact = self._contact(event.body, event.other, q)
        if contact is None:
            return None
        u_minus = float(contact.G_local @ event.v_minus[contact.dofs])
        u_plus = float(contact.G_local @ event.v_plus[contact.dofs])
        return -u_minus, u_plus

    def _contact(self, body: str, other: str, q: np.ndarray) -> Contact | None:
        system = self._system
        try:
            i = system.disk_index(body)
        except KeyError:
            return None
        centres = system.centres(q)
        still = np.zeros(2)  # the speeds come from v_minus and v_plus, not from here
        feature = self._features.get(other)
        if feature is not None:
            near = feature.nearest(centres[i])
            if near is None:  # a centre on a corner, or past a segment's end by round-off
                try:
                    near = continued_nearest(feature, centres[i])
                except SolverError:
                    return None
            contact = disk_contact_from_nearest(near, still, system.radii[i], 0.0)
            return system.generalize((body, other), body, other, contact, i, None, 0.0, 0.0)
        try:
            j = system.disk_index(other)
        except KeyError:
            return None
        pair = disk_disk_contact(
            centres[i], still, system.radii[i], 0.0, centres[j], still, system.radii[j], 0.0
        )
        if pair is None:
            return None
        return system.generalize((body, other), body, other, pair, i, j, 0.0, 0.0)


def run_point(task: PointTask) -> PointResult:
    """Run one point of a sweep to its end (or failure); never raises.

    An exception the stepper does not turn into a failure (a bug, a
    scene that fails to compile) gives a ``failed`` point with its message.
    """
    t_reached = 0.0
    n_impacts = 0
    t_zeno: float | None = None
    impacts: list[ImpactRecord] = []
    last: Frame | None = None
    status, message = "failed", ""
    compliant = False
    touched: dict[tuple[str, str], float] = {}
    contact: tuple[Cell, ...] | None = None
    try:
        scene = parse_scene(task.scene)
        if scene.has_compliance:  # the first compliant contact's measures (CONTACT_COLUMNS)
            compliant, contact = True, (None, None, None)
        stepper = make_stepper(scene, t_end=task.t_end, method=task.method, dt_out=task.dt_out)
        watchdog = Watchdog()
        bodies = _BodyStates(stepper.system)
        normals = ContactNormals(stepper.system)
        while stepper.status == "running":
            out = stepper.step()
            pre = {frame.t: frame for frame in out.frames if frame.kind == "pre"}
            for event in out.events:
                if event.type == "zeno" and t_zeno is None:
                    t_zeno = event.t
                if compliant and event.type == "touch":
                    touched.setdefault((event.body, event.other), event.t)
                if compliant and event.type == "release" and contact == (None, None, None):
                    t_touch = touched.get((event.body, event.other))
                    if t_touch is not None:
                        contact = (
                            float(event.t - t_touch),
                            float(event.peak_force),
                            float(event.normal_impulse),
                        )
                if event.type != "impact":
                    continue
                n_impacts += 1
                if event.t >= task.transient:
                    before = pre.get(event.t) or last or (out.frames[0] if out.frames else None)
                    impacts.append(_impact_record(event, before, bodies, normals))
            if out.frames:
                last = out.frames[-1]
            t_reached = stepper.t
            watchdog.check(t_reached)
        status, message = stepper.status, stepper.message
    except SolverError as error:  # a stall the watchdog saw
        message = str(error)
    except Exception as error:  # a point never stops the sweep: it fails with the reason
        message = f"internal error ({type(error).__name__}: {error})"
    return PointResult(
        run=task.run,
        values=task.values,
        status="finished" if status == "finished" else "failed",
        t_end=float(t_reached),
        n_impacts=n_impacts,
        t_zeno=t_zeno,
        E_dissipated=None if last is None else float(last.energy.dissipated),
        final_state=() if last is None else _trajectory_state(stepper.system, last),
        message=message,
        impacts=tuple(impacts),
        period=impact_period(
            [impact.t for impact in impacts],
            [(impact.body, impact.other) for impact in impacts],
            [impact.u_n_minus for impact in impacts],
            forcing_period(task.scene),
        ),
        contact=contact,
    )


def _impact_record(
    event: Event, before: Frame | None, bodies: _BodyStates, normals: ContactNormals
) -> ImpactRecord:
    speeds = normal_speeds(event)
    if before is None:
        state: tuple[float | None, ...] = (None,) * len(bodies.columns)
    else:
        v = event.v_minus if event.v_minus is not None else before.v
        state = bodies.state(event.body, before.q, v)
        if speeds is None:
            speeds = normals.speeds(event, before.q)
    return ImpactRecord(
        t=float(event.t),
        body=event.body,
        other=event.other,
        u_n_minus=None if speeds is None else speeds[0],
        u_n_plus=None if speeds is None else speeds[1],
        impulse=float(event.normal_impulse),
        state=state,
    )


def _trajectory_state(system: System, frame: Frame) -> tuple[float, ...]:
    """``frame``'s state in the column order of ``trajectory.csv``."""
    cells: list[float] = []
    q_start = v_start = 0
    for _body, coord_names, rate_names in system.dof_labels:
        cells += [float(x) for x in frame.q[q_start : q_start + len(coord_names)]]
        cells += [float(x) for x in frame.v[v_start : v_start + len(rate_names)]]
        q_start += len(coord_names)
        v_start += len(rate_names)
    return tuple(cells)


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


# -------------------------------------------------------------------- runners


def default_workers() -> int:
    """The number of cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


PARENT_CHECK_S = 1.0
"""How often a pool worker checks that the process running the sweep still exists, s."""


def _start_worker(sweep_pid: int) -> None:
    """Pool worker start-up: Ctrl-C is the parent's to handle; end with the sweep.

    A sweep killed outright (SIGKILL, a crash) cannot stop its workers, and
    they would finish their points for nobody (the pool's fork server keeps
    them alive): each worker ends itself within ``PARENT_CHECK_S`` of the
    process that ran the sweep.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_end_with, args=(sweep_pid,), daemon=True).start()
    one_blas_thread()


def _end_with(pid: int) -> None:
    while True:
        time.sleep(PARENT_CHECK_S)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            os._exit(1)
        except PermissionError:
            continue


def _lost(task: PointTask, reason: str) -> PointResult:
    return PointResult(
        run=task.run,
        values=task.values,
        status="failed",
        t_end=0.0,
        n_impacts=0,
        t_zeno=None,
        E_dissipated=None,
        final_state=(),
        message=f"the worker running this point was lost: {reason}",
    )


STOP_POLL_S = 0.05
"""How often a running sweep looks at its ``stop`` event while no point finishes, s."""
POINTS_PER_WORKER = 2
"""Points handed to the pool at a time, per worker: each worker has its next point
waiting, and an interrupted sweep has only these few to abandon."""


def _start_fork_server() -> None:
    """Start the pool's fork server (once per process) deaf to Ctrl-C.

    Ctrl-C on a terminal signals every process of the foreground group, the
    pool's included. Workers ignore it once started (``_start_worker``), but
    the fork server that forks them spends seconds importing the solver
    first, and a Ctrl-C then would end it with a traceback. An ignored
    signal stays ignored in a started program (a blocked one does not:
    the start unblocks it), so the server is started with SIGINT ignored;
    its workers inherit that. Only the main thread may change it; the
    server starts in a few milliseconds, and a Ctrl-C within them is lost.
    """
    if threading.current_thread() is not threading.main_thread():
        forkserver.ensure_running()
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        forkserver.ensure_running()
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def _ctrl_c_deferred() -> Iterator[None]:
    """Hold a Ctrl-C (SIGINT) that comes within the block until its end.

    Submitting a point may start a worker; a Ctrl-C in the middle of that
    leaves a process the pool does not know of, which no one stops. The
    signal is raised again once the block is done. Outside the main thread
    signals cannot be handled, and nothing is held.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, _frame: came.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if came:
            signal.raise_signal(signal.SIGINT)


class _PoolRunner:
    """Points on a local ``ProcessPoolExecutor`` (forkserver processes: safe beside threads).

    At most ``POINTS_PER_WORKER`` points per worker are submitted at a time,
    the next ones as points finish: stopping early has only those to abandon,
    and their processes are ended at once instead of finishing them.
    """

    def __init__(self, workers: int | None) -> None:
        if workers is not None and workers < 1:
            raise SweepError(f"--workers: must be >= 1, got {workers}")
        self._workers = workers or default_workers()
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["solver.sweep_preload"])
        _start_fork_server()
        self._executor = ProcessPoolExecutor(
            max_workers=self._workers,
            mp_context=context,
            initializer=_start_worker,
            initargs=(os.getpid(),),
        )
        self._submitted: dict[Future[PointResult], PointTask] = {}

    def run(self, tasks: list[PointTask], stop: threading.Event) -> Iterator[PointResult]:
        waiting = iter(tasks)
        self._submit(waiting)
        while self._submitted and not stop.is_set():
            done, _ = wait(self._submitted, timeout=STOP_POLL_S, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: self._submitted[f].run):
                error = future.exception()
                yield _lost(self._submitted[future], str(error)) if error else future.result()
                del self._submitted[future]  # only once the caller has the point
            self._submit(waiting)

    def _submit(self, waiting: Iterator[PointTask]) -> None:
        with _ctrl_c_deferred():
            for task in islice(waiting, POINTS_PER_WORKER * self._workers - len(self._submitted)):
                self._submitted[self._executor.submit(run_point, task)] = task

    def stop(self) -> None:
        """Abandon the points not done: end the workers now, then the pool.

        No future is cancelled here: the pool's own thread marks the
        abandoned ones (cancelling them from this thread as well makes that
        thread fail on a cancelled future when it finds the workers gone).
        """
        if any(not future.done() for future in self._submitted):
            for process in list((getattr(self._executor, "_processes", None) or {}).values()):
                process.terminate()
        self._executor.shutdown(wait=True, cancel_futures=True)


class _DaskRunner:
    """Points on a Dask distributed cluster (``pip install impactgui[cluster]``)."""

    def __init__(self, address: str) -> None:
        try:
            from distributed import Client
        except ImportError:
            raise SweepError(
                "--scheduler: needs Dask distributed (pip install impactgui[cluster])"
            ) from None
        try:
            self._client = Client(address, timeout="10s", set_as_default=False)
        except (OSError, TimeoutError, ValueError) as error:
            raise SweepError(f"--scheduler: cannot reach {address}: {error}") from None
        self._futures: list[Any] = []

    def run(self, tasks: list[PointTask], stop: threading.Event) -> Iterator[PointResult]:
        from distributed import as_completed

        token = uuid.uuid4().hex[:12]
        owner = {}
        for task in tasks:
            future = self._client.submit(
                run_point, task, key=f"impactgui-point-{token}-{task.run}", pure=False
            )
            owner[future.key] = task
            self._futures.append(future)
        finished = as_completed(self._futures, loop=self._client.loop)
        while not finished.is_empty() and not stop.is_set():
            if not finished.has_ready():
                stop.wait(STOP_POLL_S)
                continue
            for future in finished.next_batch(block=False):
                task = owner[future.key]
                if future.status == "finished":
                    yield future.result()
                else:
                    yield _lost(task, f"{future.status}: {future.exception()}")

    def stop(self) -> None:
        unfinished = [future for future in self._futures if not future.done()]
        if unfinished:
            self._client.cancel(unfinished)
        self._client.close()
