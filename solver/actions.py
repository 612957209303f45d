"""Timed user actions (a scene's ``actions``): the run goes on from its state with a change.

The GUI records what a user does during a run — a body dragged to a new
position and velocity while paused, a new restitution, friction or gravity
from a slider — as timed ``actions`` of the scene (``solver.scene.SetAction``,
``StateAction``), as it records a strike on a cart as a scheduled impulse;
the run is then computed again from the start, exactly as ``python -m solver
run`` computes the saved scene, so the command line reproduces it byte for
byte.

``ActionStepper`` composes the plain steppers: the motion up to the first
action time is the scene's own run (ended there); at the action the state
is taken as it is (``q``, ``v``), the action applied to it and to the
scene, and a new run starts from there — a new scene whose bodies start in
that state, whose forcing phases are advanced by ``ω t`` (``sin(ω(t₀ + τ) +
φ)`` as ``sin(ω τ + (φ + ω t₀))``) and whose ``t_end`` is the next action's
time (or the scene's end) less ``t₀``; its times are shifted by ``t₀``.
At an action the trajectory holds the run's last frame and, at the same
time, a ``post`` frame (the state jumps, as at an impact), and the event log an
``action`` event: its message
in words, ``energy_change`` the change of the total energy (J), ``v_minus``
and ``v_plus``. The work the user did is booked as input work, so the energy
balance ``total + dissipated − input`` stays what it was; the dissipated
energy and the input work carry on across runs.

Actions at the same time apply in their order in the file; an action at
t = 0 changes the scene before the run; an action at or after ``t_end``
never happens.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from solver.frames import EnergyBudget, Event, Frame, StepOutput
from solver.scene import Bead, Scene, SetAction, StateAction, Wheel

_TIME_IN_WORDS = re.compile(r"\b(t(?:_end)? = )([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")
"""A time written in a message, ``t = 0.64 s`` or ``t_end = 1.7 s``: shifted with the run."""


def _body_state(body: Any, q: np.ndarray, v: np.ndarray) -> Any:
    """``body`` (a scene model) starting from its coordinates ``q`` and rates ``v``."""
    if isinstance(body, Wheel):
        return body.model_copy(
            update={
                "position": (float(q[0]), float(q[1])),
                "angle": float(q[2]),
                "velocity": (float(v[0]), float(v[1])),
                "angular_velocity": float(v[2]),
            }
        )
    if isinstance(body, Bead):
        return body.model_copy(update={"x": float(q[0]), "vx": float(v[0])})
    raise ValueError(f"timed actions do not apply to a {body.type}")


def _acted(body: Any, action: StateAction) -> Any:
    """``body`` put where ``action`` says (a wheel keeps its angle and angular velocity)."""
    if isinstance(body, Wheel):
        return body.model_copy(update={"position": action.position, "velocity": action.velocity})
    return body.model_copy(update={"x": action.position[0], "vx": action.velocity[0]})


def _words(action: SetAction | StateAction) -> str:
    """What ``action`` did, for the event log."""
    if isinstance(action, StateAction):
        (x, y), (vx, vy) = action.position, action.velocity
        return (
            f"{action.body} moved by the user to ({x:.4g}, {y:.4g}) m at ({vx:.4g}, {vy:.4g}) m/s"
        )
    parts = []
    if action.restitution is not None:
        parts.append(f"restitution e = {action.restitution:.4g}")
    if action.friction is not None:
        parts.append(f"friction μ = {action.friction:.4g}")
    if action.gravity is not None:
        parts.append(f"gravity g = ({action.gravity[0]:.4g}, {action.gravity[1]:.4g}) m/s²")
    return "set by the user: " + ", ".join(parts)


def apply_actions(
    scene: Scene,
    dof_slices: dict[str, slice],
    q: np.ndarray,
    v: np.ndarray,
    actions: list[SetAction | StateAction],
    t0: float,
) -> Scene:
    """The scene whose run starts in state ``(q, v)`` at ``t0`` (s) with ``actions`` applied.

    Its bodies start where ``q`` and ``v`` put them (``dof_slices``: each body's
    coordinates), the actions change them and the contact and gravity
    values, forcing phases are advanced by ``ω t0``, and it has no actions.
    """
    bodies = [_body_state(b, q[dof_slices[b.id]], v[dof_slices[b.id]]) for b in scene.bodies]
    contact, gravity = scene.contact, scene.gravity
    for action in actions:
        if isinstance(action, StateAction):
            index = next(i for i, b in enumerate(bodies) if b.id == action.body)
            bodies[index] = _acted(bodies[index], action)
            continue
        if action.restitution is not None:
            contact = contact.model_copy(update={"restitution": action.restitution})
        if action.friction is not None:
            contact = contact.model_copy(update={"friction": action.friction})
        if action.gravity is not None:
            gravity = action.gravity
    forces = tuple(
        f.model_copy(update={"phase": math.fmod(f.phase + f.omega * t0, 2.0 * math.pi)})
        for f in scene.forces
    )
    return scene.model_copy(
        update={
            "bodies": tuple(bodies),
            "contact": contact,
            "gravity": gravity,
            "forces": forces,
            "actions": (),
        }
    )


def dof_slices(system: Any) -> dict[str, slice]:
    """Each body's slice of ``q`` (and ``v``), from ``system.dof_labels``."""
    slices, start = {}, 0
    for body_id, coordinates, _ in system.dof_labels:
        slices[body_id] = slice(start, start + len(coordinates))
        start += len(coordinates)
    return slices


