"""Sweep benchmark: a frequency sweep of a harmonically forced mass between two stops.

Run with ``python bench/sweep.py [--points N] [--periods P]`` (default: the
issue's 500 points of 200 forcing periods each). Prints figures and asserts
nothing (benchmarks print ratios, never timed assertions).

The scene (``resources/scenes/forced_mass_between_stops.json``): a 1 kg bead
between two stops 0.2 m of free travel apart (restitution 0.8), driven by
``F = 20 N · sin(ω t)``; the sweep varies
``forces[0].omega`` evenly over ``[OMEGA_LOW, OMEGA_HIGH]`` rad/s and runs
every point for ``P`` periods of the lowest frequency (so at least ``P``
periods each), sampling only the end (``solver.dt_out = t_end``: a sweep
keeps impacts and the final state, not the trajectory).

Figures: the CPU time of a point and of an impact, measured in this
process on ``--cpu-points`` points spread over the band (a busy machine
slows the wall time of a sweep, far less the CPU time of one process), and
the wall time the full 500 × 200 sweep would take on two idle cores at that
rate; then the wall time with one worker and with two, their ratio (the
target is 2 within 20 %: 1.6 to 2.4), points per second, the wall time the
full sweep takes at the measured two-worker rate against the 60 s target,
and whether the two runs wrote the same bytes. ``--cpu-only`` skips the
sweeps. ``--shares`` also prints where an impact's CPU time goes, measured
on the same points: a phase of the fast path for beads between stops (its
first closing and the state there, one compiled call: ``_stop_phase``) and
its impact (``_stop_impact``), the frames and Zeno watch of an impact, the
general path's scan and root (``_linear_scan``), its check for missed
closings (``_missed``) and its impact (``_handle``: contact set, law,
contact problem), the phase's set-up (``_candidates``, the flow), and the
rest (the step loop, the sweep's own records). The first point of the band
runs once untimed before: it loads (or compiles) the compiled loops.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from solver.candidates import CandidateSearch
from solver.event_handling import EventHandler
from solver.event_location import EventLocator
from solver.flight import SmoothMotion
from solver.gap_roots import GapRoots
from solver.output_frames import Recorder
from solver.scene import parse_scene
from solver.stop_phases import StopPhase
from solver.sweep import Axis, Sweep, one_blas_thread, run_point
from solver.zeno_series import ZenoSummer

SCENE = (
    Path(__file__).resolve().parents[1] / "resources" / "scenes" / "forced_mass_between_stops.json"
)
OMEGA_LOW, OMEGA_HIGH = 6.0, 20.0
"""Forcing frequencies swept, rad/s."""
TARGET_POINTS, TARGET_PERIODS, TARGET_SECONDS = 500, 200, 60.0


def forced_mass_scene(periods: float) -> dict:
    """The example scene as a JSON object, run for ``periods`` periods of the lowest frequency."""
    data = json.loads(SCENE.read_text(encoding="utf-8"))
    t_end = periods * 2.0 * math.pi / OMEGA_LOW
    data["solver"] = {**data["solver"], "t_end": t_end, "dt_out": t_end}
    return data


def timed_sweep(plan: Sweep, workers: int, out_dir: Path) -> tuple[float, bytes, int]:
    """Wall time (s), the bytes of both files, and the number of impacts."""
    start = time.perf_counter()
    result = plan.run(workers=workers)
    elapsed = time.perf_counter() - start
    paths = result.write_csv(out_dir)
    data = paths["summary"].read_bytes() + paths["impacts"].read_bytes()
    return elapsed, data, sum(point.n_impacts for point in result.points)


STAGES = {
    "closing and state (fast path)": ((StopPhase, "stop_phase"),),
    "impact (fast path)": ((StopPhase, "_stop_impact"),),
    "frames and Zeno watch": ((Recorder, "frame"), (ZenoSummer, "check_zeno")),
    "scan and root (general)": ((EventLocator, "linear_scan"),),
    "missed-event check (general)": ((GapRoots, "missed"),),
    "impact (general)": ((EventHandler, "handle"),),
    "phase set-up": (
        (CandidateSearch, "candidates"),
        (SmoothMotion, "free_flow"),
        (SmoothMotion, "linear_motion"),
    ),
}
"""Stages of an impact's path and the methods of the stepper's parts that make them (each
stage's time is its own: what the methods of another stage called from it take counts there)."""


@contextmanager
def stage_clock() -> Iterator[dict[str, float]]:
    """CPU seconds (this thread's) spent in each of ``STAGES`` while the block runs.

    The stepper's methods are wrapped for the block's duration and restored
    after it; a stage's time excludes that of the stages it calls.
    """
    spent = dict.fromkeys(STAGES, 0.0)
    running: list[str] = []  # the stages entered and not left, innermost last
    mark = [0.0]  # when the innermost stage last started counting

    def switch(to: str | None) -> None:
        now = time.thread_time()
        if running:
            spent[running[-1]] += now - mark[0]
        if to is None:
            running.pop()
        else:
            running.append(to)
        mark[0] = now

    saved = []
    for stage, names in STAGES.items():
        for part, name in names:
            method = getattr(part, name)
            saved.append((part, name, method))

            def timed(*args: Any, _method: Any = method, _stage: str = stage, **kwargs: Any) -> Any:
                switch(_stage)
                try:
                    return _method(*args, **kwargs)
                finally:
                    switch(None)

            setattr(part, name, timed)
    try:
        yield spent
    finally:
        for part, name, method in saved:
            setattr(part, name, method)


def cpu_per_point(plan: Sweep, count: int) -> tuple[list[float], int]:
    """CPU times (s) of ``count`` points spread evenly over ``plan``, run in this process.

    Returns the time of each point and the number of impacts of them all.
    """
    runs = sorted({round(k * (len(plan) - 1) / max(count - 1, 1)) for k in range(count)})
    times, impacts = [], 0
    for run in runs:
        start = time.process_time()
        point = run_point(plan.task(run))
        times.append(time.process_time() - start)
        impacts += point.n_impacts
    return times, impacts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=TARGET_POINTS)
    parser.add_argument("--periods", type=float, default=TARGET_PERIODS)
    parser.add_argument("--cpu-points", type=int, default=6)
    parser.add_argument("--cpu-only", action="store_true")
    parser.add_argument("--shares", action="store_true")
    args = parser.parse_args(argv)
    scene = parse_scene(forced_mass_scene(args.periods))
    plan = Sweep(
        scene,
        [Axis.linspace("forces[0].omega", OMEGA_LOW, OMEGA_HIGH, args.points)],
        transient=scene.solver.t_end / 2,
    )
    print(
        f"forced mass between two stops: {args.points} points, {args.periods:g} periods "
        f"of {2 * math.pi / OMEGA_LOW:.4g} s each (t_end = {scene.solver.t_end:.4g} s)"
    )
    print(f"  cores {os.cpu_count()}, load average {os.getloadavg()[0]:.2f} (other work skews)")
    one_blas_thread()  # as in a sweep's workers
    run_point(plan.task(0))  # loads (or compiles) the compiled loops
    times, hits = cpu_per_point(plan, args.cpu_points)
    mean, count = sum(times) / len(times), len(times)
    idle = TARGET_POINTS * (TARGET_PERIODS / args.periods) * mean / 2
    print(
        f"  CPU per point ({count} points)   {mean:8.3f} s  ({min(times):.3f}-{max(times):.3f} s; "
        f"{1e3 * sum(times) / max(hits, 1):.3f} ms per impact, {hits / count:.0f} impacts)"
    )
    print(
        f"  full {TARGET_POINTS} x {TARGET_PERIODS} sweep on 2 idle cores  {idle:8.1f} s  "
        f"(target {TARGET_SECONDS:g} s: ratio {idle / TARGET_SECONDS:.2f})"
    )
    if args.shares:
        with stage_clock() as spent:
            start = time.thread_time()
            times, hits = cpu_per_point(plan, args.cpu_points)
            total = time.thread_time() - start
        print(
            f"  where an impact's CPU time goes ({hits} impacts, {1e3 * total / hits:.3f} ms each):"
        )
        for stage, seconds in [*spent.items(), ("the rest", total - sum(spent.values()))]:
            print(f"    {stage:32s} {1e6 * seconds / hits:7.0f} us  {100 * seconds / total:5.1f} %")
    if args.cpu_only:
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        one, bytes_one, impacts = timed_sweep(plan, 1, Path(tmp) / "one")
        two, bytes_two, _ = timed_sweep(plan, 2, Path(tmp) / "two")
    rate = args.points / two
    full = TARGET_POINTS * (TARGET_PERIODS / args.periods) / rate
    print(f"  impacts computed per sweep    {impacts}  ({impacts / args.points:.0f} per point)")
    print(f"  1 worker                      {one:8.2f} s  ({args.points / one:.3g} points/s)")
    print(f"  2 workers                     {two:8.2f} s  ({rate:.3g} points/s)")
    print(f"  speed-up 1 -> 2 workers       {one / two:8.2f}   (target 2 within 20 %: 1.6-2.4)")
    print(
        f"  full {TARGET_POINTS} x {TARGET_PERIODS} sweep, 2 workers  {full:8.1f} s  "
        f"(target {TARGET_SECONDS:g} s: ratio {full / TARGET_SECONDS:.2f})"
    )
    print(f"  same bytes for 1 and 2 workers: {bytes_one == bytes_two}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
