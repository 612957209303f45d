"""Candidate pairs and closed contacts held as arrays: the answers of the per-pair route.

The event loop keeps the candidate pairs as index arrays (``PairRows``: a
``ContactPair`` made only for a row that is read) and the closed pairs of
beads on one rail as arrays (``RailContacts``: a ``Contact`` made only for a
row that is read). Every consumer that reads the arrays — the gaps, the
impact law's columns, the grazing test, the contact problem, the events'
stage records, a whole run — must give the bits it gives when handed the
per-pair objects.
"""

from __future__ import annotations

from types import SimpleNamespace
from unittest import mock

import numpy as np
import scipy.sparse as sp
from hypothesis import given, reject, settings
from hypothesis import strategies as st
from test_contact_pairs_many import ARRAYS, FIELDS, FLOATS, bead_scenes, same_bits
from test_sequential_sparse import chains as sequential_chains
from test_sequential_sparse import sparse_sets

from solver.contact import solve_contact_problem
from solver.contact_pairs import DiskKinematics, PairRows, RailContacts
from solver.errors import SolverError
from solver.event_handling import (
    contact_keys,
    grazing,
    grazing_many,
    speeds_of,
    subset,
)
from solver.event_tolerances import SPARSE_ABOVE
from solver.frames import Event
from solver.gap_set import GapSet
from solver.geometry import Arc, Segment, Vertex
from solver.impact import resolve_impact
from solver.impact_rules import ImpactRules
from solver.record import Trajectory
from solver.scene import SceneError, parse_scene
from solver.simulation import make_stepper
from solver.stages import ImpactStages, SharedImpactStages, normal_speeds, stage_rows
from solver.system import System

numbers = st.floats(-10.0, 10.0) | st.sampled_from([0.0, -0.0, 1e-300])


@st.composite
def scenes_with_boundaries(draw):
    """Wheels and beads near a floor polyline and an arc: every kind of candidate pair."""
    bodies = []
    for k in range(draw(st.integers(1, 4))):
        x, y = draw(st.floats(-3.0, 3.0)), draw(st.floats(0.6, 2.0))
        bodies.append(
            {
                "id": f"w{k}",
                "type": "wheel",
                "mass": 1.0,
                "radius": 0.5,
                "inertia": 0.125,
                "position": [x + 4.0 * k, y],
                "velocity": [draw(numbers), draw(numbers)],
            }
        )
    for k in range(draw(st.integers(0, 3))):
        bodies.append(
            {
                "id": f"b{k}",
                "type": "bead",
                "rail_y": 3.0,
                "mass": 1.0,
                "radius": 0.4,
                "x": 2.0 * k + draw(st.floats(0.0, 1.0)),
                "vx": draw(numbers),
            }
        )
    data = {
        "format": "impactgui-scene",
        "version": 1,
        "contact": {"restitution": 0.5, "friction": draw(st.sampled_from([0.0, 0.3]))},
        "boundaries": [
            {
                "id": "floor",
                "type": "polyline",
                "points": [[-10.0, 0.0], [0.0, 0.0], [4.0, 0.5], [20.0, 0.5]],
            },
            {
                "id": "bowl",
                "type": "arc",
                "center": [8.0, 3.0],
                "radius": 2.5,
                "start_deg": 180.0,
                "end_deg": 360.0,
            },
        ],
        "bodies": bodies,
    }
    try:
        return parse_scene(data)
    except SceneError:
        reject()  # a body overlapping a boundary at the start


def expected_pair(kin: DiskKinematics, i: int, j: int, feature: int):
    """What the pair of ``(i, j)`` or ``(i, feature)`` is, from the System alone."""
    system = kin.system
    body = system.disk_body_id(i)
    if j < 0:
        fid, shape, e, mu = system.features[feature]
        return (body, fid), body, fid, shape, float(e), float(mu)
    other = system.disk_body_id(j)
    mu = float(system.disk_friction)
    return (body, other), body, other, None, float(system.disk_restitution), mu


