"""One point of a sweep (:mod:`solver.sweep`): the scene run with its values set, its summary
row, its impacts with the system's state and the contact normals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from solver.errors import InputError, SolverError
from solver.feature_regions import continued_nearest
from solver.frames import Event, Frame
from solver.geometry import disk_contact_from_nearest, disk_disk_contact
from solver.impact_period import NO_PERIOD, ImpactPeriod, forcing_period, impact_period
from solver.scene import parse_scene
from solver.simulation import Watchdog, make_stepper
from solver.stages import normal_speeds
from solver.system import Contact, System

Value = float | str
"""A value given to a scene field: a number, or a string (``contact.impact_law``)."""


Cell = float | int | str | None
"""One cell of a table: ``None`` is an empty CSV field."""


class SweepError(InputError):
    """A sweep is refused before anything runs; ``str(error)`` is one line naming the path."""


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
