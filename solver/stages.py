"""The stages of an impact as a run records them, and ``stages.csv``.

An impact law resolves a multi-contact impact in stages (paper 000 §3: a
plastic phase, then a restitution phase, repeated until nothing approaches;
``sequential`` takes one collision per stage). The event-driven stepper keeps
each law's stages with the ``impact`` event of every contact that took part
(:attr:`solver.frames.Event.impact_stages`: an :class:`ImpactStages` per
event, or one :class:`SharedImpactStages` for the events of an impact of many
beads on a rail); this module reads them back:

* :func:`normal_speeds` — the contact's normal approach speed before the
  impact and separation speed after it (m/s);
* :func:`stage_rows` — per stage, the contact's share of the impulse and the
  whole system's velocity after the stage;
* :func:`impact_jacobian` — the normal Jacobian of all the contacts of an
  impact, one column per contact (for :mod:`solver.impact_family`);
* :func:`write_stages_csv` — ``stages.csv`` beside ``events.csv``.

``stages.csv`` has one row per stage of every ``impact`` row of
``events.csv``: ``event`` (the row's index in ``events.csv``, from 0), ``t``
(s), ``stage`` (from 1), ``body``, ``other``, ``normal_impulse`` and
``tangent_impulse`` of the stage on that contact (N·s; over the stages they
sum to the event's impulses), then the generalized velocities after the
stage with the rate columns of ``trajectory.csv`` (``ID.vx``, …), then — as
paper 000's tables print a stage — ``lambda_k``, the contact's plastic-phase
multiplier ``λ^(k)`` of the stage (N·s; the stage's impulse on the contact is
``(1 + e) λ^(k)``), the velocity ``y_k`` at the start of the stage (``y.ID.vx``,
…) and the velocity ``w_k`` after its plastic phase (``w.ID.vx``, …). An
impact recorded without stages (time-stepping) has one row: the whole impact,
with ``y`` the velocity before it and ``lambda_k`` and ``w`` empty.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from solver.atomic_file import atomic_write
from solver.frames import Event, _quick_init

if TYPE_CHECKING:
    from solver.impact import ImpactStage
    from solver.system import System


class RecordedRun(Protocol):
    """What :func:`write_stages_csv` reads of a run (a :class:`solver.record.Trajectory`)."""

    system: System
    events: list[Event]


STAGES_FILE = "stages.csv"
STAGE_COLUMNS = ("event", "t", "stage", "body", "other", "normal_impulse", "tangent_impulse")
"""Leading columns of ``stages.csv``; the velocity columns of the system follow."""


@_quick_init
@dataclass(frozen=True, eq=False, slots=True)
class ImpactStages:
    """One contact's part in one impact, as the impact law computed it.

    Attributes
    ----------
    dofs : (k,) int ndarray
        The generalized coordinates the contact touches.
    G_local : (k,) ndarray
        Its normal Jacobian there: ``u_n = G_local · v[dofs]`` (m/s, > 0 separating).
    column : int
        The contact's column among the constraints the law resolved together.
    stages : sequence of solver.impact.ImpactStage
        The law's stages (shared by the events of all contacts of the impact).
    """

    dofs: np.ndarray
    G_local: np.ndarray
    column: int
    stages: Sequence[ImpactStage]


class SharedImpactStages:
    """The stages of one impact of many contacts, one record for the events of all of them.

    A struck chain of 10⁴ beads writes an ``impact`` event per collision;
    an :class:`ImpactStages` per event is an object per bead that lives as
    long as the run's output (and that the garbage collector walks). Here
    the contacts' Jacobian rows are kept as arrays, and an event's
    :class:`ImpactStages` is made when it is read (:meth:`of`), its column
    found by the event's ``body`` and ``other``.

    Parameters
    ----------
    contacts : solver.contact_pairs.RailContacts
        The impact's contacts as arrays (``dofs``, ``G_local`` of shape
        (K, w), ``keys(rows)`` the ``(body, other)`` of rows).
    stages : sequence of solver.impact.ImpactStage
        The law's stages.
    """

    def __init__(self, contacts: Any, stages: Sequence[ImpactStage]) -> None:
        self.contacts = contacts
        self.stages = stages
        self._columns: dict[tuple[str, str], int] | None = None

    def of(self, event: Event) -> ImpactStages:
        """The :class:`ImpactStages` of ``event``'s contact."""
        if self._columns is None:
            keys = self.contacts.keys(np.arange(len(self.contacts)))
            self._columns = {key: k for k, key in enumerate(keys)}
        k = self._columns[(event.body, event.other)]
        return ImpactStages(self.contacts.dofs[k], self.contacts.G_local[k], k, self.stages)


def _record(event: Event) -> ImpactStages | None:
    """The event's :class:`ImpactStages` (made from a shared record if need be), or None."""
    record = event.impact_stages
    if isinstance(record, SharedImpactStages):
        return record.of(event)
    return record


@dataclass(frozen=True)
class StageRow:
    """One stage of one contact's impact.

    ``stage`` counts from 1; ``normal_impulse`` and ``tangent_impulse`` (N·s)
    are what this contact took in the stage; ``v_after`` is the generalized
    velocity of the whole system after the stage (system layout). As paper
    000 (10)–(14) name them: ``lam`` is the contact's plastic-phase multiplier
    ``λ^(k)`` (N·s), ``y`` the system's velocity at the start of the stage
    (``y_k``) and ``w`` after its plastic phase (``w_k``); ``None`` where the
    impact was recorded without stages (``y`` is then the velocity before it).
    """

    stage: int
    normal_impulse: float
    tangent_impulse: float
    v_after: np.ndarray
    lam: float | None = None
    y: np.ndarray | None = None
    w: np.ndarray | None = None