@given(scenes_with_boundaries() | bead_scenes(), st.floats(0.1, 20.0))
def test_candidate_rows_read_as_the_pairs_a_search_finds(scene, margin):
    """Each row is the pair of its indices; the gaps on rows are those on the pairs' list."""
    system = System(scene)
    kin = DiskKinematics(system)
    rows = kin.candidates(system.q0, margin, np.arange(system.n_disks))
    c = system.centres(system.q0)
    for n, pair in enumerate(rows):
        key, body, other, shape, e, mu = expected_pair(
            kin, int(rows.first[n]), int(rows.second[n]), int(rows.feature[n])
        )
        assert (pair.key, pair.body, pair.other) == (key, body, other)
        assert pair.feature is shape and pair.restitution == e
        assert pair.friction in (mu, 0.0)
        assert kin.pairs[key] is pair and rows[n] is pair
        if pair.j >= 0:
            ordered = abs(kin.rail_y[pair.i] - kin.rail_y[pair.j]) < (
                kin.radii[pair.i] + kin.radii[pair.j]
            )
            assert pair.order == (np.sign(c[pair.i, 0] - c[pair.j, 0]) if ordered else 0.0)
        else:
            assert pair.neighbours == kin.neighbours[pair.feature_index]
    # arrays and the list of the same (already made) pairs: the same gap set
    listed = GapSet(kin, list(rows))
    arrays = GapSet(kin, kin.candidates(system.q0, margin, np.arange(system.n_disks)))
    for name in ("first", "second", "segment_rows", "vertex_rows", "seg_a", "seg_e", "vertex_p"):
        assert np.array_equal(getattr(listed, name), getattr(arrays, name)), name
    assert listed.arc_rows == arrays.arc_rows
    assert [type(p.feature) for p in arrays.pairs] == [type(p.feature) for p in listed.pairs]
    kinds = {Segment: listed.segment_rows, Vertex: listed.vertex_rows}
    for kind, found in kinds.items():
        assert [n for n, p in enumerate(rows) if isinstance(p.feature, kind)] == found.tolist()
    assert [n for n, p in enumerate(rows) if isinstance(p.feature, Arc)] == listed.arc_rows
    q = system.q0 + 0.3 * system.v0
    for band in (False, True):
        a, b = arrays.gaps(q, band=band), listed.gaps(q, band=band)
        assert a.tobytes() == b.tobytes()
    a, b = arrays.values(q, system.v0), listed.values(q, system.v0)
    assert a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes()


@given(bead_scenes(), st.data())
def test_selected_rows_are_the_selected_pairs(scene, data):
    system = System(scene)
    kin = DiskKinematics(system)
    rows = kin.candidates(system.q0, 20.0, np.arange(system.n_disks))
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=len(rows), max_size=len(rows))))
    picked = rows.select(mask) + rows.select(~mask)
    expected = [p for p, keep in zip(rows, mask, strict=True) if keep]
    expected += [p for p, keep in zip(rows, mask, strict=True) if not keep]
    assert picked == expected
    assert picked == PairRows.of(kin, expected)
    assert len(np.unique(rows.codes())) == len(rows)
    assert [kin.pair_code(p) for p in rows] == rows.codes().tolist()


def same_contact(a, b) -> bool:
    """Every field of two Contacts the same, to the bit."""
    return (
        all(getattr(a, name) == getattr(b, name) for name in FIELDS)
        and all(same_bits(float(getattr(a, n)), float(getattr(b, n))) for n in FLOATS)
        and all(
            np.asarray(getattr(a, n)).tobytes() == np.asarray(getattr(b, n)).tobytes()
            for n in ARRAYS
        )
    )


def rail_contacts(scene, data):
    """The contacts of a scene's bead pairs on one rail as arrays, or None if there are none."""
    system = System(scene)
    kin = DiskKinematics(system)
    rows = kin.candidates(system.q0, 20.0, np.arange(system.n_disks))
    rows = rows.select(rows.rail_rows())
    if not len(rows):
        return None
    q = system.q0 + data.draw(st.sampled_from([0.0, 0.5, 3.0])) * system.v0
    try:
        many = kin.evaluate_many(rows, q, system.v0)
    except SolverError:
        return None  # two centres coincide: both routes raise (test_contact_pairs_many)
    assert isinstance(many, RailContacts)
    return system, many


