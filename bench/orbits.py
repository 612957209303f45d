"""Continuation benchmark: 200 points of a branch of periodic orbits.

Run with ``python bench/orbits.py [--points N]``. Prints figures and asserts
nothing (benchmarks print ratios, never timed assertions).

The scene: the linear impact oscillator of docs/ORBITS.md (m = k = 1, c = 0.1,
F = 1, e = 0.8, the stop at x = 0.2), its stable period-1 branch followed in
ω from 1.15 upwards by pseudo-arclength (``solver.orbit_continuation``) with
the step 0.005 in (state, ω), N points (default the issue's 200; the branch
stays off its grazing at ω ≈ 2.448). Figures: the CPU time of the branch (this
process) and its wall time, per point, the ratio of the CPU time to the goal of
10 s for 200 points (≤ 1 meets it), the stroboscopic map's runs per point and
the CPU time of one run of the map.

``--compliant``: the same with the stop compliant (linear, k = 1e4 N/m, c = 10 N·s/m):
each map then has a touch and a release, and the orbit code fills their states and
multiplies the pressing phase's matrix exponential and the touch's saltation in.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from solver import orbits as orbit_module
from solver.orbit_continuation import Branch
from solver.orbits import find_orbit, run_map
from solver.scene import parse_scene

GOAL_S_PER_200 = 10.0
PATH = "forces[0].omega"


def oscillator(omega: float, compliant: bool = False):
    stop = {"id": "stop", "type": "segment", "a": [0.25, -0.2], "b": [0.25, 0.2]}
    if compliant:
        stop["compliance"] = {"stiffness": 1e4, "damping": 10.0, "exponent": 1}
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 2,
            "title": "linear impact oscillator",
            "view": "side",
            "gravity": [0.0, 0.0],
            "contact": {"restitution": 0.8, "friction": 0.0, "impact_law": "newton"},
            "boundaries": [stop],
            "bodies": [
                {"id": "mass", "type": "bead", "rail_y": 0.0, "mass": 1.0, "radius": 0.05, "x": 0.0}
            ],
            "springs": [
                {
                    "a": "mass",
                    "anchor": [0.0, 0.0],
                    "stiffness": 1.0,
                    "rest_length": 0.0,
                    "damping": 0.1,
                }
            ],
            "forces": [
                {
                    "body": "mass",
                    "type": "harmonic",
                    "amplitude": [1.0, 0.0],
                    "omega": omega,
                    "phase": 0.0,
                }
            ],
            "impulses": [],
            "solver": {"method": "event-driven", "t_end": 10.0, "dt_out": 0.01, "dt": 0.0001},
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=200)
    parser.add_argument("--compliant", action="store_true", help="a linear compliant stop")
    args = parser.parse_args()
    start_omega, step = 1.15, 0.005
    scene = oscillator(start_omega, args.compliant)
    orbit = find_orbit(scene, transient=100.0)
    z, span = orbit.state, 2 * math.pi / start_omega
    run_map(scene, z, span)  # warm: loads the compiled loops
    t0 = time.process_time()
    for _ in range(50):
        run_map(scene, z, span)
    per_run = (time.process_time() - t0) / 50

    runs = 0
    original = orbit_module.run_map

    def counted(*a, **k):
        nonlocal runs
        runs += 1
        return original(*a, **k)

    import solver.orbit_continuation as continuation

    continuation.run_map = counted
    branch = Branch(scene, PATH)
    first = branch.first(orbit, start_omega, 1.0)
    wall, cpu = time.perf_counter(), time.process_time()
    points = [first, *branch.points(first, step, math.inf, args.points)]
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    continuation.run_map = original
    n = len(points)
    print(f"branch: {n} points, omega {points[0].p:.4f} -> {points[-1].p:.4f} rad/s")
    print(f"CPU {cpu:.2f} s ({1e3 * cpu / n:.1f} ms/point), wall {wall:.2f} s")
    print(f"CPU for 200 points / goal {GOAL_S_PER_200:g} s: {cpu / n * 200 / GOAL_S_PER_200:.2f}")
    print(f"map runs per point: {runs / n:.1f}; one run: {1e3 * per_run:.2f} ms CPU")


if __name__ == "__main__":
    main()
