"""The springs of a scene as arrays: forces, energy and damping power in a few numpy calls.

A scene may hold thousands of springs (a long chain, or one pair joined by
many): one Python call per spring and per right-hand side made such scenes
minutes long. Every quantity here is computed for all springs at once, and
sums over springs are taken in scene order (``np.cumsum``, ``np.add.at``:
both strictly sequential), so the results are bit for bit those of a loop
over the springs.

A spring joins end a (a disk) to end b (a disk, or a fixed anchor point).
With ``d = c_a − c_b`` (m), length ``L = |d|``, unit direction ``e = d/L``
and extension rate ``L̇ = e·(ċ_a − ċ_b)`` (m/s), the force on end a is
``−(k (L − L0) + c L̇) e`` (N) and end b gets the opposite; a spring of zero
rest length pulls with ``−k d − c (ċ_a − ċ_b)`` (no direction needed).
Its energy is ``½ k (L − L0)²`` (J) and its damper dissipates ``c L̇²``
(W; ``c |ċ_a − ċ_b|²`` at zero rest length).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

ROWS_PER_CHUNK_ELEMENTS = 1 << 22
"""Largest (samples × springs) block evaluated at once by :meth:`SpringSet.rail_energies`."""


class SpringSet:
    """All springs of a :class:`solver.system.System`, one array entry per spring, in scene order.

    Parameters
    ----------
    end_a : sequence of int
        Disk index of each spring's end a.
    end_b : sequence of int or None
        Disk index of end b, or None where the spring ends at an anchor.
    anchors : sequence of array_like or None
        Anchor point (m) where ``end_b`` is None.
    stiffness, rest_length, damping : sequence of float
        ``k`` (N/m), ``L0`` (m) and ``c`` (N·s/m) of each spring.
    """

    def __init__(
        self,
        end_a: Sequence[int],
        end_b: Sequence[int | None],
        anchors: Sequence[np.ndarray | None],
        stiffness: Sequence[float],
        rest_length: Sequence[float],
        damping: Sequence[float],
    ) -> None:
        self.a = np.asarray(end_a, dtype=int).reshape(-1)
        self.to_anchor = np.array([b is None for b in end_b], dtype=bool).reshape(-1)
        self.b = np.array([0 if b is None else b for b in end_b], dtype=int).reshape(-1)
        self.anchor = np.zeros((len(self.a), 2))
        for s, point in enumerate(anchors):
            if point is not None:
                self.anchor[s] = point
        self.stiffness = np.asarray(stiffness, dtype=float).reshape(-1)
        self.rest_length = np.asarray(rest_length, dtype=float).reshape(-1)
        self.damping = np.asarray(damping, dtype=float).reshape(-1)
        self._zero_rest = self.rest_length == 0.0
        self.has_damping = bool(np.any(self.damping != 0.0))

    def __len__(self) -> int:
        return len(self.a)

    def _other_ends(self, c: np.ndarray, cd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Positions (m) and velocities (m/s) of every spring's end b, shape (S, 2) each."""
        anchored = self.to_anchor[:, None]
        return np.where(anchored, self.anchor, c[self.b]), np.where(anchored, 0.0, cd[self.b])

    def _directions(
        self, c: np.ndarray, cd: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(d, ḋ, e, L)``: end-to-end vector (m), its rate (m/s), unit direction, length (m)."""
        pb, vb = self._other_ends(c, cd)
        d = c[self.a] - pb
        d_rate = cd[self.a] - vb
        length = np.hypot(d[:, 0], d[:, 1])
        e = np.zeros_like(d)
        np.divide(d, length[:, None], out=e, where=length[:, None] > 0.0)
        return d, d_rate, e, length

    def forces_on_a(self, c: np.ndarray, cd: np.ndarray) -> np.ndarray:
        """Force of every spring on its end a (N), shape (S, 2); end b gets the opposite.

        Parameters
        ----------
        c, cd : numpy.ndarray, shape (K, 2)
            Disk centres (m) and their velocities (m/s).
        """
        d, d_rate, e, length = self._directions(c, cd)
        rate = e[:, 0] * d_rate[:, 0] + e[:, 1] * d_rate[:, 1]
        scale = self.stiffness * (length - self.rest_length) + self.damping * rate
        force = -scale[:, None] * e
        zero = self._zero_rest
        if zero.any():
            force[zero] = (
                -self.stiffness[zero, None] * d[zero] - self.damping[zero, None] * d_rate[zero]
            )
        return force

    def energy(self, c: np.ndarray) -> float:
        """Elastic energy ``Σ ½ k (L − L0)²`` of all springs (J), summed in scene order."""
        if not len(self):
            return 0.0
        pb = np.where(self.to_anchor[:, None], self.anchor, c[self.b])
        d = c[self.a] - pb
        length = np.hypot(d[:, 0], d[:, 1])
        return _sum_in_order(0.5 * self.stiffness * (length - self.rest_length) ** 2)

    def damping_power(self, c: np.ndarray, cd: np.ndarray) -> float:
        """Power dissipated by all dampers (W, ≥ 0), summed in scene order."""
        if not self.has_damping:
            return 0.0
        _, d_rate, e, _ = self._directions(c, cd)
        rate = e[:, 0] * d_rate[:, 0] + e[:, 1] * d_rate[:, 1]
        rel2 = d_rate[:, 0] * d_rate[:, 0] + d_rate[:, 1] * d_rate[:, 1]
        power = self.damping * np.where(self._zero_rest, rel2, rate * rate)
        return _sum_in_order(power[self.damping != 0.0])

    def rail_energies(self, X: np.ndarray, rail_y: np.ndarray) -> np.ndarray:
        """Elastic energy (J) of bead-only states, one value per row of ``X``.

        Parameters
        ----------
        X : numpy.ndarray, shape (n, K)
            Rail coordinates (m) of the disks (beads), one state per row.
        rail_y : numpy.ndarray, shape (K,)
            Height (m) of each bead's rail.
        """
        out = np.zeros(len(X))
        if not len(self) or not len(X):
            return out
        anchored = self.to_anchor
        dy = rail_y[self.a] - np.where(anchored, self.anchor[:, 1], rail_y[self.b])
        step = max(1, ROWS_PER_CHUNK_ELEMENTS // len(self))
        for start in range(0, len(X), step):
            rows = X[start : start + step]
            bx = np.where(anchored, self.anchor[:, 0], rows[:, self.b])
            length = np.hypot(rows[:, self.a] - bx, dy)
            terms = 0.5 * self.stiffness * (length - self.rest_length) ** 2
            out[start : start + step] = np.cumsum(terms, axis=1)[:, -1]
        return out


def _sum_in_order(values: np.ndarray) -> float:
    """``values[0] + values[1] + …`` left to right, as a loop would add them."""
    return float(np.cumsum(values)[-1]) if len(values) else 0.0
