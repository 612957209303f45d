"""A system's contacts in generalized form: the search of a state's pairs and their Jacobians.

:class:`Contact` is one disk–feature or disk–disk pair at one instant in
generalized coordinates (sparse ``G`` and ``H``); :class:`SystemContacts`, a
part of :class:`solver.system.System`, finds the pairs of a state within a
margin (the boundaries' static index, a uniform grid for disk pairs) and
makes their generalized form, keeping the coordinates each pair touches
(one read-only array per pair, shared).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from solver.broadphase import disk_pairs
from solver.cached import cached_property
from solver.geometry import DiskContact, disk_disk_contact, disk_feature_contact

if TYPE_CHECKING:
    from solver.system import System


@dataclass(frozen=True, eq=False, init=False)
class Contact:
    """One disk–feature or disk–disk pair at one instant, in generalized form.

    ``G`` and ``H`` (shape (N,)) give ``u_n = G·v`` and ``u_t = H·v`` (m/s), so
    that ``a_n = G·q̈ + gamma_n`` and ``a_t = H·q̈ + gamma_t`` (m/s²). They are
    stored sparsely: ``dofs`` (int array) are the generalized coordinates
    the pair touches and ``G_local`` / ``H_local`` the entries there.
    ``inside`` is False when the disk's centre has left the feature's Voronoi
    region and the kinematics are those of the feature continued past its end
    (the event-driven stepper uses this to find a disk leaving a segment).
    """

    key: tuple[Any, ...]
    body: str
    other: str
    g: float
    n: np.ndarray
    t: np.ndarray
    point: np.ndarray
    dofs: np.ndarray
    G_local: np.ndarray
    H_local: np.ndarray
    u_n: float
    u_t: float
    gamma_n: float
    gamma_t: float
    restitution: float
    friction: float
    N: int
    inside: bool = True

    def __init__(
        self,
        key: tuple[Any, ...],
        body: str,
        other: str,
        g: float,
        n: np.ndarray,
        t: np.ndarray,
        point: np.ndarray,
        dofs: np.ndarray,
        G_local: np.ndarray,
        H_local: np.ndarray,
        u_n: float,
        u_t: float,
        gamma_n: float,
        gamma_t: float,
        restitution: float,
        friction: float,
        N: int,
        inside: bool = True,
    ) -> None:
        # the fields written at once: a frozen dataclass's own __init__ sets them one by
        # one through object.__setattr__ (2.6 µs a contact; a chain makes one per bead)
        self.__dict__.update(
            key=key,
            body=body,
            other=other,
            g=g,
            n=n,
            t=t,
            point=point,
            dofs=dofs,
            G_local=G_local,
            H_local=H_local,
            u_n=u_n,
            u_t=u_t,
            gamma_n=gamma_n,
            gamma_t=gamma_t,
            restitution=restitution,
            friction=friction,
            N=N,
            inside=inside,
        )

    @cached_property
    def G(self) -> np.ndarray:
        """Normal Jacobian, shape (N,): ``u_n = G·v`` (m/s)."""
        out = np.zeros(self.N)
        out[self.dofs] = self.G_local  # a pair's dofs are distinct
        return out

    @cached_property
    def H(self) -> np.ndarray:
        """Tangential Jacobian, shape (N,): ``u_t = H·v`` (m/s), rolling included."""
        out = np.zeros(self.N)
        out[self.dofs] = self.H_local
        return out


class SystemContacts:
    """The contacts of a :class:`~solver.system.System`'s states (a part it owns).

    It owns the cache of the coordinates each pair touches; the system whose
    disks, features and contact laws are read is passed to each call (``system``),
    so the part holds no reference back to its owner: a System and its part are
    freed by their reference counts, with no cycle for the garbage collector.
    """

    def __init__(self) -> None:
        self._dofs_of_pair: dict[tuple[int, int | None], np.ndarray] = {}

    def generalize(
        self,
        system: System,
        key: tuple[Any, ...],
        body: str,
        other: str,
        dc: DiskContact,
        i: int,
        j: int | None,
        restitution: float,
        friction: float,
        inside: bool = True,
    ) -> Contact:
        """The generalized form of disk ``i``'s contact kinematics ``dc``.

        ``j`` is the other disk of a disk–disk contact (it takes the opposite
        sign), ``None`` against a boundary feature.
        """
        (nx, ny), (tx, ty) = dc.n.tolist(), dc.t.tolist()
        g_local: list[float] = []
        h_local: list[float] = []
        for k, sign in ((i, 1.0), (j, -1.0)):
            if k is None:
                continue
            if system._disk_iy[k] is None:
                g_local.append(sign * nx)
                h_local.append(sign * tx)
            else:
                g_local += (sign * nx, sign * ny, 0.0)
                h_local += (sign * tx, sign * ty, float(system.radii[k]))
        return Contact(
            key=key,
            body=body,
            other=other,
            g=dc.g,
            n=dc.n,
            t=dc.t,
            point=dc.point,
            dofs=self.pair_dofs(system, i, j),
            G_local=np.asarray(g_local),
            H_local=np.asarray(h_local),
            u_n=dc.u_n,
            u_t=dc.u_t,
            gamma_n=dc.gamma_n,
            gamma_t=dc.gamma_t,
            restitution=restitution,
            friction=friction,
            N=system.N,
            inside=inside,
        )

    def pair_dofs(self, system: System, i: int, j: int | None) -> np.ndarray:
        """The coordinates a contact of disk ``i`` (and disk ``j``) touches: read-only, shared."""
        dofs = self._dofs_of_pair.get((i, j))
        if dofs is None:
            dofs = np.array(
                [dof for k in (i, j) if k is not None for dof in self._disk_dofs(system, k)],
                dtype=int,
            )
            dofs.setflags(write=False)
            self._dofs_of_pair[(i, j)] = dofs
        return dofs

    def _disk_dofs(self, system: System, k: int) -> tuple[int, ...]:
        """Disk ``k``'s coordinates in ``q``: ``(x,)`` for a bead, ``(x, y, phi)`` for a wheel."""
        ix = system._disk_ix[k]
        return (ix,) if system._disk_iy[k] is None else (ix, ix + 1, ix + 2)

    def contacts(
        self, system: System, q: np.ndarray, v: np.ndarray, margin: float = 0.0
    ) -> list[Contact]:
        """Every disk–feature and disk–disk pair whose gap is at most ``margin`` (m).

        Parameters
        ----------
        q, v : numpy.ndarray, shape (N,)
            Generalized coordinates and velocities.
        margin : float
            Largest gap (m) to report; pairs farther apart are skipped.

        Returns
        -------
        list of Contact
            In a deterministic order: disk–feature pairs by disk then feature,
            then disk–disk pairs by (i, j).
        """
        if not system.n_disks:
            return []
        c = system.centres(q)
        cd = system.centre_velocities(v)
        om = system.angular_velocities(v)
        out: list[Contact] = []
        if system._features:
            for k, fi in system._static_index.query(c, system.radii, margin).pairs:
                fid, feature, e, mu = system._features[fi]
                dc = disk_feature_contact(feature, c[k], cd[k], system.radii[k], om[k])
                if dc is None or dc.g > margin:
                    continue
                body = system._disk_ids[k]
                out.append(self.generalize(system, (body, fid), body, fid, dc, int(k), None, e, mu))
        for i, j in self.disk_pairs(system, c, margin):
            dc = disk_disk_contact(
                c[i], cd[i], system.radii[i], om[i], c[j], cd[j], system.radii[j], om[j]
            )
            if dc is None or dc.g > margin:
                continue
            bi, bj = system._disk_ids[i], system._disk_ids[j]
            out.append(
                self.generalize(
                    system,
                    (bi, bj),
                    bi,
                    bj,
                    dc,
                    i,
                    j,
                    system.disk_restitution,
                    system.disk_friction,
                )
            )
        return out

    def disk_pairs(self, system: System, c: np.ndarray, margin: float) -> list[tuple[int, int]]:
        """Disk pairs (i < j) whose gap may be ≤ ``margin`` (uniform-grid broadphase).

        None when the disks' contacts are compliant (:attr:`rigid_disk_pairs`):
        they are forces, not contacts.
        """
        if system.n_disks < 2 or not system.rigid_disk_pairs:
            return []
        return [(int(i), int(j)) for i, j in disk_pairs(c, system.radii, margin).pairs]
