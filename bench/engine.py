"""Engine benchmark: targets, cost of every bundled scene, accuracy against cost on paper 004.

Run with ``python bench/engine.py``. Prints three tables and asserts nothing
(docs/CONTRACT.md, "Working habits": benchmarks print ratios against a baseline measured in the same
run, never timed assertions).

0. Targets: median wall time of the stepping (stepper built beforehand, the
   frames appended to a Trajectory) against a fixed budget, as a ratio
   (below 1 meets it): the bouncing ball run to rest — just past its Zeno
   accumulation time ``t∞ = t₀(1 + e)/(1 − e)``, ``t₀ = √(2h/g)`` — at the
   scene's ``dt_out``, 10 ms; the paper-004 wheel against the curb, 1 s
   simulated, 0.5 s; a touching chain of 1000 beads struck at one end
   (``bench/event_driven_profile.py``), 1 s simulated with the
   ``sequential`` and the ``staged`` law, 1 s each.
1. Every scene in ``resources/scenes`` with its own solver settings: wall
   time per simulated second (up to the end or the failure), number of
   events and events per simulated second, and the wall time as a
   multiple of the baseline — the
   event-driven bouncing ball, measured first in this process.
With ``--baseline DIR`` (another checkout of the project, e.g. a
``git worktree`` of an older commit) only the targets are run, each in
child processes that import ``solver`` from this checkout and from ``DIR`` in
turn, interleaved (the order alternates every round), and the medians,
their spread (min–max) and the ratio this/baseline are printed: a
slowdown shows as a ratio above 1 beyond the spread. ``--clock cpu`` times
each child's CPU time instead of the wall time (steadier while other work
shares the machine).

2. The wheel against the curb (paper 004, ``wheel_curb_e03.json``): the
   event-driven result at t = 1 s is the reference; Moreau–Jean
   time-stepping at h = 1e-3 … 1e-6 s gives the error of the wheel centre
   at t = 1 s, the wall time and its ratio to the event-driven time. A step
   whose predicted time (ten times the previous one) exceeds
   ``TIME_LIMIT`` is skipped, and the table says so.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from event_driven_profile import chain_scene

from solver.record import Trajectory
from solver.scene import Scene, load_scene
from solver.simulation import make_stepper
from solver.system import System

SCENES = Path(__file__).resolve().parents[1] / "resources" / "scenes"
BASELINE_SCENE = "bouncing_ball.json"
ACCURACY_SCENE = "wheel_curb_e03.json"
STEPS = (1e-3, 1e-4, 1e-5, 1e-6)
ACCURACY_DT_OUT = 0.01
"""Output spacing (s) of the accuracy runs: sparse, so the table times the stepping."""
TIME_LIMIT = 120.0
"""Wall time (s) above which a time-stepping run of the accuracy table is skipped."""
TARGET_REPEATS = 7
"""Runs per target; the median wall time is compared with the target."""
REST_MARGIN = 1e-3
"""Simulated time (s) past the Zeno accumulation time in the bouncing-ball target."""
CHAIN_BEADS = 1000
"""Beads in the touching chain of the targets."""
TARGET_NAMES = ("ball", "wheel", "chain-sequential", "chain-staged")
"""The targets by name (``--cases``)."""
BASELINE_ROUNDS = 6
"""Rounds of the comparison with a baseline checkout; each runs every target in both."""
BASELINE_RUNS = 3
"""Runs of a target per child process in the comparison with a baseline checkout."""


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
"""``--clock``: wall time, or the process's CPU time (steadier on a shared machine; the
stepping is single-threaded)."""
clock = CLOCKS["wall"]


def run_to_end(stepper) -> tuple[Trajectory, float]:
    """Drive ``stepper`` to its end; return the trajectory and the time (s, ``--clock``)."""
    trajectory = Trajectory(stepper.system)
    start = clock()
    while stepper.status == "running":
        trajectory.append(stepper.step())
    elapsed = clock() - start
    trajectory.status, trajectory.message = stepper.status, stepper.message
    return trajectory, elapsed


def rest_time(scene: Scene) -> float:
    """End (s) of the bouncing-ball target: ``REST_MARGIN`` past the Zeno accumulation time.

    ``t∞ = t₀(1 + e)/(1 − e)`` with ``t₀ = √(2h/g)``: ``h`` is the drop
    height of the ball's centre above its resting height on the
    (horizontal) ground, ``e`` the restitution, ``g`` the magnitude of
    gravity.
    """
    (ball,) = scene.bodies
    (ground,) = scene.boundaries
    h = ball.position[1] - ball.radius - ground.a[1]
    g = math.hypot(*scene.gravity)
    e = scene.contact.restitution
    return math.sqrt(2.0 * h / g) * (1.0 + e) / (1.0 - e) + REST_MARGIN


def median_wall(scene: Scene, t_end: float, repeats: int) -> float:
    """Median wall time (s) of ``repeats`` event-driven runs of ``scene`` to ``t_end`` (s)."""
    walls = [run_to_end(make_stepper(scene, t_end=t_end))[1] for _ in range(repeats)]
    return float(np.median(walls))


def target_cases(scenes: Path = SCENES) -> dict[str, tuple[str, Scene, float, float]]:
    """The targets by name: (what, scene, simulated time in s, wall time allowed in s).

    ``scenes`` is the directory of the bundled scenes (a baseline checkout reads its own).
    """
    ball = load_scene(scenes / BASELINE_SCENE)
    wheel = load_scene(scenes / ACCURACY_SCENE)
    chain = {law: chain_scene(CHAIN_BEADS, law) for law in ("sequential", "staged")}
    return {
        "ball": (
            f"bouncing ball to rest, dt_out = {ball.solver.dt_out:g} s",
            ball,
            rest_time(ball),
            0.01,
        ),
        "wheel": ("paper-004 wheel against the curb", wheel, 1.0, 0.5),
        "chain-sequential": (
            f"{CHAIN_BEADS}-bead chain struck at one end, sequential",
            chain["sequential"],
            1.0,
            1.0,
        ),
        "chain-staged": (
            f"{CHAIN_BEADS}-bead chain struck at one end, staged",
            chain["staged"],
            1.0,
            1.0,
        ),
    }


def targets() -> None:
    """Table 0: each target's median wall time and its ratio to the time allowed."""
    print(f"Targets: median wall time of {TARGET_REPEATS} runs (stepping, frames recorded)")
    header = f"{'case':52} {'sim/s':>7} {'wall/ms':>9} {'target/ms':>9} {'x target':>8}"
    print(header)
    print("-" * len(header))
    for label, scene, simulated, allowed in target_cases().values():
        wall = median_wall(scene, simulated, TARGET_REPEATS)
        print(
            f"{label:52} {simulated:7.4f} {wall * 1e3:9.2f} {allowed * 1e3:9.0f} "
            f"{wall / allowed:8.2f}"
        )
    print()