@given(bead_scenes(), st.data())
def test_rail_contacts_read_as_their_contacts(scene, data):
    """Speeds, grazing, the law's columns and the contact problem: the per-contact answers."""
    found = rail_contacts(scene, data)
    if found is None:
        return
    system, many = found
    one = list(many)
    assert speeds_of(many).tobytes() == speeds_of(one).tobytes()
    assert contact_keys(many) == contact_keys(one)
    qdd = np.array(data.draw(st.lists(numbers, min_size=system.N, max_size=system.N)))
    assert grazing_many(many, qdd).tolist() == [grazing(e, qdd) for e in one]
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=len(one), max_size=len(one))))
    picked = list(subset(many, mask))
    expected = [e for e, keep in zip(one, mask, strict=True) if keep]
    assert len(picked) == len(expected)
    for a, b in zip(picked, expected, strict=True):
        assert same_contact(a, b)
    for N in (system.N, SPARSE_ABOVE + 1):
        handler = SimpleNamespace(s=SimpleNamespace(N=N))
        for field in ("G_local", "H_local"):
            a = ImpactRules.columns(handler, many, field)
            b = ImpactRules.columns(handler, one, field)
            if N != system.N:  # the sparse form: as a longer system would build it
                a, b = a.toarray(), b.toarray()
            assert a.tobytes() == b.tobytes(), field
    f = np.array(data.draw(st.lists(numbers, min_size=system.N, max_size=system.N)))
    a = solve_contact_problem(many, system.M_diag**-1.0, f)
    b = solve_contact_problem(one, system.M_diag**-1.0, f)
    for name in ("qdd", "lam", "tau", "a_n", "a_t", "friction_force"):
        assert np.asarray(getattr(a, name)).tobytes() == np.asarray(getattr(b, name)).tobytes()
    assert a.modes == b.modes


@given(bead_scenes(), st.data())
def test_a_shared_stage_record_reads_as_one_per_contact(scene, data):
    found = rail_contacts(scene, data)
    if found is None:
        return
    system, many = found
    v = system.v0.copy()
    G = ImpactRules.columns(SimpleNamespace(s=SimpleNamespace(N=system.N)), many, "G_local")
    law = data.draw(st.sampled_from(["sequential", "staged"]))
    result = resolve_impact(system.M_diag, G, v, many.restitution, law=law)
    shared = SharedImpactStages(many, result.stages)
    for k, e in enumerate(many):
        kwargs = {
            "t": 0.0,
            "type": "impact",
            "body": e.body,
            "other": e.other,
            "normal_impulse": float(result.impulse[k]),
            "v_minus": v,
            "v_plus": np.asarray(result.v_plus),
        }
        a = Event(**kwargs, impact_stages=shared)
        b = Event(**kwargs, impact_stages=ImpactStages(e.dofs, e.G_local, k, result.stages))
        assert normal_speeds(a) == normal_speeds(b)
        rows_a, rows_b = stage_rows(a), stage_rows(b)
        assert len(rows_a) == len(rows_b)
        for x, y in zip(rows_a, rows_b, strict=True):
            assert same_bits(x.normal_impulse, y.normal_impulse)
            assert same_bits(x.tangent_impulse, y.tangent_impulse)
            assert x.v_after.tobytes() == y.v_after.tobytes()


