"""Time one impact on a touching chain of N unit beads struck at one end.

v⁻ = [1, 0, ..., 0], e = 1, laws ``staged`` and ``sequential``. Prints the
time per impact, the growth ratio N → 10 N, and the ratio to the N = 10
staged impact through the dense least-distance route, measured first in the
same process. Then, for N = 1000, the staged impact struck elsewhere (the
middle, the far end, with a wall at bead 0 listed before or after the gaps),
per stage, as a ratio to the strike at the first column: it should not
depend on which column approaches. Asserts nothing (docs/CONTRACT.md, "Working habits": benchmarks
print ratios).

    python bench/impact_chain.py [--events]

With ``--events`` it prints only the cost per event of the whole event-driven
run of ``bench/peer.py``'s chain rows (1 s, System build included, one output
frame) against a minimal event loop on numpy arrays that makes the same
collisions (:func:`minimal_event_loop`), per ``impact`` event, medians of
``REPEATS`` interleaved runs in CPU time (issue 12: within 10× of the minimal
loop).
"""

from __future__ import annotations

import argparse
import heapq
import statistics
import time

import numpy as np
import scipy.sparse as sp
from event_driven_profile import chain_scene

from solver.impact import resolve_impact
from solver.record import Trajectory
from solver.simulation import make_stepper
from solver.system import System

SIZES = (10, 100, 1000, 10000)
EVENT_SIZES = (1000, 10000)
REPEATS = 5


def chain(N: int) -> tuple[np.ndarray, sp.csc_array, np.ndarray]:
    """Unit masses (as a diagonal), gap columns x_{i+1} − x_i, the struck velocity."""
    G = sp.diags_array([-np.ones(N - 1), np.ones(N - 1)], offsets=[0, -1], shape=(N, N - 1)).tocsc()
    v = np.zeros(N)
    v[0] = 1.0
    return np.ones(N), G, v


