"""What every part of the event-driven stepper shares: the run's setup and the motion's state.

:class:`Setup` is fixed for a run (the compiled scene, its tolerances and the
constants derived from it); :class:`MotionState` is the one mutable record
of where the motion is: time, coordinates, velocities, the work and impact
losses booked so far, the active contacts with their modes, and the run's
status. The parts (:mod:`solver.events` lists them) each own their own
bookkeeping and read or advance the motion only through these two.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from solver.contact import ContactForces
from solver.contact_pairs import ContactPair, DiskKinematics
from solver.errors import InputError, SolverError
from solver.event_tolerances import MAX_STALLED_EVENTS
from solver.gap_set import GapSet


def _positive(value: float, name: str) -> float:
    value = float(value)
    if not (math.isfinite(value) and value > 0.0):
        raise InputError(f"`{name}` must be a positive finite number, got {value!r}")
    return value


class Setup:
    """The fixed data of one event-driven run (read by every part, written by none).

    Attributes
    ----------
    system : solver.system.System
        The compiled scene.
    kin : solver.contact_pairs.DiskKinematics
        Its disks' contact kinematics (broad phase, pair evaluation).
    N : int
        Number of generalized coordinates.
    M_inv : numpy.ndarray, shape (N,)
        Inverse of the diagonal mass matrix (1/kg, 1/(kg·m²)).
    t_end, dt_out : float
        End of the run and output sample spacing (s).
    rtol, atol : float
        DOP853 tolerances of the smooth phases (relative; absolute, SI).
    flight : bool
        No springs and no forcing: the applied force is constant gravity.
    gravity : numpy.ndarray or None
        That constant force (N, N·m) when ``flight``, else None.
    weight_accelerations : numpy.ndarray or None
        ``gravity ∘ M⁻¹`` (N,) when ``flight``, else None: one array for every
        reader (:meth:`free_accelerations`; read only).
    law : str
        The scene's impact law.
    closed_form : bool
        Phases of linear bead scenes are integrated in closed form.
    r_min : float
        Smallest disk radius (m), 1 without disks.
    no_gaps : solver.gap_set.GapSet
        The empty set of pairs (immutable: one serves every use).
    """

    __slots__ = (
        "M_inv",
        "N",
        "atol",
        "closed_form",
        "dt_out",
        "flight",
        "gravity",
        "kin",
        "law",
        "no_gaps",
        "r_min",
        "rtol",
        "system",
        "t_end",
        "weight_accelerations",
    )  # fmt: skip

    def __init__(
        self,
        system: Any,
        t_end: float,
        dt_out: float,
        rtol: float,
        atol: float,
        closed_form: bool,
        q0: np.ndarray,
        v0: np.ndarray,
    ) -> None:
        self.system = system
        self.t_end = _positive(t_end, "t_end")
        self.dt_out = _positive(dt_out, "dt_out")
        self.rtol = _positive(rtol, "rtol")
        self.atol = _positive(atol, "atol")
        self.N = system.N
        self.M_inv = 1.0 / np.asarray(system.M_diag, dtype=float)  # M is diagonal
        self.kin = DiskKinematics(system)
        self.law = system.scene.contact.impact_law
        self.flight = not system.has_springs and not system.has_forcing
        self.gravity = system.applied_force(0.0, q0, v0) if self.flight else None
        self.weight_accelerations = self.gravity * self.M_inv if self.flight else None
        radii = self.kin.radii
        self.r_min = float(radii.min()) if len(radii) else 1.0
        self.no_gaps = GapSet(self.kin, [])
        self.closed_form = bool(closed_form) and not self.flight

    def free_accelerations(self, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``f ∘ M⁻¹`` (N,) of the applied force at ``(t, q, v)`` (read only).

        Without springs, forcing or compliance (``flight``) the applied force
        is the constant weight: the one array :attr:`weight_accelerations`,
        the same numbers.
        """
        if self.flight:
            return self.weight_accelerations
        return self.system.applied_force(t, q, v) * self.M_inv


@dataclass(eq=False, slots=True)
class MotionState:
    """Where the motion is: the one mutable record the stepper's parts share.

    Attributes
    ----------
    t : float
        Current time (s).
    q, v : numpy.ndarray, shape (N,)
        Generalized coordinates (m, rad) and velocities (m/s, rad/s).
    work : numpy.ndarray, shape (3,)
        Friction work, damping dissipation and input work so far (J).
    impact_loss : float
        Energy dissipated by impacts so far, Zeno sums included (J).
    active : dict
        The active (pressed) contacts by pair key: ``(ContactPair, mode)``.
    phase_forces : ContactForces or None
        The contact forces of the current phase while they are constant
        (every active contact a disk on a straight segment, gravity alone).
    stalled : int
        Events in a row at the same instant.
    status, message : str
        ``"running"``, ``"finished"`` or ``"failed"``, and why.
    """

    q: np.ndarray
    v: np.ndarray
    t: float = 0.0
    work: np.ndarray = field(default_factory=lambda: np.zeros(3))
    impact_loss: float = 0.0
    active: dict[Hashable, tuple[ContactPair, str]] = field(default_factory=dict)
    phase_forces: ContactForces | None = None
    stalled: int = 0
    status: str = "running"
    message: str = ""

    def y(self) -> np.ndarray:
        """The state as one row ``(q, v, work)``."""
        return np.concatenate((self.q, self.v, self.work))

    def set_y(self, y: np.ndarray) -> None:
        """Take ``q``, ``v`` and ``work`` from one row ``y`` (copies)."""
        N = len(self.q)
        self.q = np.array(y[:N])
        self.v = np.array(y[N : 2 * N])
        self.work = np.array(y[2 * N :])

    def advance_clock(self, t: float) -> None:
        """Move the clock to ``t`` (s); too many events in a row at one instant fail the run."""
        if t > self.t:
            self.stalled = 0
        else:
            self.stalled += 1
            if self.stalled > MAX_STALLED_EVENTS:
                raise SolverError(
                    f"{MAX_STALLED_EVENTS} events in a row without time advancing "
                    f"(contacts {list(k for k in self.active)})"
                )
        self.t = t
