"""Contact kinematics on arrays: many pairs of one kind at once, no object per contact.

The per-contact functions of :mod:`solver.geometry` build one
:class:`~solver.geometry.DiskContact` per pair, which costs a few
microseconds of Python each; a chain of 10⁴ beads has 10⁴ contacts. Here the
same quantities (MECHANICS §1) are computed for all candidate pairs of a kind in
one pass of numpy operations:

* gap ``g`` (m), unit normal ``n`` from the obstacle to the disk, tangent
  ``t = (n_y, −n_x)``, contact point (m);
* normal and slip speeds ``u_n = n·ċ_rel``, ``u_t = t·ċ_rel + r_i ω_i (+ r_j ω_j)`` (m/s);
* curvature terms ``gamma_n = ċ_relᵀ ∇²d ċ_rel`` and ``gamma_t = ṫ·ċ_rel`` (m/s²);
* the generalized Jacobian rows ``G`` and ``H`` (``u_n = G·v``,
  ``u_t = H·v``) as :class:`SparseRows`: column indices and values of fixed
  width, never a length-N vector per contact.

Kinds: disk–disk (beads on a rail included: their centres' ``y`` is the
rail's and their ``ẏ`` is 0), disk–segment, disk–vertex, disk–arc. A row is
``valid`` where the scalar function would answer (the centre inside the
feature's Voronoi region, distinct centres).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
import scipy.sparse as sp

from solver.geometry import Arc, DiskContact, Feature, Segment, Vertex

TWO_PI = 2.0 * math.pi


@dataclass(frozen=True, eq=False)
class ContactArrays:
    """Kinematics of ``K`` disk contacts at one instant, one row each (see module doc).

    Attributes
    ----------
    i : numpy.ndarray of int, shape (K,)
        Disk index of the disk that owns the contact.
    j : numpy.ndarray of int, shape (K,)
        The other disk of a disk–disk pair, −1 against a boundary feature.
    feature : numpy.ndarray of int, shape (K,)
        Index of the boundary feature, −1 for a disk–disk pair.
    valid : numpy.ndarray of bool, shape (K,)
        The kinematics exist (see module doc); the other fields are
        meaningful only there.
    g, u_n, u_t, gamma_n, gamma_t : numpy.ndarray, shape (K,)
        Gap (m), normal and slip speeds (m/s), curvature terms (m/s²).
    n, t, point : numpy.ndarray, shape (K, 2)
        Normal, tangent (unit) and contact point (m).
    """

    i: np.ndarray
    j: np.ndarray
    feature: np.ndarray
    valid: np.ndarray
    g: np.ndarray
    n: np.ndarray
    t: np.ndarray
    point: np.ndarray
    u_n: np.ndarray
    u_t: np.ndarray
    gamma_n: np.ndarray
    gamma_t: np.ndarray

    def __len__(self) -> int:
        return len(self.i)

    def select(self, rows: np.ndarray) -> ContactArrays:
        """The contacts at ``rows`` (a boolean mask or indices)."""
        return ContactArrays(*(getattr(self, name)[rows] for name in _FIELDS))

    @staticmethod
    def concatenate(parts: Sequence[ContactArrays]) -> ContactArrays:
        """The contacts of ``parts``, in order."""
        return ContactArrays(
            *(np.concatenate([getattr(p, name) for p in parts]) for name in _FIELDS)
        )


_FIELDS = tuple(f.name for f in fields(ContactArrays))


def empty_contacts() -> ContactArrays:
    """No contacts."""
    scalar, vector, index = np.zeros(0), np.zeros((0, 2)), np.zeros(0, dtype=int)
    return ContactArrays(
        index, index, index, np.zeros(0, dtype=bool),
        scalar, vector, vector, vector, scalar, scalar, scalar, scalar,
    )  # fmt: skip


def from_disk_contacts(
    i: Sequence[int],
    j: Sequence[int],
    feature: Sequence[int],
    contacts: Sequence[DiskContact | None],
) -> ContactArrays:
    """Pack per-contact kinematics (``None``: no kinematics, an invalid row) into arrays.

    For a handful of pairs the per-contact functions of :mod:`solver.geometry`
    cost less than the array passes, whose cost is mostly fixed per call.
    """
    valid = np.array([dc is not None for dc in contacts], dtype=bool)
    known = [dc for dc in contacts if dc is not None]
    K = len(contacts)

    def column(name: str, shape: tuple[int, ...]) -> np.ndarray:
        out = np.zeros((K, *shape))
        if known:
            out[valid] = [getattr(dc, name) for dc in known]
        return out

    return ContactArrays(
        i=np.asarray(i, dtype=int).reshape(K),
        j=np.asarray(j, dtype=int).reshape(K),
        feature=np.asarray(feature, dtype=int).reshape(K),
        valid=valid,
        g=column("g", ()),
        n=column("n", (2,)),
        t=column("t", (2,)),
        point=column("point", (2,)),
        u_n=column("u_n", ()),
        u_t=column("u_t", ()),
        gamma_n=column("gamma_n", ()),
        gamma_t=column("gamma_t", ()),
    )


def _rowdot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise dot products of two (K, 2) arrays."""
    return a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1]