def normal_speeds(event: Event) -> tuple[float, float] | None:
    """The contact's approach speed before and separation speed after an impact (m/s).

    Returns ``(u_n_minus, u_n_plus)``, both positive for an impact that
    rebounds (``u_n_plus = e · u_n_minus`` for one frictionless contact), or
    ``None`` when the event carries no contact Jacobian (not an impact, or an
    impact of the time-stepping method).
    """
    record = _record(event)
    if record is None or event.v_minus is None or event.v_plus is None:
        return None
    u_minus = float(record.G_local @ event.v_minus[record.dofs])
    u_plus = float(record.G_local @ event.v_plus[record.dofs])
    return -u_minus, u_plus


def stage_rows(event: Event) -> list[StageRow]:
    """The stages of an ``impact`` event on its contact, in order.

    The normal impulse of each stage is the event's ``normal_impulse`` split
    in proportion to the contact's plastic multipliers ``λ^(k)`` (every law
    scales a stage's multiplier by the same factor per contact: ``1 + e`` or
    1), so the rows sum to the event's impulse. An impact without recorded
    stages gives one row: the whole impact.
    """
    record = _record(event)
    if record is None or not len(record.stages):
        v_after = event.v_plus if event.v_plus is not None else np.empty(0)
        y = None if event.v_minus is None else np.asarray(event.v_minus, dtype=float)
        return [StageRow(1, event.normal_impulse, event.tangent_impulse, v_after, y=y)]
    stages = record.stages
    lam = np.array([float(stage.lam[record.column]) for stage in stages])
    total = float(lam.sum())
    shares = lam / total if total > 0.0 else np.zeros(len(lam))
    rows = []
    for k, stage in enumerate(stages):
        v_after = stages[k + 1].y if k + 1 < len(stages) else event.v_plus
        rows.append(
            StageRow(
                stage=k + 1,
                normal_impulse=event.normal_impulse * float(shares[k]),
                tangent_impulse=float(stage.tangent_impulse[record.column]),
                v_after=np.asarray(v_after, dtype=float),
                lam=float(lam[k]),
                y=np.asarray(stage.y, dtype=float),
                w=np.asarray(stage.w, dtype=float),
            )
        )
    return rows


def impact_contacts(event: Event) -> int:
    """How many contacts the impact of ``event`` resolved together (1 without stages)."""
    record = _record(event)
    if record is None or not len(record.stages):
        return 1
    return len(record.stages[0].lam)


def impact_jacobian(event: Event, events: Iterable[Event], size: int) -> np.ndarray | None:
    """The normal Jacobian ``G`` (``size`` × n) of the whole impact ``event`` belongs to.

    ``events`` are the run's events; those sharing ``event``'s stages (the
    contacts resolved together with it, at its instant) give one column each,
    at their column of the impact law (``Gᵀv`` are their normal speeds).
    None when ``event`` has no recorded stages (time-stepping).
    """
    record = _record(event)
    if record is None or not len(record.stages):
        return None
    n = len(record.stages[0].lam)
    G = np.zeros((size, n))
    for other in events:
        if other.type != "impact" or other.t != event.t:
            continue
        theirs = _record(other)
        if theirs is None or theirs.stages is not record.stages:
            continue
        G[theirs.dofs, theirs.column] = theirs.G_local
    return G


def velocity_columns(system: System) -> list[str]:
    """The rate columns of ``trajectory.csv`` (``ID.vx``, ``ID.omega``, …) in system order."""
    return [
        f"{body_id}.{name}"
        for body_id, _coords, rate_names in system.dof_labels
        for name in rate_names
    ]


def _number(x: float) -> str:
    return repr(float(x))


def stage_columns(system: System) -> list[str]:
    """The header of ``stages.csv`` for ``system``."""
    rates = velocity_columns(system)
    return [
        *STAGE_COLUMNS,
        *rates,
        "lambda_k",
        *(f"y.{name}" for name in rates),
        *(f"w.{name}" for name in rates),
    ]


def _numbers(values: np.ndarray | None, count: int) -> list[str]:
    if values is None or len(values) != count:
        return [""] * count
    return [_number(x) for x in values]


def _rows(events: Iterable[Event], count: int) -> Iterator[list[str]]:
    for index, event in enumerate(events):
        if event.type != "impact":
            continue
        for row in stage_rows(event):
            yield [
                str(index),
                _number(event.t),
                str(row.stage),
                event.body,
                event.other,
                _number(row.normal_impulse),
                _number(row.tangent_impulse),
                *(_number(x) for x in row.v_after),
                "" if row.lam is None else _number(row.lam),
                *_numbers(row.y, count),
                *_numbers(row.w, count),
            ]


def write_stages_csv(trajectory: RecordedRun, path: Path) -> None:
    """Write the stages of every impact of ``trajectory`` to ``path``, atomically.

    Parameters
    ----------
    trajectory : RecordedRun
        A recorded run (a :class:`solver.record.Trajectory`) with its ``system``
        (which names the velocity columns).
    path : Path
        The file to write (``DIR/stages.csv`` beside ``events.csv``).
    """
    with atomic_write(path, newline="") as stream:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(stage_columns(trajectory.system))
        writer.writerows(_rows(trajectory.events, len(velocity_columns(trajectory.system))))