def time_target(name: str, runs: int) -> None:
    """Print the wall times (s) of ``runs`` runs of one target as JSON (a child process).

    The child runs in the checkout under test: its own scene files, in its format.
    """
    _, scene, simulated, _ = target_cases(Path.cwd() / "resources" / "scenes")[name]
    walls = [run_to_end(make_stepper(scene, t_end=simulated))[1] for _ in range(runs)]
    print(json.dumps(walls))


def against_baseline(baseline: Path, cases: list[str], clock_name: str) -> None:
    """The targets ``cases`` here and in the ``baseline`` checkout, interleaved: medians, ratios.

    ``clock_name`` is the clock of the child processes (``--clock``).
    """
    trees = {"this": Path(__file__).resolve().parents[1], "baseline": baseline.resolve()}
    walls: dict[tuple[str, str], list[float]] = {(c, w): [] for c in cases for w in trees}
    for round_ in range(BASELINE_ROUNDS):
        order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
        for case in cases:
            for which in order:
                env = {**os.environ, "PYTHONPATH": str(trees[which])}
                child = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--clock",
                        clock_name,
                        "--time-target",
                        case,
                        str(BASELINE_RUNS),
                    ],
                    env=env,
                    cwd=trees[which],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                walls[case, which] += json.loads(child.stdout.splitlines()[-1])
    runs = BASELINE_ROUNDS * BASELINE_RUNS
    print(
        f"Targets against {trees['baseline']}: {clock_name} time/ms, "
        f"median [min–max] of {runs} runs"
    )
    header = f"{'case':20} {'baseline':>24} {'this':>24} {'this/baseline':>13}"
    print(header)
    print("-" * len(header))
    for case in cases:
        old, new = walls[case, "baseline"], walls[case, "this"]
        spread = [
            f"{np.median(w) * 1e3:8.2f} [{min(w) * 1e3:.1f}–{max(w) * 1e3:.1f}]" for w in (old, new)
        ]
        print(f"{case:20} {spread[0]:>24} {spread[1]:>24} {np.median(new) / np.median(old):13.2f}")


