"""Time one impact on a touching chain of N unit beads struck at one end.

v⁻ = [1, 0, ..., 0], e = 1, laws ``staged`` and ``sequential``. Prints the
time per impact, the growth ratio N → 10 N, and the ratio to the N = 10
staged impact through the dense least-distance route, measured first in the
same process. Then, for N = 1000, the staged impact struck elsewhere (the
middle, the far end, with a wall at bead 0 listed before or after the gaps),
per stage, as a ratio to the strike at the first column: it should not
depend on which column approaches. Asserts nothing (docs/CONTRACT.md, "Working habits": benchmarks
print ratios).

    python bench/impact_chain.py
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from solver.impact import resolve_impact

SIZES = (10, 100, 1000, 10000)


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


def main() -> None:
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