def struck_chain(N: int, where: str, wall: str) -> tuple[np.ndarray, sp.csc_array, np.ndarray]:
    """A resting chain (speeds of round-off size) with one bead struck ``where``.

    ``wall`` is ``"none"``, or where a wall at bead 0 (column e_0) is listed among
    the constraints: ``"first"`` or ``"last"``.
    """
    masses, G, _ = chain(N)
    if wall != "none":
        wall_column = sp.csc_array(([1.0], ([0], [0])), shape=(N, 1))
        G = sp.hstack([wall_column, G] if wall == "first" else [G, wall_column]).tocsc()
    v = 1e-17 * np.random.default_rng(0).normal(size=N)
    struck = {"first": 0, "middle": N // 2, "far end": N - 1}[where]
    v[struck] = 1.0 if where == "first" else -1.0
    return masses, G, v


def seconds_per_impact(M, G, v, law: str) -> float:
    """Best of a few repetitions (s); repetitions shrink as the impact gets slower."""
    best = np.inf
    deadline = time.perf_counter() + 1.0
    for _ in range(20):
        start = time.perf_counter()
        resolve_impact(M, G, v, 1.0, law)
        best = min(best, time.perf_counter() - start)
        if time.perf_counter() > deadline:
            break
    return best


def minimal_event_loop(x: np.ndarray, v: np.ndarray, radius: float, e: float, t_end: float):
    """The least an event loop does for a touching chain of unit beads: the same collisions.

    The beads' gaps and approach speeds are numpy arrays; the most negative
    approach speed comes from a heap, each collision is Newton's law on one
    pair (unit masses: impulse ``(1 + e) u / 2``), writes its event (pair,
    impulse) to preallocated arrays and updates two velocities and the two
    or three speeds around it. Then the beads fly to ``t_end`` (s). This is
    the ``sequential`` law of :mod:`solver.impact` on a chain without the
    engine's generality (contact detection, Jacobians, phases, output frames).

    Returns the positions (m) and velocities (m/s) at ``t_end`` and the
    events ``(pair index, impulse)``.
    """
    v = v.astype(float).tolist()
    gaps = np.diff(x) - 2.0 * radius
    touching = np.nonzero(np.abs(gaps) <= 1e-12)[0].tolist()
    u = {i: v[i + 1] - v[i] for i in touching}
    heap = [(u_i, i) for i, u_i in u.items()]
    heapq.heapify(heap)
    pairs = np.empty(len(x) * 4, dtype=np.intp)
    impulses = np.empty(len(x) * 4)
    count = 0
    while heap:
        u_i, i = heapq.heappop(heap)
        if u_i != u[i]:
            continue  # stale
        if u_i >= 0.0:
            break
        dv = -(1.0 + e) * u_i / 2.0
        v[i] -= dv
        v[i + 1] += dv
        pairs[count], impulses[count] = i, dv
        count += 1
        for k in (i - 1, i, i + 1):
            if k in u:
                u[k] = v[k + 1] - v[k]
                heapq.heappush(heap, (u[k], k))
    v = np.array(v)
    return x + v * t_end, v, pairs[:count], impulses[:count]


def engine_run(scene) -> tuple[int, np.ndarray]:
    """bench/peer.py's chain row: build, run 1 s with one output frame.

    Returns the number of ``impact`` events and the velocities at the end (m/s).
    """
    stepper = make_stepper(System(scene), t_end=1.0, dt_out=1.0, method="event-driven")
    trajectory = Trajectory(stepper.system)
    while stepper.status == "running":
        trajectory.append(stepper.step())
    return sum(1 for e in trajectory.events if e.type == "impact"), trajectory.frames[-1].v


def per_event() -> None:
    """Engine and minimal loop per impact event (µs, CPU time), interleaved medians."""
    print(f"per impact event, CPU time, medians of {REPEATS} interleaved runs")
    print(
        f"{'N':>7}{'events':>8}{'engine µs':>11}{'minimal µs':>12}{'ratio':>8}  {'spread':<12}"
        "largest velocity difference (m/s)"
    )
    for n in EVENT_SIZES:
        scene = chain_scene(n)
        x = np.array([body.x for body in scene.bodies])
        v0 = np.array([body.vx for body in scene.bodies])
        events, v_engine = engine_run(scene)  # warm up; what the engine makes
        _, v_loop, pairs, _ = minimal_event_loop(x, v0, 0.5, 1.0, 1.0)
        loop_events = len(pairs)
        engine, minimal = [], []
        for _ in range(REPEATS):
            start = time.process_time()
            engine_run(scene)
            engine.append((time.process_time() - start) / events)
            start = time.process_time()
            minimal_event_loop(x, v0, 0.5, 1.0, 1.0)
            minimal.append((time.process_time() - start) / loop_events)
        ratios = [a / b for a, b in zip(engine, minimal, strict=True)]
        print(
            f"{n:>7}{events:>8}{statistics.median(engine) * 1e6:>11.2f}"
            f"{statistics.median(minimal) * 1e6:>12.2f}{statistics.median(ratios):>8.1f}  "
            f"{f'{min(ratios):.1f}–{max(ratios):.1f}':<12}"
            f"{float(np.max(np.abs(v_loop - v_engine))):.2g}"
            + ("" if loop_events == events else f"  (minimal loop: {loop_events} events)")
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", action="store_true", help="only the per-event comparison")
    if parser.parse_args().events:
        per_event()
        return
    masses, G, v = chain(10)
    baseline = seconds_per_impact(np.diag(masses), G.toarray(), v, "staged")
    print(f"baseline: N=10 staged, dense route: {baseline * 1e3:.3f} ms\n")
    print(f"{'law':<11}{'N':>7}{'ms/impact':>12}{'x baseline':>12}{'N->10N':>9}")
    for law in ("staged", "sequential"):
        previous = None
        for N in SIZES:
            t = seconds_per_impact(*chain(N), law)
            growth = f"{t / previous:9.1f}" if previous else f"{'':>9}"
            print(f"{law:<11}{N:>7}{t * 1e3:>12.3f}{t / baseline:>12.1f}{growth}")
            previous = t

    N = 1000
    cases = [
        (where, wall)
        for wall in ("none", "first", "last")
        for where in ("first", "middle", "far end")
    ]
    print(f"\nstaged, N={N}, resting chain (round-off speeds), struck at:")
    print(
        f"{'bead':<9}{'wall at 0':<11}{'stages':>7}{'ms/impact':>11}{'ms/stage':>10}{'x first':>9}"
    )
    reference = None
    for where, wall in cases:
        M, G, v = struck_chain(N, where, wall)
        stages = len(resolve_impact(M, G, v, 1.0).stages)
        t = seconds_per_impact(M, G, v, "staged")
        per_stage = t / stages
        reference = reference or per_stage
        listed = "no wall" if wall == "none" else f"col {wall}"
        print(
            f"{where:<9}{listed:<11}{stages:>7}{t * 1e3:>11.3f}{per_stage * 1e3:>10.3f}"
            f"{per_stage / reference:>9.1f}"
        )


if __name__ == "__main__":
    main()
