"""Re-impacts of a forced bead between two stops are never stepped over (issue 8, item 2).

A bead driven by a harmonic force between two vertical stops comes back to
a stop after a bounce within one closed-form piece. The gap to a segment is
a distance, positive on both sides, so a bead that passed through a stop
between two sub-points was not seen, and left the scene. Whether it did
depended on where the sub-points fell (the run's length). Here the bead's
position is checked against the stops by the scene's own geometry.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from solver.scene import parse_scene
from solver.simulation import make_stepper

RADIUS = 0.05
"""Bead radius (m)."""

OVERLAP_TOL = 1e-9
"""Largest overlap (m) of the bead with a stop at any trajectory row."""


def forced_bead(travel: float, amplitude: float, omega: float, e: float, t_end: float) -> dict:
    """A 1 kg bead with ``travel`` (m) between two stops, driven by ``amplitude sin(ω t)`` (N)."""
    wall = 0.5 * travel + RADIUS
    return {
        "format": "impactgui-scene",
        "version": 2,
        "title": "Forced bead between two stops",
        "view": "side",
        "gravity": [0.0, -9.81],
        "contact": {"restitution": e, "friction": 0.0, "impact_law": "staged"},
        "boundaries": [
            {"id": "left", "type": "segment", "a": [-wall, -0.2], "b": [-wall, 0.2]},
            {"id": "right", "type": "segment", "a": [wall, -0.2], "b": [wall, 0.2]},
        ],
        "bodies": [
            {
                "id": "mass",
                "type": "bead",
                "rail_y": 0.0,
                "mass": 1.0,
                "radius": RADIUS,
                "x": 0.0,
                "vx": 0.0,
            }
        ],
        "springs": [],
        "forces": [
            {
                "body": "mass",
                "type": "harmonic",
                "amplitude": [amplitude, 0.0],
                "omega": omega,
                "phase": 0.0,
            }
        ],
        "impulses": [],
        "solver": {"method": "event-driven", "t_end": t_end, "dt_out": 0.01, "dt": 1e-4},
    }


def largest_overlap(data: dict) -> tuple[float, str]:
    """Run ``data``; the largest overlap (m) of the bead with a stop over every row, and the status.

    The stops' x and the bead's radius are read from the scene, not from the
    engine's contact states.
    """
    walls = [b["a"][0] for b in data["boundaries"]]
    radius = data["bodies"][0]["radius"]
    stepper = make_stepper(parse_scene(data))
    worst = 0.0
    while stepper.status == "running":
        for frame in stepper.step().frames:
            x = float(frame.q[0])
            worst = max(worst, x + radius - max(walls), min(walls) - (x - radius))
    return worst, stepper.status


def test_reimpact_after_a_bounce_is_found() -> None:
    """The report's scene (stops at x = ±0.55 m, 10 N, e = 0.8) at ω = 3 rad/s.

    The bead went through the right stop at t = 23.1 s (at ω = 2 rad/s, at
    t = 77 s).
    """
    worst, status = largest_overlap(forced_bead(1.0, 10.0, 3.0, 0.8, t_end=25.0))
    assert status == "finished"
    assert worst <= OVERLAP_TOL


@settings(max_examples=25)
@given(
    travel=st.floats(0.02, 1.0),
    amplitude=st.floats(1.0, 40.0),
    omega=st.floats(0.5, 20.0),
    e=st.floats(0.0, 1.0),
)
def test_forced_bead_stays_between_its_stops(
    travel: float, amplitude: float, omega: float, e: float
) -> None:
    """No row overlaps a stop; a run may end in a reported failure (exit 3), never silently."""
    worst, _ = largest_overlap(forced_bead(travel, amplitude, omega, e, t_end=5.0))
    assert worst <= OVERLAP_TOL