def _inverse(d: np.ndarray) -> np.ndarray:
    """``1 / d``, 0 where ``d = 0``."""
    return np.divide(1.0, d, out=np.zeros_like(d), where=d != 0.0)


def _tangent(n: np.ndarray) -> np.ndarray:
    return np.column_stack((n[:, 1], -n[:, 0]))


def _assemble(
    i: np.ndarray,
    j: np.ndarray,
    feature: np.ndarray,
    valid: np.ndarray,
    gap: np.ndarray,
    n: np.ndarray,
    curvature: np.ndarray,
    point: np.ndarray,
    rel_velocity: np.ndarray,
    rolling: np.ndarray,
) -> ContactArrays:
    """Rows from the distance data; ``curvature`` (1/m) is ``κ`` in ``∇²d = κ (I − n nᵀ)``."""
    t = _tangent(n)
    u_n = _rowdot(n, rel_velocity)
    # ṅ = ∇²d ċ_rel = κ (ċ_rel − n (n·ċ_rel)); ṫ = (ṅ_y, −ṅ_x)
    n_dot = curvature[:, None] * (rel_velocity - n * u_n[:, None])
    gamma_n = _rowdot(rel_velocity, n_dot)
    gamma_t = n_dot[:, 1] * rel_velocity[:, 0] - n_dot[:, 0] * rel_velocity[:, 1]
    return ContactArrays(
        i=i,
        j=j,
        feature=feature,
        valid=valid,
        g=gap,
        n=n,
        t=t,
        point=point,
        u_n=u_n,
        u_t=_rowdot(t, rel_velocity) + rolling,
        gamma_n=gamma_n,
        gamma_t=gamma_t,
    )