class ActionStepper:
    """A run of a scene with timed actions: plain runs between them (see the module).

    Parameters
    ----------
    system : solver.system.System
        The compiled scene (with its actions): the trajectory's layout.
    make : callable
        ``make(scene, t_end)`` -> a plain stepper of ``scene`` (no actions) to ``t_end`` (s).
    t_end : float
        End of the whole run, s.

    Attributes
    ----------
    system, status, message, t, reached
        The stepper shape (``reached``: how far a cut phase of the current run got, s).
    """

    def __init__(self, system: Any, make: Callable[[Scene, float], Any], t_end: float) -> None:
        self.system = system
        self._make = make
        self._t_end = float(t_end)
        scene: Scene = system.scene
        times = sorted({a.time for a in scene.actions if a.time < self._t_end})
        self._groups = [[a for a in scene.actions if a.time == t] for t in times]
        self._slices = dof_slices(system)
        self._scene = scene.model_copy(update={"actions": ()})
        self._t0 = 0.0
        self._dissipated = self._input = 0.0
        self._last: Frame | None = None
        self._jump: tuple[Frame, list[SetAction | StateAction]] | None = None
        self.status, self.message = "running", ""
        if self._groups and self._groups[0][0].time == 0.0:
            q0, v0 = np.asarray(system.q0, dtype=float), np.asarray(system.v0, dtype=float)
            self._scene = apply_actions(self._scene, self._slices, q0, v0, self._groups.pop(0), 0.0)
        self._inner = self._make(self._scene, self._segment_end())

    def _segment_end(self) -> float:
        """The current run's ``t_end`` (s, from its start ``t0``); ``t0 + t_end`` is the end."""
        end = self._groups[0][0].time if self._groups else self._t_end
        length = end - self._t0
        while self._t0 + length < end:
            length = math.nextafter(length, math.inf)
        while self._t0 + length > end:
            length = math.nextafter(length, -math.inf)
        return length

    def _words(self, message: str) -> str:
        """A plain run's message with its times (``t = …``) in the whole run's time."""
        if not self._t0 or not message:
            return message
        return _TIME_IN_WORDS.sub(
            lambda m: f"{m.group(1)}{self._t0 + float(m.group(2)):.15g}", message
        )

    @property
    def t(self) -> float:
        """Time reached, s (the plain run's, shifted)."""
        return self._shift(self._inner.t)

    @property
    def reached(self) -> float:
        """How far the current run's pieces got, s (``solver.simulation.progress``)."""
        inner = self._inner
        return self._shift(max(float(inner.t), float(getattr(inner, "reached", inner.t))))

    def _shift(self, tau: float) -> float:
        return self._t0 + float(tau) if self._t0 else float(tau)

    def _frame(self, frame: Frame) -> Frame:
        """A plain run's frame in the whole run's time and energy books."""
        if not self._t0 and not self._dissipated and not self._input:
            return frame
        energy = frame.energy
        budget = EnergyBudget(
            energy.kinetic,
            energy.potential,
            energy.spring,
            energy.dissipated + self._dissipated,
            energy.input + self._input,
        )
        return replace(frame, t=self._shift(frame.t), energy=budget)

    def step(self) -> StepOutput:
        """One step of the current plain run; at an action's time, the jump and the next run."""
        inner = self._inner
        output = inner.step()
        frames = []
        for frame in map(self._frame, output.frames):
            last = frames[-1] if frames else (self._last if self._jump is None else None)
            if last is not None and last.t == frame.t and last.kind == frame.kind == "sample":
                continue  # two samples of the run that the shift to t0 rounds to one time
            frames.append(frame)
        events = [
            replace(e, t=self._shift(e.t), message=self._words(e.message)) if self._t0 else e
            for e in output.events
        ]
        if self._jump is not None and frames:
            frames, events = self._land(frames, events)
        if frames:
            self._last = frames[-1]
        if inner.status == "finished" and self._groups:
            return self._act(frames, events)
        if inner.status != "running":
            self.status, self.message = inner.status, self._words(inner.message)
        return StepOutput(frames, events)

    def _act(self, frames: list[Frame], events: list[Event]) -> StepOutput:
        """The current run reached the next actions' time: start the run after them."""
        actions = self._groups.pop(0)
        t_action = actions[0].time
        before = self._last  # the run's last frame, at its end: t_action (_segment_end)
        assert before is not None
        q, v = np.asarray(before.q, dtype=float), np.asarray(before.v, dtype=float)
        self._scene = apply_actions(self._scene, self._slices, q, v, actions, t_action)
        self._t0 = t_action
        self._dissipated, self._input = before.energy.dissipated, before.energy.input
        self._jump = (before, actions)
        self._inner = self._make(self._scene, self._segment_end())
        return StepOutput(frames, events)

    def _land(self, frames: list[Frame], events: list[Event]) -> tuple[list[Frame], list[Event]]:
        """The new run's first frame: the state after the actions, and their events."""
        before, actions = self._jump
        self._jump = None
        first = frames[0]
        change = first.energy.total - before.energy.total
        self._input += change  # the user's work: the balance stays what it was
        after = replace(
            first,
            t=before.t,
            kind="post",
            energy=replace(first.energy, input=first.energy.input + change),
        )
        frames = [after, *(self._frame_after_change(f, change) for f in frames[1:])]
        jumps = [
            Event(
                t=before.t,
                type="action",
                body=getattr(action, "body", ""),
                energy_change=change if k == len(actions) - 1 else 0.0,
                v_minus=np.asarray(before.v, dtype=float),
                v_plus=np.asarray(after.v, dtype=float),
                message=_words(action),
            )
            for k, action in enumerate(actions)
        ]
        return frames, [*jumps, *events]

    @staticmethod
    def _frame_after_change(frame: Frame, change: float) -> Frame:
        return replace(frame, energy=replace(frame.energy, input=frame.energy.input + change))
