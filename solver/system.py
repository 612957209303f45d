"""The compiled mechanical system of a scene: mass matrix, forces, energies, contacts.

A :class:`System` is built once from a validated :class:`solver.scene.Scene`
and does not change during a run (MuJoCo's model/data split, STYLE.md): the
state ``(t, q, v)`` lives with the stepper.

Generalized coordinates, in scene order (MECHANICS §1):

* wheel ``(x, y, phi)`` with ``M = diag(m, m, J)``, ``phi`` counter-clockwise;
* bead ``x`` on its horizontal rail ``y = rail_y`` with ``M = m``;
* axle cart ``(xC, yC, phi, thetaA, thetaB)`` (paper 001, top view).

Every wheel and bead is a disk. Contacts are disk–feature (segments,
vertices and arcs of the boundaries, see :mod:`solver.geometry`) and
disk–disk. For each one the generalized Jacobians ``G`` and ``H`` are scaled
so that ``u_n = G·v`` and ``u_t = H·v`` are the physical normal and slip
speeds (m/s), hence multipliers are forces in N.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

from solver.broadphase import StaticIndex
from solver.cached import cached_property
from solver.cart_rolling import initial_velocity
from solver.compliance import CompliantSet
from solver.contact_arrays import DiskDofs, FeatureArrays
from solver.event_tolerances import FEW_DISKS
from solver.geometry import DiskContact, boundary_features
from solver.nonholonomic import AxleCart
from solver.spring_set import SpringSet
from solver.system_contacts import Contact, SystemContacts

WHEEL_LABELS = (("x", "y", "phi"), ("vx", "vy", "omega"))
BEAD_LABELS = (("x",), ("vx",))
CART_LABELS = (("xC", "yC", "phi", "thetaA", "thetaB"), ("vxC", "vyC", "omega", "omegaA", "omegaB"))


@dataclass(frozen=True)
class _Disk:
    """A body seen as a disk: where its coordinates sit in ``q``."""

    body_id: str
    radius: float
    mass: float
    ix: int  # index of x in q
    iy: int | None  # index of y (None for a bead: y = rail_y)
    iphi: int | None  # index of phi (None for a bead: it does not rotate)
    rail_y: float


@dataclass(frozen=True)
class _Spring:
    i: int  # disk index of end a
    j: int | None  # disk index of end b, or None for an anchor
    anchor: np.ndarray | None
    stiffness: float
    rest_length: float
    damping: float


@dataclass(frozen=True)
class _Forcing:
    disk: int
    amplitude: np.ndarray
    omega: float
    phase: float


class System:
    """A scene compiled for simulation (immutable during a run).

    Parameters
    ----------
    scene : solver.scene.Scene
        A validated scene.
    """

    def __init__(self, scene: Any) -> None:
        self.scene = scene
        self.gravity = np.asarray(scene.gravity, dtype=float)
        labels: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = []
        masses: list[float] = []
        q0: list[float] = []
        v0: list[float] = []
        # per disk (wheels and beads, scene order): plain lists and arrays, no object per disk
        disk_ids: list[str] = []
        radii: list[float] = []
        ix: list[int] = []
        iy: list[int | None] = []
        rail_y: list[float] = []
        self._body_starts: list[int] = []
        for body in scene.bodies:
            start = len(masses)
            self._body_starts.append(start)
            if body.type == "wheel":
                labels.append((body.id, *WHEEL_LABELS))
                masses += [body.mass, body.mass, body.inertia]
                q0 += [body.position[0], body.position[1], body.angle]
                v0 += [body.velocity[0], body.velocity[1], body.angular_velocity]
                disk_ids.append(body.id)
                radii.append(body.radius)
                ix.append(start)
                iy.append(start + 1)
                rail_y.append(0.0)
            elif body.type == "bead":
                labels.append((body.id, *BEAD_LABELS))
                masses.append(body.mass)
                q0.append(body.x)
                v0.append(body.vx)
                disk_ids.append(body.id)
                radii.append(body.radius)
                ix.append(start)
                iy.append(None)
                rail_y.append(body.rail_y)
            elif body.type == "axle_cart":
                labels.append((body.id, *CART_LABELS))
                cart = axle_cart_model(body)
                q_cart = [body.position[0], body.position[1], body.angle, *body.wheel_angles]
                masses += list(np.diag(cart.mass_matrix(q_cart)))
                q0 += q_cart
                v0 += list(initial_velocity(cart, q_cart, body.wheel_rates))
            else:  # pragma: no cover - the scene model admits no other type
                raise ValueError(f"unknown body type {body.type!r}")
        self._body_starts.append(len(masses))
        self.dof_labels = labels
        self.body_ids = [b.id for b in scene.bodies]
        self.N = len(masses)
        self.M_diag = np.asarray(masses, dtype=float)
        self.q0 = np.asarray(q0, dtype=float)
        self.v0 = np.asarray(v0, dtype=float)
        self._disk_ids = disk_ids
        self._disk_of_body = {body_id: k for k, body_id in enumerate(disk_ids)}
        # a disk's x, y and phi indices in q (y and phi None for a bead: y = rail_y, no rotation)
        self._disk_ix = ix
        self._disk_iy = iy
        self._disk_rail_y = rail_y
        self.radii = np.array(radii, dtype=float)
        if len(ix) <= FEW_DISKS:
            self._few_disk_layout([-1 if i is None else i for i in iy])
        else:
            self._array_disk_layout()
        self._springs = [self._compile_spring(s) for s in scene.springs]
        self._forcing = [
            _Forcing(self._disk_of_body[f.body], np.asarray(f.amplitude, float), f.omega, f.phase)
            for f in scene.forces
            if f.body in self._disk_of_body
        ]
        self._features: list[tuple[str, Any, float, float]] = []
        compliant: list[tuple[str, Any, Any]] = []
        rubbing: list[float] = []  # the compliant features' Coulomb μ
        for boundary in scene.boundaries:
            e, mu = scene.contact_params(boundary)
            law = scene.compliance_for(boundary)
            for suffix, feature in boundary_features(boundary):
                if law is None:
                    self._features.append((boundary.id + suffix, feature, e, mu))
                else:  # a force, not a constraint: not among the rigid features
                    compliant.append((boundary.id + suffix, feature, law))
                    rubbing.append(float(mu))
        # contact.compliance makes every body–body contact compliant (two disks or more)
        between = scene.contact.compliance if len(ix) > 1 else None
        self.compliance = (
            CompliantSet(self, compliant, between, rubbing)
            if compliant or between is not None
            else None
        )
        """The compliant contacts (:mod:`solver.compliance`), None if there are none."""
        self.rigid_disk_pairs = between is None
        """Whether two disks meet as rigid bodies (impacts), not by a compliant force."""
        self.disk_restitution, self.disk_friction = scene.contact_params(None)
        self.contact_finder = SystemContacts()
        """The search of a state's contacts and their generalized form (a part)."""

    # ------------------------------------------------------------ layout

    def _array_disk_layout(self) -> None:
        """The disks' centre indices and weight, from ``_ix``, ``_iy`` (−1: a bead) and ``M_diag``.

        ``_centre_index`` (K, 2) holds the indices of each centre's
        coordinates in ``q`` (a bead's y read as index 0 and replaced by its
        rail's), ``_beads`` the beads' disk indices and ``_weight`` gravity as
        a generalized force (N).
        """
        self._centre_index = np.column_stack((self._ix, np.maximum(self._iy, 0))).reshape(-1, 2)
        self._beads = np.nonzero(~self._is_wheel)[0]
        self._weight = np.zeros(self.N)
        self._weight[self._ix] += self._weight_x
        self._weight[self._wheel_iy] += self.M_diag[self._wheel_iy] * self.gravity[1]

    def _few_disk_layout(self, iy: list[int]) -> None:
        """:meth:`_array_disk_layout` of a few disks from lists: the same arrays, bit for bit.

        ``iy`` is ``_iy`` as a list. The products ``m g`` are numpy's
        (elementwise, correctly rounded) and each weight lands on a zero
        entry of its own (a disk's x and a wheel's y are distinct
        coordinates), added to ``0.0`` as the arrays' ``+=`` adds it: numpy
        calls on a few entries cost more than these lists.
        """
        ix = self._disk_ix
        masses = self.M_diag.tolist()
        g_x, g_y = self.gravity.tolist()
        self._centre_index = np.array(
            [(x, max(y, 0)) for x, y in zip(ix, iy, strict=True)], dtype=int
        ).reshape(-1, 2)
        self._beads = np.array([k for k, y in enumerate(iy) if y < 0], dtype=np.intp)
        weight = [0.0] * self.N
        for x, y in zip(ix, iy, strict=True):
            weight[x] += masses[x] * g_x
            if y >= 0:
                weight[y] += masses[y] * g_y
        self._weight = np.array(weight, dtype=float)

    @cached_property
    def _ix(self) -> np.ndarray:
        """Index of each disk's x in ``q``."""
        return np.array(self._disk_ix, dtype=int)

    @cached_property
    def _iy(self) -> np.ndarray:
        """Index of each disk's y in ``q`` (−1 for a bead: its y is its rail's)."""
        return np.array([-1 if i is None else i for i in self._disk_iy], dtype=int)

    @cached_property
    def _rail_y(self) -> np.ndarray:
        """Rail height of each bead (m), 0.0 for a wheel."""
        return np.array(self._disk_rail_y, dtype=float)

    @cached_property
    def _iphi(self) -> np.ndarray:
        """Index of each disk's angle in ``q`` (−1 for a bead)."""
        return np.where(self._iy >= 0, self._iy + 1, -1)

    @cached_property
    def _is_wheel(self) -> np.ndarray:
        """Whether each disk is a wheel (else a bead)."""
        return self._iy >= 0

    @cached_property
    def _angle_index(self) -> np.ndarray:
        """Index of each disk's angle in ``q``, 0 for a bead (read, then replaced by 0)."""
        return np.maximum(self._iphi, 0)

    @cached_property
    def _weight_x(self) -> np.ndarray:
        """Weight ``m g_x`` of each disk (N)."""
        return self.M_diag[self._ix] * self.gravity[0]

    @cached_property
    def _wheel_weight_y(self) -> np.ndarray:
        """Weight ``m g_y`` of each wheel (N)."""
        return (self.M_diag[self._ix] * self.gravity[1])[self._is_wheel]

    @cached_property
    def _wheel_iy(self) -> np.ndarray:
        """Index of each wheel's y in ``q``."""
        return self._iy[self._is_wheel]

    @cached_property
    def spring_set(self) -> SpringSet:
        """The springs as arrays (:class:`solver.spring_set.SpringSet`), made on first use."""
        return SpringSet(
            [s.i for s in self._springs],
            [s.j for s in self._springs],
            [s.anchor for s in self._springs],
            [s.stiffness for s in self._springs],
            [s.rest_length for s in self._springs],
            [s.damping for s in self._springs],
        )

    @cached_property
    def _spring_force_dofs(self) -> tuple[np.ndarray, np.ndarray]:
        """Generalized-force rows of each spring's end a and end b (x, then y; −1: none)."""
        return self._spring_dofs()

    @cached_property
    def _static_index(self) -> StaticIndex:
        """Uniform-grid index of the boundary features, made on first use (one per System)."""
        return StaticIndex([f for _, f, _, _ in self._features])

    @cached_property
    def M(self) -> np.ndarray:
        """Dense mass matrix ``diag(M_diag)``, shape (N, N) (kg, kg·m²), built on first use.

        The mass matrix is diagonal (MECHANICS §1) and is kept as the vector
        :attr:`M_diag`; this N×N copy (N² memory) is made only for callers
        that want a dense matrix.
        """
        return np.diag(self.M_diag)

    @cached_property
    def M_inv(self) -> np.ndarray:
        """Dense inverse mass matrix, shape (N, N) (1/kg, 1/(kg·m²)), built on first use."""
        return np.diag(1.0 / self.M_diag) if self.N else np.zeros((0, 0))

    @cached_property
    def disk_dofs(self) -> DiskDofs:
        """Where each disk's coordinates sit in ``q``, for contact kinematics on arrays."""
        return DiskDofs(self._ix, self._iy, self._iphi, self.radii, self.N)

    @cached_property
    def feature_arrays(self) -> FeatureArrays:
        """The boundary features (indices as in :attr:`features`) as arrays."""
        return FeatureArrays([f for _, f, _, _ in self._features])

    @cached_property
    def body_slices(self) -> dict[str, slice]:
        """Where each body's coordinates sit in ``q``, by body id."""
        starts = self._body_starts
        return {body_id: slice(starts[k], starts[k + 1]) for k, body_id in enumerate(self.body_ids)}

    @cached_property
    def _disks(self) -> list[_Disk]:
        """Each disk as a :class:`_Disk`, made on first use (the engine reads the arrays)."""
        return [
            _Disk(
                body_id,
                float(self.radii[k]),
                float(self.M_diag[self._disk_ix[k]]),
                self._disk_ix[k],
                self._disk_iy[k],
                None if self._disk_iy[k] is None else self._disk_iy[k] + 1,
                self._disk_rail_y[k],
            )
            for k, body_id in enumerate(self._disk_ids)
        ]

    @property
    def n_disks(self) -> int:
        """Number of disk bodies (wheels and beads)."""
        return len(self._disk_ids)

    @property
    def features(self) -> list[tuple[str, Any, float, float]]:
        """Boundary features ``(contact id, feature, restitution, friction)`` in scene order."""
        return list(self._features)

    def disk_body_id(self, k: int) -> str:
        """Scene id of disk ``k``."""
        return self._disk_ids[k]

    def disk_index(self, body_id: str) -> int:
        """Disk index of the body ``body_id`` (KeyError if it is not a disk)."""
        return self._disk_of_body[body_id]

    def centres(self, q: np.ndarray) -> np.ndarray:
        """Centres of all disks, shape (K, 2), m."""
        out = q[self._centre_index]
        if len(self._beads):
            out[self._beads, 1] = self._rail_y[self._beads]
        return out

    def centre_velocities(self, v: np.ndarray) -> np.ndarray:
        """Velocities of all disk centres, shape (K, 2), m/s."""
        out = v[self._centre_index]
        if len(self._beads):
            out[self._beads, 1] = 0.0
        return out

    def centres_many(self, Q: np.ndarray) -> np.ndarray:
        """:meth:`centres` of each row of ``Q`` (T, N): shape (T, K, 2), m."""
        out = Q[:, self._centre_index]
        if len(self._beads):
            out[:, self._beads, 1] = self._rail_y[self._beads]
        return out

    def centre_velocities_many(self, V: np.ndarray) -> np.ndarray:
        """:meth:`centre_velocities` of each row of ``V`` (T, N): shape (T, K, 2), m/s."""
        out = V[:, self._centre_index]
        if len(self._beads):
            out[:, self._beads, 1] = 0.0
        return out

    def angular_velocities(self, v: np.ndarray) -> np.ndarray:
        """Angular velocities of all disks, shape (K,), rad/s (0 for beads)."""
        out = v[self._angle_index]
        if len(self._beads):
            out[self._beads] = 0.0
        return out

    def disk_motion(
        self, q: np.ndarray, v: np.ndarray, k: int
    ) -> tuple[np.ndarray, np.ndarray, float]:
        """Centre (m), centre velocity (m/s) and angular velocity (rad/s) of disk ``k``.

        The same numbers as row ``k`` of :meth:`centres`, :meth:`centre_velocities`
        and :meth:`angular_velocities`, without computing the other disks. A
        wheel's centre and its velocity are views into ``q`` and ``v``.
        """
        ix = self._disk_ix[k]
        if self._disk_iy[k] is None:
            return np.array((q[ix], self._disk_rail_y[k])), np.array((v[ix], 0.0)), 0.0
        # a wheel's coordinates are (x, y, phi) in a row
        return q[ix : ix + 2], v[ix : ix + 2], float(v[ix + 2])

    def disk_motions(
        self, Q: np.ndarray, V: np.ndarray, k: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`disk_motion` for many states: rows of ``Q`` and ``V`` (shape (R, N)).

        Returns the centres (R, 2) (m), their velocities (R, 2) (m/s) and the
        angular velocities (R,) (rad/s) of disk ``k``.
        """
        ix = self._disk_ix[k]
        if self._disk_iy[k] is None:
            rows = len(Q)
            return (
                np.column_stack((Q[:, ix], np.full(rows, self._disk_rail_y[k]))),
                np.column_stack((V[:, ix], np.zeros(rows))),
                np.zeros(rows),
            )
        return Q[:, ix : ix + 2], V[:, ix : ix + 2], V[:, ix + 2]

    def centre(self, q: np.ndarray, k: int) -> np.ndarray:
        """Centre of disk ``k`` (m)."""
        return self.centres(q)[k]

    def centre_velocity(self, q: np.ndarray, v: np.ndarray, k: int) -> np.ndarray:
        """Velocity of the centre of disk ``k`` (m/s)."""
        return self.centre_velocities(v)[k]

    def _centre_jacobian_rows(self, k: int) -> tuple[tuple[int, ...], np.ndarray]:
        """dofs of disk k and the 2×len(dofs) map from their rates to ċ."""
        ix, iy = self._disk_ix[k], self._disk_iy[k]
        if iy is None:
            return (ix,), np.array([[1.0], [0.0]])
        return (ix, iy), np.eye(2)

    # ------------------------------------------------------------ forces and energy

    def _compile_spring(self, spring: Any) -> _Spring:
        i = self._disk_of_body[spring.a]
        j = self._disk_of_body[spring.b] if spring.b is not None else None
        anchor = None if spring.anchor is None else np.asarray(spring.anchor, dtype=float)
        return _Spring(i, j, anchor, spring.stiffness, spring.rest_length, spring.damping)

    def _spring_dofs(self) -> tuple[np.ndarray, np.ndarray]:
        """Where the springs' end forces go in ``f``: (dof indices, which force component).

        One entry per (spring, end, axis), in the order a loop over springs
        adds them (end a x, y, then end b x, y), skipping anchors and the y
        of beads; the component index is 0/1 for x/y of end a and 2/3 for
        end b (which gets −F).
        """
        set_ = self.spring_set
        S = len(set_)
        dofs = np.full((S, 4), -1, dtype=int)
        dofs[:, 0] = self._ix[set_.a]
        dofs[:, 1] = self._iy[set_.a]
        dofs[:, 2] = np.where(set_.to_anchor, -1, self._ix[set_.b])
        dofs[:, 3] = np.where(set_.to_anchor, -1, self._iy[set_.b])
        component = np.broadcast_to(np.arange(4), (S, 4))
        keep = dofs >= 0
        return dofs[keep], np.ravel_multi_index((np.nonzero(keep)[0], component[keep]), (S, 4))

    def _add_disk_force(self, f: np.ndarray, k: int, force: np.ndarray) -> None:
        f[self._disk_ix[k]] += force[0]
        if self._disk_iy[k] is not None:
            f[self._disk_iy[k]] += force[1]

    def for_one_run(self) -> System:
        """This system as one event-driven run uses it: itself, or a copy of its own.

        With compliant contacts a run fixes, phase by phase, which of them
        press (:class:`solver.compliant_events.CompliantEvents`), and its forces,
        events and rows follow that set. The run then gets a shallow copy of
        the system with a :class:`~solver.compliance.CompliantSet` of its own,
        which only its ``CompliantEvents`` engages: this system's own
        ``compliance`` is never engaged (the clamped force of a state,
        ``engaged = None``), so one system serves any number of runs, of
        either method, interleaved.
        """
        if self.compliance is None:
            return self
        run = copy.copy(self)
        run.compliance = self.compliance.for_system(run)
        return run

    def applied_force(
        self, t: float, q: np.ndarray, v: np.ndarray, compliant: bool = True
    ) -> np.ndarray:
        """Generalized applied force (N, N·m): gravity, springs, dampers, forcing, compliance.

        A bead feels only the rail-parallel component of its forces; the rail
        carries the rest. ``compliant=False`` leaves the compliant contacts
        out (the rest, which a stuck wheel's friction must hold).
        """
        f = self._weight.copy()
        if self._springs or self._forcing:
            c = self.centres(q)
            cd = self.centre_velocities(v)
            if self._springs:
                force = self.spring_set.forces_on_a(c, cd)
                dofs, which = self._spring_force_dofs
                np.add.at(f, dofs, np.hstack((force, -force)).ravel()[which])
            for h in self._forcing:
                self._add_disk_force(f, h.disk, h.amplitude * np.sin(h.omega * t + h.phase))
        if self.compliance is not None and compliant:
            f += self.compliance.force(q, v, f.copy() if self.compliance.modes else None)
        return f

    def energy(self, q: np.ndarray, v: np.ndarray) -> tuple[float, float, float]:
        """``(kinetic, gravitational, spring)`` energy (J).

        Gravitational energy is ``−m g·c`` of every disk centre (a bead only
        along its rail, the rail's reaction doing no work).
        """
        kinetic = self.kinetic_energy(v)
        one = self._one_disk_weight
        if one is not None:  # one disk: numpy's sum of one term is 0.0 + the term
            weight_x, ix, weight_y, iy = one
            potential = -(0.0 + weight_x * float(q[ix]))
            potential -= 0.0 if iy < 0 else 0.0 + weight_y * float(q[iy])
        else:
            potential = self._potential_energy(q)
        spring = self.spring_set.energy(self.centres(q)) if self._springs else 0.0
        if self.compliance is not None:
            spring += self.compliance.energy(q, v)
        return kinetic, potential, spring

    def _potential_energy(self, q: np.ndarray) -> float:
        """Gravitational energy ``−Σ m g·c`` (J) on arrays: every disk's x, then the wheels' y."""
        if not self.n_disks:
            return 0.0
        potential = -float((self._weight_x * q[self._ix]).sum())
        potential -= float((self._wheel_weight_y * q[self._wheel_iy]).sum())
        return potential

    @cached_property
    def _one_disk_weight(self) -> tuple[float, int, float, int] | None:
        """``(m g_x, x index, m g_y, y index)`` of a lone disk (a bead: 0.0, −1), else None.

        :meth:`energy` then takes the terms of :meth:`_potential_energy` in
        floats, the same operations: 2-element array calls cost more than them.
        """
        if self.n_disks != 1:
            return None
        # the products of the arrays' weights, m g (numpy's elementwise product is the float's)
        mass, (g_x, g_y) = float(self.M_diag[self._disk_ix[0]]), self.gravity.tolist()
        iy = self._disk_iy[0]
        if iy is not None:
            return mass * g_x, self._disk_ix[0], mass * g_y, iy
        return mass * g_x, self._disk_ix[0], 0.0, -1

    def kinetic_energy(self, v: np.ndarray) -> float:
        """Kinetic energy ``½ vᵀ M v`` (J).

        ``(M v)·v`` by the array's own ``dot`` (without the dispatch of ``np.dot``): the same
        product, bit for bit (the terms of a dot product commute exactly).
        """
        return 0.5 * float((self.M_diag * v).dot(v))

    def input_power(self, t: float, q: np.ndarray, v: np.ndarray) -> float:
        """Power of the prescribed forcing (W)."""
        if not self._forcing:
            return 0.0
        cd = self.centre_velocities(v)
        return float(
            sum((h.amplitude * np.sin(h.omega * t + h.phase)) @ cd[h.disk] for h in self._forcing)
        )

    def damping_power(self, q: np.ndarray, v: np.ndarray) -> float:
        """Power dissipated by the spring dampers and the compliant contacts (W, ≥ 0)."""
        power = 0.0
        if self._springs and self.spring_set.has_damping:
            power = self.spring_set.damping_power(self.centres(q), self.centre_velocities(v))
        if self.compliance is not None:
            power += self.compliance.dissipation_power(q, v)
        return power

    @property
    def has_springs(self) -> bool:
        """True when the scene has springs or compliant contacts (not free flight)."""
        return bool(self._springs) or self.compliance is not None

    @property
    def has_forcing(self) -> bool:
        """True when the scene has prescribed time-dependent forces."""
        return bool(self._forcing)

    # ------------------------------------------------------------ contacts (SystemContacts)

    def generalize(
        self,
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
        """:meth:`SystemContacts.generalize <solver.system_contacts.SystemContacts.generalize>`."""
        return self.contact_finder.generalize(
            self, key, body, other, dc, i, j, restitution, friction, inside
        )

    def pair_dofs(self, i: int, j: int | None) -> np.ndarray:
        """:meth:`SystemContacts.pair_dofs <solver.system_contacts.SystemContacts.pair_dofs>`."""
        return self.contact_finder.pair_dofs(self, i, j)

    def contacts(self, q: np.ndarray, v: np.ndarray, margin: float = 0.0) -> list[Contact]:
        """:meth:`SystemContacts.contacts <solver.system_contacts.SystemContacts.contacts>`."""
        return self.contact_finder.contacts(self, q, v, margin)

    def disk_pairs(self, c: np.ndarray, margin: float) -> list[tuple[int, int]]:
        """:meth:`SystemContacts.disk_pairs <solver.system_contacts.SystemContacts.disk_pairs>`."""
        return self.contact_finder.disk_pairs(self, c, margin)


def axle_cart_model(body: Any) -> AxleCart:
    """The paper-001 cart model of a scene's ``axle_cart`` body."""
    return AxleCart(
        float(body.axle_mass),
        float(body.half_length),
        float(body.wheel_mass),
        float(body.wheel_radius),
    )
