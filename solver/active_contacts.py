"""The active contacts of the event-driven stepper: their evaluations and forces at a state.

:class:`ActiveContacts` evaluates the active (pressed) contacts of the
motion at a state, keeps the evaluations the event handler made last (a
contact at rest is evaluated once per state), and gives their forces with
fixed modes (:func:`solver.contact.solve_with_modes`), or the phase's
constant forces while those hold.
"""

from __future__ import annotations

import numpy as np

from solver.contact import ContactForces, solve_with_modes
from solver.motion_state import MotionState, Setup
from solver.system import Contact


class ActiveContacts:
    """The active contacts at a state (a part of the event-driven stepper).

    Owns ``kept``: the handler's last evaluations of the active contacts,
    ``(keys, q bytes, v bytes, contacts)``, read back at the same state.
    """

    def __init__(self, setup: Setup, motion: MotionState) -> None:
        self.s, self.m = setup, motion
        self.kept: tuple | None = None

    def active_evals(self, q: np.ndarray, v: np.ndarray) -> list[Contact]:
        return [self.s.kin.evaluate(pair, q, v) for pair, _ in self.m.active.values()]

    def active_forces(
        self, t: float, q: np.ndarray, v: np.ndarray
    ) -> tuple[list[Contact], ContactForces]:
        evals = self.active_evals(q, v)
        if self.m.phase_forces is not None:
            return evals, self.m.phase_forces
        modes = [mode for _, mode in self.m.active.values()]
        f = self.s.system.applied_force(t, q, v)
        return evals, solve_with_modes(evals, modes, self.s.M_inv, f)

    def active_contacts(self, q: np.ndarray, v: np.ndarray) -> list[Contact]:
        """The active contacts evaluated at ``(q, v)``; the last evaluation again at the same state.

        Evaluating is deterministic: for the same active set at a state equal
        bit for bit to the one last evaluated (a contact at rest, whose phase
        ends where it began) the contacts made then are the answer.
        """
        state = (tuple(self.m.active), q.tobytes(), v.tobytes())
        kept = self.kept
        if kept is not None and kept[0] == state:
            return kept[1]
        evals = self.active_evals(q, v)
        self.kept = (state, evals)
        return evals