def scene_costs() -> None:
    """Table 1: every bundled scene with its own settings."""
    paths = sorted(SCENES.glob("*.json"), key=lambda p: (p.name != BASELINE_SCENE, p.name))
    baseline = None
    print("Bundled scenes (own solver settings); baseline: event-driven", BASELINE_SCENE)
    header = (
        f"{'scene':32} {'method':13} {'status':8} {'sim/s':>7} {'wall/sim-s':>11} "
        f"{'events':>7} {'events/sim-s':>12} {'x baseline':>10}"
    )
    print(header)
    print("-" * len(header))
    for path in paths:
        scene = load_scene(path)
        try:
            trajectory, wall = run_to_end(make_stepper(scene))
        except Exception as error:  # a broken scene must not hide the others' numbers
            print(f"{path.stem:32} {scene.solver.method:13} crashed: {error!r}")
            continue
        baseline = baseline or wall
        simulated = trajectory.frames[-1].t if trajectory.frames else math.nan
        n_events = sum(1 for e in trajectory.events if e.type != "error")
        print(
            f"{path.stem:32} {scene.solver.method:13} {trajectory.status:8} {simulated:7.3g} "
            f"{wall / simulated:10.4f}s {n_events:7d} {n_events / simulated:12.1f} "
            f"{wall / baseline:10.2f}"
        )
        if trajectory.status == "failed":
            print(f"{'':32} failed: {trajectory.message}")


def centre_at_end(trajectory: Trajectory) -> np.ndarray:
    """The wheel centre (x, y) at the last sample, m."""
    return trajectory.frames[-1].q[:2]


def accuracy_against_cost() -> None:
    """Table 2: time-stepping against event-driven on the paper-004 wheel."""
    scene: Scene = load_scene(SCENES / ACCURACY_SCENE)
    t_end = scene.solver.t_end
    reference, t_event = run_to_end(
        make_stepper(scene, method="event-driven", dt_out=ACCURACY_DT_OUT)
    )
    x_ref = centre_at_end(reference)
    print()
    print(
        f"Accuracy against cost: {ACCURACY_SCENE}, error of the wheel centre at t = {t_end:g} s "
        f"against event-driven (x, y) = ({x_ref[0]:.9f}, {x_ref[1]:.9f}) m"
    )
    header = f"{'method':28} {'error/m':>10} {'wall/s':>9} {'x event-driven':>14} {'events':>7}"
    print(header)
    print("-" * len(header))
    print(
        f"{'event-driven':28} {'(ref)':>10} {t_event:9.3f} {1.0:14.2f} {len(reference.events):7d}"
    )
    # imported here: it brings numba, whose ~28 000 objects the garbage collector would
    # then walk inside the timed runs of the other tables (a baseline without it would not)
    from solver.timestepping import TimeSteppingStepper

    system = System(scene)
    predicted = 0.0
    for h in STEPS:
        label = f"time-stepping h = {h:.0e} s"
        if predicted > TIME_LIMIT:
            print(f"{label:28} skipped: would take about {predicted:.0f} s (> {TIME_LIMIT:.0f} s)")
            continue
        stepper = TimeSteppingStepper(system, t_end, ACCURACY_DT_OUT, h)
        trajectory, wall = run_to_end(stepper)
        error = float(np.linalg.norm(centre_at_end(trajectory) - x_ref))
        impacts = sum(1 for e in trajectory.events if e.type == "impact")
        print(f"{label:28} {error:10.3e} {wall:9.3f} {wall / t_event:14.2f} {impacts:7d}")
        predicted = 10.0 * wall


def main() -> int:
    """Print the three tables, or the targets against a baseline checkout (``--baseline``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="another checkout to compare the targets")
    parser.add_argument(
        "--cases",
        default=",".join(TARGET_NAMES),
        help="targets compared with --baseline, comma-separated (default: all)",
    )
    parser.add_argument(
        "--clock", choices=tuple(CLOCKS), default="wall", help="time measured (default: wall)"
    )
    parser.add_argument("--time-target", nargs=2, metavar=("CASE", "RUNS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    global clock
    clock = CLOCKS[args.clock]
    if args.time_target:
        time_target(args.time_target[0], int(args.time_target[1]))
        return 0
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}")
    if args.baseline:
        cases = args.cases.split(",")
        unknown = sorted(set(cases) - set(TARGET_NAMES))
        if unknown:
            parser.error(f"--cases: unknown target(s) {', '.join(unknown)}")
        against_baseline(args.baseline, cases, args.clock)
        return 0
    targets()
    scene_costs()
    accuracy_against_cost()
    return 0


if __name__ == "__main__":
    sys.exit(main())
