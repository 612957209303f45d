"""Time one impact on a touching chain of N unit beads struck at one end.

v⁻ = [1, 0, ..., 0], e = 1, laws ``staged`` and ``sequential``. Prints the
time per impact, the growth ratio N → 10 N, and the ratio to the N = 10
staged impact through the dense least-distance route, measured first in the
same process. Asserts nothing (DESIGN.md: benchmarks print ratios).

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
    G = sp.diags_array([-np.ones(N - 1), np.ones(N - 1)], offsets=[0, -1],
                       shape=(N, N - 1)).tocsc()
    v = np.zeros(N)
    v[0] = 1.0
    return np.ones(N), G, v


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


if __name__ == "__main__":
    main()
