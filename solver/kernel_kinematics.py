"""Contact kinematics of one pair, for the compiled Moreau–Jean loop.

:func:`_pair_kinematics` computes a disk–feature (segment, vertex, arc) or
disk–disk pair's gap, normal, contact point and relative speeds as
:mod:`solver.contact_arrays` does (MECHANICS §1); :func:`_disk_motion` reads a
disk's centre, centre velocity and spin from ``q`` and ``v``. Marked
:func:`~solver.kernel_tables.jitable`: compiled into
:func:`solver.timestep_kernels.quiet_steps`, plain Python otherwise.
"""

from __future__ import annotations

import math

import numpy as np

from solver.kernel_tables import DISK, SEGMENT, VERTEX
from solver.kernel_tables import jitable as _jitable


@_jitable
def _pair_kinematics(
    kind: int, c_i: np.ndarray, cd_i: np.ndarray, rolling_i: float, r_i: float,
    c_j: np.ndarray, cd_j: np.ndarray, rolling_j: float, r_j: float,
    a: np.ndarray, b: np.ndarray, arc: np.ndarray, out: np.ndarray,
) -> bool:  # fmt: skip
    """Kinematics of one pair as :mod:`solver.contact_arrays` computes them.

    ``rolling_i = ω_i`` (and ``ω_j`` of the other disk). Writes
    ``(g, n_x, n_y, point_x, point_y, u_n, u_t, gamma_n)`` to ``out`` and
    returns whether they exist (``valid``).
    """
    curvature = 0.0
    if kind == DISK:
        wx, wy = c_i[0] - c_j[0], c_i[1] - c_j[1]
        d = math.hypot(wx, wy)
        valid = d > 0.0
        nx, ny = (wx / d, wy / d) if d != 0.0 else (0.0, 0.0)
        curvature = 1.0 / d if d != 0.0 else 0.0
        g = d - r_i - r_j
        px, py = c_j[0] + r_j * nx, c_j[1] + r_j * ny
        vx, vy = cd_i[0] - cd_j[0], cd_i[1] - cd_j[1]
        rolling = r_i * rolling_i + r_j * rolling_j
    elif kind == SEGMENT:
        ex, ey = b[0] - a[0], b[1] - a[1]
        length2 = ex * ex + ey * ey
        s = ((c_i[0] - a[0]) * ex + (c_i[1] - a[1]) * ey) / length2
        px, py = a[0] + s * ex, a[1] + s * ey
        wx, wy = c_i[0] - px, c_i[1] - py
        d = math.hypot(wx, wy)
        if d != 0.0:
            nx, ny = wx / d, wy / d
        else:
            length = math.sqrt(length2)
            nx, ny = -ey / length, ex / length
        valid = (s > 0.0) and (s < 1.0)
        g = d - r_i
        vx, vy = cd_i[0], cd_i[1]
        rolling = r_i * rolling_i
    elif kind == VERTEX:
        wx, wy = c_i[0] - a[0], c_i[1] - a[1]
        d = math.hypot(wx, wy)
        valid = d > 0.0
        nx, ny = (wx / d, wy / d) if d != 0.0 else (0.0, 0.0)
        curvature = 1.0 / d if d != 0.0 else 0.0
        g = d - r_i
        px, py = a[0], a[1]
        vx, vy = cd_i[0], cd_i[1]
        rolling = r_i * rolling_i
    else:
        wx, wy = c_i[0] - a[0], c_i[1] - a[1]
        rho = math.hypot(wx, wy)
        ux, uy = (wx / rho, wy / rho) if rho != 0.0 else (0.0, 0.0)
        theta = math.atan2(wy, wx)
        angle = (theta - arc[1]) % (2.0 * math.pi)
        valid = rho > 0.0 and (arc[2] == 2.0 * math.pi or (angle > 0.0 and angle < arc[2]))
        side = 1.0 if rho >= arc[0] else -1.0
        curvature = side * (1.0 / rho if rho != 0.0 else 0.0)
        g = abs(rho - arc[0]) - r_i
        nx, ny = side * ux, side * uy
        px, py = a[0] + arc[0] * ux, a[1] + arc[0] * uy
        vx, vy = cd_i[0], cd_i[1]
        rolling = r_i * rolling_i
    u_n = nx * vx + ny * vy
    ndx, ndy = curvature * (vx - nx * u_n), curvature * (vy - ny * u_n)
    out[0] = g
    out[1], out[2] = nx, ny
    out[3], out[4] = px, py
    out[5] = u_n
    out[6] = (ny * vx - nx * vy) + rolling
    out[7] = vx * ndx + vy * ndy
    return valid


@_jitable
def _disk_motion(
    k: int, q: np.ndarray, v: np.ndarray, ix: np.ndarray, iy: np.ndarray, iphi: np.ndarray,
    rail_y: np.ndarray, c: np.ndarray, cd: np.ndarray,
) -> float:  # fmt: skip
    """Centre and centre velocity of disk ``k`` into ``c`` and ``cd``; returns ``ω``."""
    c[0], cd[0] = q[ix[k]], v[ix[k]]
    if iy[k] < 0:
        c[1], cd[1] = rail_y[k], 0.0
        return 0.0
    c[1], cd[1] = q[iy[k]], v[iy[k]]
    return v[iphi[k]]
