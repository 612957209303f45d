"""What a run produces: frames (states on the output grid and at impacts) and events.

These plain dataclasses are the only currency between the stepper, the CSV
writers, the command line and the GUI. Units are SI throughout.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any

import numpy as np


def _quick_init(cls: type) -> type:
    """Give a frozen slots dataclass a faster ``__init__``, same signature and defaults.

    The generated one of a frozen dataclass calls ``object.__setattr__`` by
    name for every field; this one calls the slots' own setters, bound
    once: about 3× faster, which matters for the thousands of frames, energy
    budgets and contact states a run makes each second. Instances stay
    frozen (assignment still raises ``FrozenInstanceError``).
    """
    names = [f.name for f in fields(cls)]
    params = [
        name if f.default is MISSING else f"{name}=_default_{name}"
        for name, f in zip(names, fields(cls), strict=True)
    ]
    namespace = {f"_set_{name}": cls.__dict__[name].__set__ for name in names}
    namespace.update(
        {f"_default_{f.name}": f.default for f in fields(cls) if f.default is not MISSING}
    )
    body = "".join(f"    _set_{name}(self, {name})\n" for name in names)
    exec(f"def __init__(self, {', '.join(params)}):\n{body}", namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init
    return cls


@_quick_init
@dataclass(frozen=True, slots=True)
class EnergyBudget:
    """Energy bookkeeping at one instant (MECHANICS §6), all in J.

    ``dissipated`` and ``input`` are running totals since t = 0, so
    ``total + dissipated - input`` stays constant along a run.
    """

    kinetic: float
    potential: float
    spring: float
    dissipated: float
    input: float

    @property
    def total(self) -> float:
        """Mechanical energy ``kinetic + potential + spring`` (J)."""
        return self.kinetic + self.potential + self.spring

    @property
    def balance(self) -> float:
        """``total + dissipated - input`` (J): constant for a correct run."""
        return self.total + self.dissipated - self.input


@_quick_init
@dataclass(frozen=True, slots=True)
class ContactState:
    """One active (persistent) contact at one instant.

    ``body`` and ``other`` are ids from the scene: ``other`` is a boundary id,
    a boundary id with a feature suffix (``"curb#v2"`` for vertex 2 of a
    polyline, ``"curb#s1"`` for its segment 1), or another body's id.
    ``lam`` is the normal force (N), ``tau`` the friction multiplier in
    [-1, 1] (friction force = -mu*lam*tau along the tangent), ``u_n`` and
    ``u_t`` the normal and slip speeds (m/s), ``mode`` one of ``stick``,
    ``slip+``, ``slip-``.
    ``point`` is the contact point and ``normal`` the unit normal from the
    obstacle to the body (both in m / unitless, world frame).
    """

    body: str
    other: str
    lam: float
    tau: float
    u_n: float
    u_t: float
    mode: str
    point: tuple[float, float] = (0.0, 0.0)
    normal: tuple[float, float] = (0.0, 1.0)
    friction: float = 0.0


@_quick_init
@dataclass(frozen=True, slots=True)
class Frame:
    """The state at time ``t`` (s).

    ``kind`` is ``"sample"`` on the output grid, ``"pre"`` / ``"post"`` just
    before / after an impact at the same ``t``. ``q`` and ``v`` are the
    generalized coordinates and velocities in the system's layout
    (see ``System.dof_labels``).
    """

    t: float
    kind: str
    q: np.ndarray
    v: np.ndarray
    contacts: tuple[ContactState, ...]
    energy: EnergyBudget


@_quick_init
@dataclass(frozen=True, slots=True)
class Event:
    """Something discrete that happened at time ``t`` (s).

    ``type`` is one of ``impact``, ``liftoff``, ``stick``, ``slip``, ``zeno``,
    ``inadmissible``, ``impulse``, ``error``, ``energy_gain``, ``accuracy``,
    ``action``, ``touch``, ``release``. For impacts: ``normal_impulse`` and
    ``tangent_impulse`` (N·s, summed over the contacts this row names),
    ``stages`` (number of stages of the impact law), ``energy_change``
    (T⁺ − T⁻, J), ``v_minus`` / ``v_plus`` (full generalized velocity).
    ``message`` explains errors, inadmissible results and energy gains in words.
    An ``energy_gain`` row follows an impact whose kinetic energy grew beyond
    round-off (restitutions that differ per contact, docs/LIMITS.md): its
    ``energy_change`` is that impact's gain again (not to be added to it).
    An ``accuracy`` row (time-stepping) reports the run's largest
    penetration and energy-balance drift in its ``message``.
    ``impact_stages`` (event-driven impacts) holds the contact's normal
    Jacobian and the impact law's stages (read with :mod:`solver.stages`).
    A ``release`` (a compliant contact ending) carries the contact's impulse
    ``∫F dt`` in ``normal_impulse`` (N·s), its largest force in
    ``peak_force`` (N) and its duration in ``message``.
    """

    t: float
    type: str
    body: str = ""
    other: str = ""
    normal_impulse: float = 0.0
    tangent_impulse: float = 0.0
    stages: int = 0
    energy_change: float = 0.0
    v_minus: np.ndarray | None = None
    v_plus: np.ndarray | None = None
    message: str = ""
    impact_stages: Any = None
    """The impact's stages (:class:`solver.stages.ImpactStages`, or one
    :class:`solver.stages.SharedImpactStages` for the events of an impact of beads
    on a rail), or None. Typed loosely: this module imports no other of the solver's."""
    peak_force: float = 0.0


@dataclass
class StepOutput:
    """What one ``Stepper.step()`` call produced, in time order."""

    frames: list[Frame] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