@st.composite
def chains(draw):
    """Beads on one rail, touching or apart, struck anywhere, under the scene's law."""
    n = draw(st.integers(2, 9))
    gaps = draw(st.lists(st.sampled_from([0.0, 0.0, 0.0, 0.2]), min_size=n, max_size=n))
    masses = draw(st.lists(st.sampled_from([1.0, 1.0, 2.0, 0.5]), min_size=n, max_size=n))
    vx = draw(st.lists(st.sampled_from([0.0, 0.0, 1.0, -1.0, 0.3]), min_size=n, max_size=n))
    x = [0.0]
    for k in range(1, n):
        x.append(x[-1] + 1.0 + gaps[k])
    bodies = [
        {
            "id": f"b{k}",
            "type": "bead",
            "rail_y": 0.0,
            "mass": masses[k],
            "radius": 0.5,
            "x": x[k],
            "vx": vx[k],
        }
        for k in range(n)
    ]
    law = draw(st.sampled_from(["sequential", "staged", "poisson"]))
    restitution = draw(st.sampled_from([1.0, 0.5, 0.0]))
    walls = []
    if draw(st.booleans()):
        walls = [
            {"id": "wall", "type": "segment", "a": [x[-1] + 1.0, -1.0], "b": [x[-1] + 1.0, 1.0]}
        ]
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 1,
            "gravity": [0.0, 0.0],
            "contact": {"restitution": restitution, "friction": 0.0, "impact_law": law},
            "boundaries": walls,
            "bodies": bodies,
        }
    )


def run(scene, per_contact: bool) -> Trajectory:
    stepper = make_stepper(scene, t_end=2.0, dt_out=0.5, method="event-driven")
    trajectory = Trajectory(stepper.system)
    evaluate_many = DiskKinematics.evaluate_many

    def as_contacts(self, pairs, q, v):
        return list(evaluate_many(self, pairs, q, v))

    with mock.patch.object(
        DiskKinematics, "evaluate_many", as_contacts if per_contact else evaluate_many
    ):
        while stepper.status == "running":
            trajectory.append(stepper.step())
    assert stepper.status == "finished", stepper.message
    return trajectory


@settings(max_examples=150)
@given(chains())
def test_a_chain_run_on_arrays_is_the_run_per_contact(scene):
    """Frames, events and their stages: the bits of the run that makes a Contact per pair."""
    a, b = run(scene, per_contact=False), run(scene, per_contact=True)
    assert len(a.frames) == len(b.frames)
    for x, y in zip(a.frames, b.frames, strict=True):
        assert same_bits(x.t, y.t) and x.kind == y.kind
        assert x.q.tobytes() == y.q.tobytes() and x.v.tobytes() == y.v.tobytes()
    assert len(a.events) == len(b.events)
    for x, y in zip(a.events, b.events, strict=True):
        for name in ("t", "type", "body", "other", "normal_impulse", "tangent_impulse",
                     "stages", "energy_change", "message"):  # fmt: skip
            assert same_bits(getattr(x, name), getattr(y, name)), name
        for name in ("v_minus", "v_plus"):
            assert np.asarray(getattr(x, name)).tobytes() == np.asarray(getattr(y, name)).tobytes()
        assert normal_speeds(x) == normal_speeds(y)
        rows_x, rows_y = stage_rows(x), stage_rows(y)
        assert [(r.stage, r.normal_impulse, r.v_after.tobytes()) for r in rows_x] == [
            (r.stage, r.normal_impulse, r.v_after.tobytes()) for r in rows_y
        ]


@settings(max_examples=300)
@given(
    sequential_chains() | sparse_sets(),
    st.sampled_from([1.0, 0.5, 0.0]),
    st.sampled_from([1e-12, 1e-9]),
)
def test_the_sequential_heap_keeps_only_speeds_that_can_be_hit(problem, e, tol):
    """Speeds that can neither be the most negative nor tie with it stay off the sparse
    route's heap: the dense loop's collisions, in its order, at the default and a wider
    tolerance (far below round-off the two routes' infinite tails part by round-off)."""
    masses, G, v = problem

    def outcome(columns):
        try:
            return resolve_impact(masses, columns, v, e, law="sequential", tol=tol, max_stages=3000)
        except SolverError as error:
            return str(error).split(" (")[0]

    sparse, dense = outcome(sp.csc_array(G)), outcome(G)
    if isinstance(dense, str) or isinstance(sparse, str):
        assert sparse == dense
        return
    hits = [[np.flatnonzero(np.asarray(s.lam)).tolist() for s in r.stages] for r in (sparse, dense)]
    assert hits[0] == hits[1]
    scale = 1.0 + float(np.max(np.abs(v)))
    np.testing.assert_allclose(sparse.v_plus, dense.v_plus, rtol=0.0, atol=1e-12 * scale)
