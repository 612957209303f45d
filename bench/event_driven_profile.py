"""Event-driven engine: cost per impact, per event and per output frame.

Run with ``python bench/event_driven_profile.py [--profile CASE]``. Prints wall
times and asserts nothing (docs/CONTRACT.md, "Working habits": benchmarks print, tests never time).

Cases
-----
``sawtooth``
    Paper 003's mass between two stops (e = 1), 10⁴ impacts with one output
    frame per 1000 s, so only the impacts cost; prints the time per impact
    and the relative drift of the energy.
``ball``
    ``resources/scenes/bouncing_ball.json`` run to its Zeno rest (``t_end``
    just past t∞ = 3√(2/g)) with the scene's ``dt_out`` and with one frame
    only; the difference divided by the number of extra frames is the cost
    per output frame, the rest divided by the events the cost per event.
``chain``
    A touching chain of 1000 unit beads (radius 0.5 m) on a rail, the first
    struck with vx = 1 m/s, 1 s simulated, ``sequential`` and ``staged``.
``linear``
    The linear bead scenes (paper 002 two masses, paper 003 mass–spring–stop,
    the forced chain) with their own ``t_end`` and ``dt_out``, smooth phases
    in closed form and by DOP853 (``closed_form=False``, default tolerances):
    wall time per simulated second of each, best of ``REPEATS``, the ratio
    DOP853 / closed form, and the largest difference of their sample
    positions (m).

``--profile CASE`` runs one case under cProfile and prints the 30 most
expensive functions (cumulative time).
"""

from __future__ import annotations

import argparse
import cProfile
import math
import pstats
import sys
import time
from pathlib import Path

import numpy as np

from solver.events import EventDrivenStepper
from solver.record import Trajectory
from solver.scene import load_scene, parse_scene
from solver.simulation import make_stepper
from solver.system import System

SCENES = Path(__file__).resolve().parents[1] / "resources" / "scenes"
G_ACC = 9.81
REPEATS = 5
"""Best of this many runs is printed for the short cases."""


def run(scene, t_end: float, dt_out: float) -> tuple[Trajectory, float]:
    """Drive an event-driven stepper to ``t_end`` (s); the trajectory and the wall time (s)."""
    start = time.perf_counter()
    stepper = make_stepper(scene, t_end=t_end, dt_out=dt_out, method="event-driven")
    trajectory = Trajectory(stepper.system)
    while stepper.status == "running":
        trajectory.append(stepper.step())
    trajectory.status, trajectory.message = stepper.status, stepper.message
    return trajectory, time.perf_counter() - start


def sawtooth_scene(n_impacts: int = 10_000, V: float = 1.0, gap: float = 0.1):
    """Paper 003 mass between two stops, run for ``n_impacts`` − 1 impacts; ``(scene, t_end)``."""
    r = 0.02
    scene = parse_scene(
        {
            "format": "impactgui-scene",
            "version": 1,
            "contact": {"restitution": 1.0, "friction": 0.0, "impact_law": "staged"},
            "boundaries": [
                {"id": "left", "type": "segment", "a": [0, -1], "b": [0, 1]},
                {"id": "right", "type": "segment", "a": [gap + 2 * r, -1], "b": [gap + 2 * r, 1]},
            ],
            "bodies": [
                {
                    "id": "m",
                    "type": "bead",
                    "rail_y": 0.0,
                    "mass": 1.5,
                    "radius": r,
                    "x": r,
                    "vx": V,
                }
            ],
        }
    )
    return scene, (n_impacts - 0.5) * gap / V


def chain_scene(n: int = 1000, law: str = "sequential"):
    """``n`` touching unit beads of radius 0.5 m, the first moving at 1 m/s."""
    bodies = [
        {
            "id": f"b{k}",
            "type": "bead",
            "rail_y": 0.0,
            "mass": 1.0,
            "radius": 0.5,
            "x": float(k),
            "vx": 1.0 if k == 0 else 0.0,
        }
        for k in range(n)
    ]
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 1,
            "contact": {"restitution": 1.0, "friction": 0.0, "impact_law": law},
            "bodies": bodies,
        }
    )


