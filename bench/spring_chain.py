"""Spring chains with impacts, event-driven and exact: the real-time factor per chain length.

    .venv/bin/python bench/spring_chain.py [--beads 50 200 700 1000 1200 2000] [--t-end T]
        [--dt-out D]

The bundled ``chain_forced.json`` pattern with more beads
(:func:`tests.scene_data.forced_spring_chain`):
1 kg beads of radius 0.05 m, 0.2 m apart on one rail, joined by 100 N/m
springs of rest length 0.2 m, the first tied to an anchor 0.2 m before it, a
harmonic force of 10 N at 8 rad/s on the last; restitution 0.8, staged
impact law. The driven end's beads hit each other from t ≈ 1.07 s on. The
700- and 1200-bead chains have a mode within ``SEPARATION`` of the 8 rad/s
(93 beads is the shortest such chain): a cluster of the special modes' small
general flow that is not nilpotent about its mean (minutes for 0.3 s of
motion before its projections and curvature bound were made).

Printed per chain: the wall (and CPU) time to the first step that advances the
clock (set-up included: the first flow's decomposition), the wall and CPU
time of the whole run (:func:`solver.simulation.make_stepper` and
:func:`~solver.simulation.drive`, the CSV files not written), the
simulated time over the CPU time (the real-time factor; > 1 is faster than
real time), the impacts counted, the energy balance's drift
``max |E + E_dissipated − E_input − (E(0))|`` (J), the peak memory of the
process (resident, MB) and the peak Python memory of the run (tracemalloc,
MiB: a second run of the same chain, traced, outside the times; the
trajectory kept in memory included). Goals (issue 21): 200 beads at least
1× real time, 1000 beads at least 0.2×; memory O(N) but for the modal
flow's N × N ``Φ`` (``--no-memory`` skips the traced run). Never asserted.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from solver.record import Trajectory
from solver.scene import parse_scene
from solver.simulation import drive, make_stepper
from tests.scene_data import forced_spring_chain

GOALS = {200: 1.0, 1000: 0.2}
"""Least real-time factor per chain length (issue 21)."""


def run(beads: int, t_end: float, dt_out: float) -> dict[str, float]:
    """One chain run: times, impacts and the energy balance's drift."""
    scene = parse_scene(forced_spring_chain(beads, t_end, dt_out))
    wall0, cpu0 = time.perf_counter(), time.process_time()
    stepper = make_stepper(scene)
    trajectory = Trajectory(stepper.system)
    while stepper.status == "running" and stepper.t == 0.0:
        trajectory.append(stepper.step())
    first = time.perf_counter() - wall0
    first_cpu = time.process_time() - cpu0
    drive(stepper, trajectory)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    impacts = sum(1 for event in trajectory.events if event.type == "impact")
    e = trajectory.energies()  # kinetic, potential, spring, total, dissipated, input
    balance = e[:, 3] + e[:, 4] - e[:, 5]
    return {
        "first": first,
        "first_cpu": first_cpu,
        "wall": wall,
        "cpu": cpu,
        "t": stepper.t,
        "impacts": impacts,
        "drift": float(np.max(np.abs(balance - balance[0]))),
        "status": trajectory.status,
    }


def traced_peak(beads: int, t_end: float, dt_out: float) -> float:
    """Peak Python memory (MiB, tracemalloc) of one chain run, set-up and trajectory included."""
    tracemalloc.start()
    try:
        scene = parse_scene(forced_spring_chain(beads, t_end, dt_out))
        stepper = make_stepper(scene)
        drive(stepper, Trajectory(stepper.system))
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--beads", type=int, nargs="+", default=[50, 200, 700, 1000, 1200, 2000])
    parser.add_argument("--t-end", type=float, default=2.0)
    parser.add_argument("--dt-out", type=float, default=0.01)
    parser.add_argument("--no-memory", action="store_true", help="skip the traced runs")
    args = parser.parse_args(argv)
    print(f"spring chains, t_end = {args.t_end} s, dt_out = {args.dt_out} s")
    print(f"{'beads':>6} {'first step (CPU)':>17} {'wall':>8} {'CPU':>8} {'x real time':>12} "
          f"{'goal':>9} {'impacts':>8} {'drift J':>9} {'peak MB':>8} {'traced':>10}")  # fmt: skip
    for beads in args.beads:
        row = run(beads, args.t_end, args.dt_out)
        factor = row["t"] / row["cpu"]
        goal = GOALS.get(beads)
        mark = "" if goal is None else f"{goal:g}x " + ("ok" if factor >= goal else "MISSED")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
        traced = "-" if args.no_memory else f"{traced_peak(beads, args.t_end, args.dt_out):.1f}"
        print(
            f"{beads:>6} {row['first']:>6.2f}s ({row['first_cpu']:>5.2f}s) "
            f"{row['wall']:>7.2f}s {row['cpu']:>7.2f}s "
            f"{factor:>11.3f}x {mark:>9} {row['impacts']:>8} {row['drift']:>9.1e} {peak:>8.0f}"
            f" {traced:>10}"
            f"  {row['status']}"
        )


if __name__ == "__main__":
    main()
