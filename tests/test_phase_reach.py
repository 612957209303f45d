"""A closed-form phase needs no reach when its candidate pairs are every pair of the scene.

The candidates of a phase cover every contact while no disk has moved a
quarter of the candidate margin; a phase that goes further is cut there.
When the candidates are every pair the scene has (a few beads between
stops) no travel can add one: the phase runs on, and its impacts are still
where the closed form puts them.
"""

from __future__ import annotations

import math

import pytest

from solver.scene import parse_scene
from solver.simulation import make_stepper

RADIUS = 0.05


def bead_scene(stops, beads, stiffness=None, t_end=10.0):
    """Beads ``(x, vx)`` on the rail y = 0 between vertical stops at ``stops`` (m)."""
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 2,
            "contact": {"restitution": 1.0, "friction": 0.0, "impact_law": "staged"},
            "boundaries": [
                {"id": f"stop{k}", "type": "segment", "a": [x, -0.5], "b": [x, 0.5]}
                for k, x in enumerate(stops)
            ],
            "bodies": [
                {
                    "id": f"b{k}",
                    "type": "bead",
                    "rail_y": 0.0,
                    "mass": 1.0,
                    "radius": RADIUS,
                    "x": x,
                    "vx": vx,
                }
                for k, (x, vx) in enumerate(beads)
            ],
            "springs": []
            if stiffness is None
            else [{"a": "b0", "anchor": [0.0, 0.0], "stiffness": stiffness, "rest_length": 0.0}],
            "solver": {"method": "event-driven", "t_end": t_end, "dt_out": t_end},
        }
    )


def test_a_bead_between_two_stops_has_every_pair_as_a_candidate():
    stepper = make_stepper(bead_scene([-0.2, 0.2], [(0.0, 1.0)]))
    stepper.pairs.candidates()
    assert stepper.pairs.pairs_complete()


def test_a_long_row_of_beads_lists_only_near_pairs():
    beads = [(2.0 * k, 0.0) for k in range(40)]
    stepper = make_stepper(bead_scene([-1.0, 81.0], beads))
    stepper.pairs.candidates()
    assert not stepper.pairs.pairs_complete()


def test_a_bead_on_a_weak_spring_meets_a_far_stop_at_the_closed_form_time():
    # x(t) = (v0/λ) sin λt with λ = 0.1 rad/s: 5 m of travel in one phase, more
    # than a quarter of the candidate margin (the scene is some 20 m wide)
    v0, lam, far = 1.0, 0.1, 5.0 + RADIUS
    stepper = make_stepper(bead_scene([-10.0, far], [(0.0, v0)], stiffness=lam**2))
    first = None
    while stepper.status == "running" and first is None:
        first = next((e for e in stepper.step().events if e.type == "impact"), None)
    assert first is not None and first.other == "stop1"
    assert first.t == pytest.approx(math.asin((far - RADIUS) * lam / v0) / lam, abs=1e-12)