def sawtooth() -> None:
    scene, t_end = sawtooth_scene()
    trajectory, wall = run(scene, t_end, 1000.0)
    hits = sum(1 for e in trajectory.events if e.type == "impact")
    energy = trajectory.frames[-1].energy.total
    drift = energy / (0.5 * 1.5) - 1.0
    print(
        f"sawtooth: {hits} impacts in {wall:.3f} s = {wall / hits * 1e6:.0f} us/impact, "
        f"relative energy drift {drift:.2e}"
    )


def ball() -> None:
    scene = load_scene(SCENES / "bouncing_ball.json")
    t_end = 3.0 * math.sqrt(2.0 / G_ACC) + 0.01
    dense = min(
        (run(scene, t_end, scene.solver.dt_out) for _ in range(REPEATS)), key=lambda r: r[1]
    )
    sparse = min((run(scene, t_end, 1.0) for _ in range(REPEATS)), key=lambda r: r[1])
    events = len(sparse[0].events)
    extra = len(dense[0].frames) - len(sparse[0].frames)
    print(f"bouncing ball to rest (t_end = {t_end:.4f} s), best of {REPEATS}:")
    print(
        f"  dt_out = {scene.solver.dt_out:g} s: {dense[1] * 1e3:7.2f} ms, "
        f"{len(dense[0].frames)} frames"
    )
    print(
        f"  one frame only : {sparse[1] * 1e3:7.2f} ms, {events} events "
        f"= {sparse[1] / events * 1e3:.2f} ms/event"
    )
    print(f"  per output frame: {(dense[1] - sparse[1]) / extra * 1e6:.1f} us")


def chain() -> None:
    for law in ("sequential", "staged"):
        trajectory, wall = run(chain_scene(law=law), 1.0, 0.1)
        hits = sum(1 for e in trajectory.events if e.type == "impact")
        print(
            f"1000-bead chain, {law:10}: {wall:7.3f} s for 1 s simulated, {hits} impact rows, "
            f"status {trajectory.status} {trajectory.message}"
        )


LINEAR_SCENES = (
    "two_masses_elastic.json",
    "two_masses_plastic.json",
    "mass_spring_stop_at_rest.json",
    "mass_spring_stop_offset.json",
    "chain_forced.json",
)


def run_linear(scene, closed_form: bool) -> tuple[np.ndarray, float]:
    """Sample positions (m) of an event-driven run of ``scene`` and its wall time (s)."""
    start = time.perf_counter()
    stepper = EventDrivenStepper(
        System(scene), scene.solver.t_end, scene.solver.dt_out, closed_form=closed_form
    )
    frames = []
    while stepper.status == "running":
        frames += stepper.step().frames
    wall = time.perf_counter() - start
    if stepper.status != "finished":
        raise RuntimeError(f"{scene.title}: {stepper.message}")
    return np.array([f.q for f in frames if f.kind == "sample"]), wall


def linear() -> None:
    print(f"linear bead scenes, wall time per simulated second, best of {REPEATS}:")
    print(f"  {'scene':32} {'closed form':>12} {'DOP853':>12} {'ratio':>7} {'max |dq|':>9}")
    for name in LINEAR_SCENES:
        scene = load_scene(SCENES / name)
        runs = {
            closed_form: min(
                (run_linear(scene, closed_form) for _ in range(REPEATS)), key=lambda r: r[1]
            )
            for closed_form in (True, False)
        }
        exact, ode = runs[True], runs[False]
        per_second = [r[1] / scene.solver.t_end for r in (exact, ode)]
        print(
            f"  {name:32} {per_second[0] * 1e3:9.1f} ms {per_second[1] * 1e3:9.1f} ms "
            f"{ode[1] / exact[1]:7.2f} {float(np.max(np.abs(exact[0] - ode[0]))):9.1e}"
        )


CASES = {"sawtooth": sawtooth, "ball": ball, "chain": chain, "linear": linear}


def main() -> int:
    """Run every case, or profile one."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=sorted(CASES))
    args = parser.parse_args()
    if args.profile:
        profiler = cProfile.Profile()
        profiler.runcall(CASES[args.profile])
        pstats.Stats(profiler).sort_stats("cumtime").print_stats(30)
        return 0
    for case in CASES.values():
        case()
    return 0


if __name__ == "__main__":
    sys.exit(main())