def _unit(w: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``w / d`` row-wise, 0 where ``d = 0``."""
    return np.divide(w, d[:, None], out=np.zeros_like(w), where=d[:, None] != 0.0)


def disk_disk(
    c: np.ndarray,
    cdot: np.ndarray,
    omega: np.ndarray,
    radius: np.ndarray,
    i: np.ndarray,
    j: np.ndarray,
) -> ContactArrays:
    """Disk ``i[k]`` against disk ``j[k]`` for every row ``k`` (j plays the obstacle).

    Parameters
    ----------
    c, cdot : numpy.ndarray, shape (D, 2)
        Centres (m) and centre velocities (m/s) of all disks.
    omega, radius : numpy.ndarray, shape (D,)
        Angular velocities (rad/s) and radii (m) of all disks.
    i, j : numpy.ndarray of int, shape (K,)
        The pairs.

    Returns
    -------
    ContactArrays
        As :func:`solver.geometry.disk_disk_contact` row by row: ``n`` from j
        to i, ``point = c_j + r_j n``; invalid where the centres coincide.
    """
    w = c[i] - c[j]
    d, gap = disk_disk_gaps(w[:, 0], w[:, 1], radius[i], radius[j])
    valid = d > 0.0
    n = _unit(w, d)
    curvature = _inverse(d)
    return _assemble(
        i,
        j,
        np.full(len(i), -1),
        valid,
        gap,
        n,
        curvature,
        c[j] + radius[j][:, None] * n,
        cdot[i] - cdot[j],
        radius[i] * omega[i] + radius[j] * omega[j],
    )


def disk_disk_gaps(
    wx: np.ndarray, wy: np.ndarray, r_i: np.ndarray, r_j: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Centre distances ``d`` and gaps ``d − r_i − r_j`` (m) of disk pairs, as :func:`disk_disk`.

    ``wx``, ``wy``: the components of the offsets ``c_i − c_j`` (m), any shape
    that broadcasts with the radii (m). A gap is meaningful where ``d > 0``.
    """
    d = np.hypot(wx, wy)
    return d, d - r_i - r_j


def disk_segment(
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    cdot: np.ndarray,
    omega: np.ndarray,
    radius: np.ndarray,
    i: np.ndarray,
    feature: np.ndarray,
) -> ContactArrays:
    """Disk ``i[k]`` against the open segment ``a[k]``–``b[k]`` (rows of shape (K, 2), m).

    As :meth:`solver.geometry.Segment.nearest` with
    :func:`~solver.geometry.disk_contact_from_nearest`: valid where the
    centre projects strictly inside the segment; on the wall the normal is
    the left normal of ``b − a``. ``c``, ``cdot``, ``omega``, ``radius`` are
    those of all disks, as in :func:`disk_disk`; ``feature`` is stored.
    """
    ci = c[i]
    e = b - a
    length2 = e[:, 0] * e[:, 0] + e[:, 1] * e[:, 1]
    s = ((ci[:, 0] - a[:, 0]) * e[:, 0] + (ci[:, 1] - a[:, 1]) * e[:, 1]) / length2
    point = a + s[:, None] * e
    w = ci - point
    d = np.hypot(w[:, 0], w[:, 1])
    n = _unit(w, d)
    on_wall = d == 0.0
    if np.any(on_wall):
        left = np.column_stack((-e[:, 1], e[:, 0])) / np.sqrt(length2)[:, None]
        n[on_wall] = left[on_wall]
    return _assemble(
        i,
        np.full(len(i), -1),
        feature,
        (s > 0.0) & (s < 1.0),
        d - radius[i],
        n,
        np.zeros(len(i)),
        point,
        cdot[i],
        radius[i] * omega[i],
    )


def disk_vertex(
    p: np.ndarray,
    c: np.ndarray,
    cdot: np.ndarray,
    omega: np.ndarray,
    radius: np.ndarray,
    i: np.ndarray,
    feature: np.ndarray,
) -> ContactArrays:
    """Disk ``i[k]`` against the corner ``p[k]`` (shape (K, 2), m); invalid at the corner."""
    w = c[i] - p
    d = np.hypot(w[:, 0], w[:, 1])
    valid = d > 0.0
    curvature = _inverse(d)
    return _assemble(
        i,
        np.full(len(i), -1),
        feature,
        valid,
        d - radius[i],
        _unit(w, d),
        curvature,
        p.copy(),
        cdot[i],
        radius[i] * omega[i],
    )


def disk_arc(
    center: np.ndarray,
    arc_radius: np.ndarray,
    start: np.ndarray,
    span: np.ndarray,
    c: np.ndarray,
    cdot: np.ndarray,
    omega: np.ndarray,
    radius: np.ndarray,
    i: np.ndarray,
    feature: np.ndarray,
) -> ContactArrays:
    """Disk ``i[k]`` against the open arc of row ``k`` (as :meth:`solver.geometry.Arc.nearest`).

    ``center`` (K, 2) and ``arc_radius`` (K,) in m, ``start`` and ``span``
    (K,) in rad as normalised by :class:`~solver.geometry.Arc` (``span = 2π``
    is the full circle). Valid for directions strictly inside the span and
    off the centre; the normal points away from the arc on the disk's side.
    """
    w = c[i] - center
    rho = np.hypot(w[:, 0], w[:, 1])
    off_centre = rho > 0.0
    u = _unit(w, rho)
    theta = np.arctan2(w[:, 1], w[:, 0])
    inside_span = (span == TWO_PI) | (
        (np.mod(theta - start, TWO_PI) > 0.0) & (np.mod(theta - start, TWO_PI) < span)
    )
    side = np.where(rho >= arc_radius, 1.0, -1.0)
    curvature = side * _inverse(rho)
    return _assemble(
        i,
        np.full(len(i), -1),
        feature,
        off_centre & inside_span,
        np.abs(rho - arc_radius) - radius[i],
        side[:, None] * u,
        curvature,
        center + arc_radius[:, None] * u,
        cdot[i],
        radius[i] * omega[i],
    )


class FeatureArrays:
    """The boundary features of a scene as arrays, one table per kind.

    Parameters
    ----------
    features : sequence of Segment, Vertex or Arc
        In the order that feature indices refer to.
    """

    def __init__(self, features: Sequence[Feature]) -> None:
        kinds = {Segment: 0, Vertex: 1, Arc: 2}
        self.kind = np.array([kinds[type(f)] for f in features], dtype=int)
        self._a = np.zeros((len(features), 2))  # segment start, vertex or arc centre (m)
        self._b = np.zeros((len(features), 2))  # segment end (m)
        self._arc = np.zeros((len(features), 3))  # arc radius (m), start, span (rad)
        for k, f in enumerate(features):
            if isinstance(f, Segment):
                self._a[k], self._b[k] = f.a, f.b
            elif isinstance(f, Vertex):
                self._a[k] = f.p
            else:
                self._a[k] = f.center
                self._arc[k] = (f.radius, f.start, f.span)

    def contacts(
        self,
        disk: np.ndarray,
        feature: np.ndarray,
        c: np.ndarray,
        cdot: np.ndarray,
        omega: np.ndarray,
        radius: np.ndarray,
    ) -> ContactArrays:
        """Contacts of disk ``disk[k]`` with feature ``feature[k]``, row ``k`` for pair ``k``.

        Each kind is computed in one pass. ``c``, ``cdot``, ``omega``,
        ``radius`` are those of all disks, as in :func:`disk_disk`.
        """
        parts, order = [], []
        kind = self.kind[feature]
        for code in (0, 1, 2):
            rows = np.flatnonzero(kind == code)
            if not len(rows):
                continue
            order.append(rows)
            i, f = disk[rows], feature[rows]
            if code == 0:
                parts.append(disk_segment(self._a[f], self._b[f], c, cdot, omega, radius, i, f))
            elif code == 1:
                parts.append(disk_vertex(self._a[f], c, cdot, omega, radius, i, f))
            else:
                radius_start_span = self._arc[f].T
                parts.append(disk_arc(self._a[f], *radius_start_span, c, cdot, omega, radius, i, f))
        if not parts:
            return empty_contacts()
        if len(parts) == 1:
            return parts[0]
        return ContactArrays.concatenate(parts).select(np.argsort(np.concatenate(order)))


@dataclass(frozen=True, eq=False)
class SparseRows:
    """Rows of a sparse matrix, all of one width: row ``k`` is ``Σ_w values[k, w] e_cols[k, w]``.

    Padding entries have value 0 (and any column), so products are exact.

    Attributes
    ----------
    cols : numpy.ndarray of int, shape (K, W)
    values : numpy.ndarray, shape (K, W)
    N : int
        Number of columns.
    """

    cols: np.ndarray
    values: np.ndarray
    N: int

    def dot(self, v: np.ndarray) -> np.ndarray:
        """``A v``, shape (K,)."""
        return np.einsum("kw,kw->k", self.values, v[self.cols])

    def transpose_dot(self, w: np.ndarray) -> np.ndarray:
        """``Aᵀ w``, shape (N,)."""
        return np.bincount(
            self.cols.ravel(), weights=(self.values * w[:, None]).ravel(), minlength=self.N
        )

    def diagonal_gram(self, weight: np.ndarray) -> np.ndarray:
        """``diag(A diag(weight) Aᵀ)``, shape (K,): rows must not repeat a column."""
        return np.einsum("kw,kw->k", self.values * self.values, weight[self.cols])

    def to_csr(self) -> sp.csr_array:
        """The matrix as ``scipy.sparse.csr_array`` of shape (K, N) (padding dropped).

        The arrays are copied: scipy sorts and sums the entries in place.
        """
        K, W = self.cols.shape
        matrix = sp.csr_array(
            (self.values.flatten(), self.cols.flatten(), np.arange(0, K * W + 1, W)),
            shape=(K, self.N),
        )
        matrix.sum_duplicates()
        matrix.eliminate_zeros()
        return matrix

    def select(self, rows: np.ndarray) -> SparseRows:
        """The rows at ``rows`` (mask or indices)."""
        return SparseRows(self.cols[rows], self.values[rows], self.N)


@dataclass(frozen=True, eq=False)
class DiskDofs:
    """Where each disk's coordinates sit in ``q`` (−1: the disk has no such coordinate).

    Attributes
    ----------
    ix, iy, iphi : numpy.ndarray of int, shape (D,)
        Indices of ``x``, ``y`` (−1 for a bead, whose ``y`` is its rail's) and
        ``phi`` (−1 for a bead, which does not rotate).
    radius : numpy.ndarray, shape (D,)
        Radii (m).
    N : int
        Number of generalized coordinates.
    """

    ix: np.ndarray
    iy: np.ndarray
    iphi: np.ndarray
    radius: np.ndarray
    N: int

    def jacobians(self, contacts: ContactArrays) -> tuple[SparseRows, SparseRows]:
        """Rows ``G`` and ``H`` of the contacts: ``u_n = G·v``, ``u_t = H·v`` (m/s).

        For disk ``i``: ``G = (n_x, n_y)`` on its ``(x, y)`` and
        ``H = (t_x, t_y, r_i)`` on its ``(x, y, phi)``; a bead has its ``x``
        entry only. The other disk ``j`` of a pair adds ``(−n_x, −n_y)`` and
        ``(−t_x, −t_y, r_j)`` (as :meth:`solver.system.System.generalize`).
        """
        blocks_g, blocks_h = [], []
        i, j = contacts.i, contacts.j
        parts = [(i, 1.0)]
        if np.any(j >= 0):
            parts.append((j, -1.0))
        for disk, sign in parts:
            present = disk >= 0
            k = np.where(present, disk, 0)
            ix = self.ix[k]
            wheel = present & (self.iy[k] >= 0)
            scale = np.where(present, sign, 0.0)
            iy = np.where(wheel, self.iy[k], ix)
            iphi = np.where(wheel, self.iphi[k], ix)
            wheel_scale = np.where(wheel, scale, 0.0)
            n, t = contacts.n, contacts.t
            blocks_g.append(
                (
                    np.column_stack((ix, iy)),
                    np.column_stack((scale * n[:, 0], wheel_scale * n[:, 1])),
                )
            )
            blocks_h.append(
                (
                    np.column_stack((ix, iy, iphi)),
                    np.column_stack(
                        (
                            scale * t[:, 0],
                            wheel_scale * t[:, 1],
                            np.where(wheel, self.radius[k], 0.0),
                        )
                    ),
                )
            )
        return (
            SparseRows(
                np.hstack([b[0] for b in blocks_g]), np.hstack([b[1] for b in blocks_g]), self.N
            ),
            SparseRows(
                np.hstack([b[0] for b in blocks_h]), np.hstack([b[1] for b in blocks_h]), self.N
            ),
        )
