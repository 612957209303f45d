"""Reference for the sequential law on a jam: two beads between two walls, one collision at a time.

Written independently of ``solver.impact`` so tests can check both the law
and the engine against it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

JAM_G = np.array([[1.0, -1.0, 0.0], [0.0, 1.0, -1.0]])
"""Columns: left wall–b0, b0–b1, b1–right wall; ``u_n = Gᵀ v`` (m/s)."""


def jammed_pair_cascade(
    masses: Sequence[float], v_minus: Sequence[float], e: float
) -> tuple[np.ndarray, np.ndarray]:
    """Newton's law on the most negative approach speed, with that contact's effective mass.

    Repeats until no contact approaches faster than 1e-15 m/s. Returns the
    summed impulses per contact (N·s) and the final velocities (m/s).
    """
    M_inv = np.diag(1.0 / np.asarray(masses, dtype=float))
    effective = 1.0 / np.diag(JAM_G.T @ M_inv @ JAM_G)
    v, impulses = np.array(v_minus, dtype=float), np.zeros(3)
    for _ in range(1_000_000):
        u = JAM_G.T @ v
        k = int(np.argmin(u))
        if u[k] > -1e-15:
            break
        step = -(1.0 + e) * u[k] * effective[k]
        impulses[k] += step
        v = v + M_inv @ JAM_G[:, k] * step
    return impulses, v
