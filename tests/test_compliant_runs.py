"""One System, several runs: the pressing set of compliant contacts belongs to each run.

An event-driven run fixes, phase by phase, which compliant contacts press;
the time-stepper takes every overlap's clamped force. Two runs on one
System, their steps interleaved, must give what each gives alone.
"""

from __future__ import annotations

import numpy as np
import pytest

from solver import events
from solver.events import EventDrivenStepper
from solver.scene import parse_scene
from solver.simulation import make_stepper
from solver.system import System


def scene(exponent: float) -> object:
    """A 2 kg bead at 1.5 m/s on a soft stop at x = 1, a spring to x = −1 and a forcing."""
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 2,
            "gravity": [0.0, 0.0],
            "boundaries": [
                {
                    "id": "stop",
                    "type": "segment",
                    "a": [1.0, -1.0],
                    "b": [1.0, 1.0],
                    "compliance": {"stiffness": 2e4, "damping": 30.0, "exponent": exponent},
                }
            ],
            "bodies": [
                {
                    "id": "b",
                    "type": "bead",
                    "mass": 2.0,
                    "radius": 0.1,
                    "x": 0.0,
                    "rail_y": 0.0,
                    "vx": 1.5,
                }
            ],
            "springs": [{"a": "b", "anchor": [-1.0, 0.0], "stiffness": 2.0, "rest_length": 1.0}],
            "forces": [{"body": "b", "amplitude": [2.0, 0.0], "omega": 6.0}],
            "solver": {"t_end": 1.5, "dt_out": 1e-3},
        }
    )


def rows(outputs: list) -> tuple[list, list]:
    """Every frame as ``(t, kind, q, v, contacts' λ, energy)`` and every event as its fields."""
    frames = [
        (f.t, f.kind, f.q.tolist(), f.v.tolist(), [c.lam for c in f.contacts], f.energy)
        for out in outputs
        for f in out.frames
    ]
    found = [
        (e.t, e.type, e.body, e.other, e.normal_impulse, e.peak_force)
        for out in outputs
        for e in out.events
    ]
    return frames, found


def alone(stepper) -> list:
    outputs = []
    while stepper.status == "running":
        outputs.append(stepper.step())
    return outputs


def interleaved(a, b) -> tuple[list, list]:
    """Three steps of ``a`` for each of ``b``: ``a`` runs ahead, through phases ``b`` is not in."""
    out_a, out_b = [], []
    while a.status == "running" or b.status == "running":
        for _ in range(3):
            if a.status == "running":
                out_a.append(a.step())
        if b.status == "running":
            out_b.append(b.step())
    return out_a, out_b


@pytest.mark.parametrize("exponent", [1.0, 1.5])  # closed form and DOP853
def test_two_event_driven_runs_on_one_system_interleaved_give_each_alone(monkeypatch, exponent):
    # every step's wall-time slice already spent: each phase is cut after its first
    # piece and resumed by the next step, after the other run has stepped
    monkeypatch.setattr(events, "STEP_WALL_SLICE_S", -1.0)
    system = System(scene(exponent))
    solo_a = rows(alone(EventDrivenStepper(system, 1.5, 1e-3)))
    solo_b = rows(alone(EventDrivenStepper(system, 1.2, 0.0137)))
    assert [e[1] for e in solo_a[1]] == ["touch", "release"]
    out_a, out_b = interleaved(
        EventDrivenStepper(system, 1.5, 1e-3), EventDrivenStepper(system, 1.2, 0.0137)
    )
    assert rows(out_a) == solo_a
    assert rows(out_b) == solo_b
    assert system.compliance.engaged is None  # the system's own set is never engaged


def test_an_event_driven_and_a_time_stepping_run_on_one_system_interleaved():
    system = System(scene(1.0))
    solo_ed = rows(alone(make_stepper(system, method="event-driven")))
    solo_ts = rows(alone(make_stepper(system, method="time-stepping")))
    out_ed, out_ts = interleaved(
        make_stepper(system, method="event-driven"), make_stepper(system, method="time-stepping")
    )
    assert rows(out_ed) == solo_ed
    assert rows(out_ts) == solo_ts
    # the time-stepper saw the contact as a force: its λ is the clamped F ≥ 0
    lams = [lam for frame in solo_ts[0] for lam in frame[4]]
    assert lams and min(lams) >= 0.0 and np.max(lams) > 100.0
