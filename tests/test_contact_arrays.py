"""Contact kinematics on arrays against the per-contact functions of solver.geometry."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from solver.contact_arrays import FeatureArrays, SparseRows, disk_disk
from solver.geometry import (
    Arc,
    Segment,
    Vertex,
    disk_disk_contact,
    disk_feature_contact,
)
from solver.scene import parse_scene
from solver.system import System

coord = st.floats(-2.0, 2.0)
speed = st.floats(-3.0, 3.0)
size = st.floats(0.05, 0.6)


@st.composite
def disks(draw, count: int):
    """``count`` disks: centres, centre velocities, angular velocities, radii."""
    c = np.array([[draw(coord), draw(coord)] for _ in range(count)])
    cdot = np.array([[draw(speed), draw(speed)] for _ in range(count)])
    omega = np.array([draw(speed) for _ in range(count)])
    radius = np.array([draw(size) for _ in range(count)])
    return c, cdot, omega, radius


@st.composite
def features(draw):
    kind = draw(st.sampled_from(["segment", "vertex", "arc"]))
    p = (draw(coord), draw(coord))
    if kind == "vertex":
        return Vertex(p)
    if kind == "segment":
        q = (draw(coord), draw(coord))
        if math.dist(p, q) < 1e-3:
            q = (p[0] + 1.0, p[1])
        return Segment(p, q)
    start = draw(st.floats(-7.0, 7.0))
    return Arc(p, draw(st.floats(0.2, 2.0)), start, start + draw(st.floats(0.3, 2 * math.pi)))


def assert_rows_match(rows, k, reference):
    """Row ``k`` of the arrays equals the scalar ``DiskContact`` (or is invalid for None)."""
    assert bool(rows.valid[k]) == (reference is not None)
    if reference is None:
        return
    for name in ("g", "u_n", "u_t", "gamma_n", "gamma_t"):
        expected = getattr(reference, name)
        assert getattr(rows, name)[k] == pytest.approx(expected, rel=1e-9, abs=1e-11, nan_ok=True)
    for name in ("n", "t", "point"):
        np.testing.assert_allclose(getattr(rows, name)[k], getattr(reference, name), atol=1e-12)


@given(disks(6), st.lists(features(), min_size=1, max_size=4), st.data())
def test_disk_feature_rows_are_the_per_contact_kinematics(state, feature_list, data):
    c, cdot, omega, radius = state
    disk = np.array(data.draw(st.lists(st.integers(0, 5), min_size=1, max_size=8)))
    feature = np.array(
        data.draw(
            st.lists(st.integers(0, len(feature_list) - 1), min_size=len(disk), max_size=len(disk))
        )
    )

    rows = FeatureArrays(feature_list).contacts(disk, feature, c, cdot, omega, radius)

    np.testing.assert_array_equal(rows.i, disk)
    np.testing.assert_array_equal(rows.feature, feature)
    for k, (i, f) in enumerate(zip(rows.i, rows.feature, strict=True)):
        reference = disk_feature_contact(feature_list[f], c[i], cdot[i], radius[i], omega[i])
        assert_rows_match(rows, k, reference)


@given(disks(5), st.data())
def test_disk_disk_rows_are_the_per_contact_kinematics(state, data):
    c, cdot, omega, radius = state
    pairs = data.draw(
        st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=8)
    )
    i, j = (np.array(column) for column in zip(*pairs, strict=True))
    c[j[0]] = c[i[0]] if data.draw(st.booleans()) else c[j[0]]  # coinciding centres

    rows = disk_disk(c, cdot, omega, radius, i, j)

    for k, (a, b) in enumerate(pairs):
        reference = disk_disk_contact(
            c[a], cdot[a], radius[a], omega[a], c[b], cdot[b], radius[b], omega[b]
        )
        assert_rows_match(rows, k, reference)


def test_beads_on_a_rail_touch_along_the_rail():
    c = np.array([[0.0, 0.3], [1.0, 0.3]])
    cdot = np.array([[2.0, 0.0], [-1.0, 0.0]])

    rows = disk_disk(c, cdot, np.zeros(2), np.array([0.5, 0.5]), np.array([1]), np.array([0]))

    np.testing.assert_array_equal(rows.n, [[1.0, 0.0]])
    assert (rows.g[0], rows.u_n[0], rows.gamma_n[0], rows.gamma_t[0]) == (0.0, -3.0, 0.0, 0.0)


@functools.cache
def mixed_system() -> System:
    return System(
        parse_scene(
            {
                "format": "impactgui-scene",
                "version": 1,
                "contact": {"restitution": 0.4, "friction": 0.2},
                "boundaries": [
                    {"id": "curb", "type": "polyline",
                     "points": [[0, 0.6], [0, 0.05], [0.4, 0.05], [0.4, 0], [2, 0]]},
                    {"id": "bump", "type": "arc", "center": [1.5, 0.0], "radius": 0.2,
                     "start_deg": 0, "end_deg": 180},
                ],
                "bodies": [
                    {"id": "w", "type": "wheel", "mass": 10, "inertia": 0.05, "radius": 0.1,
                     "position": [0.8, 0.2]},
                    {"id": "u", "type": "wheel", "mass": 2, "inertia": 0.01, "radius": 0.15,
                     "position": [1.2, 0.5]},
                    {"id": "b1", "type": "bead", "rail_y": 0.2, "mass": 2, "radius": 0.05,
                     "x": 0.3},
                    {"id": "b2", "type": "bead", "rail_y": 0.2, "mass": 3, "radius": 0.05,
                     "x": 0.45},
                ],
            }
        )
    )  # fmt: skip


@given(st.lists(coord, min_size=8, max_size=8), st.lists(speed, min_size=8, max_size=8), st.data())
def test_jacobian_rows_are_those_of_the_generalized_contacts(q_values, v_values, data):
    system = mixed_system()
    q, v = np.array(q_values), np.array(v_values)
    q[[0, 1, 3, 4]] = 0.5 + 0.25 * q[[0, 1, 3, 4]]  # wheels near the curb, the bump and b1, b2
    c, cdot = system.centres(q), system.centre_velocities(v)
    omega = system.angular_velocities(v)
    reference = system.contacts(q, v, margin=10.0)
    index = {system.disk_body_id(k): k for k in range(system.n_disks)}
    feature_ids = [fid for fid, _, _, _ in system.features]

    contact = data.draw(st.sampled_from(reference))

    i = np.array([index[contact.body]])
    if contact.other in index:
        rows = disk_disk(c, cdot, omega, system.radii, i, np.array([index[contact.other]]))
    else:
        feature = np.array([feature_ids.index(contact.other)])
        rows = system.feature_arrays.contacts(i, feature, c, cdot, omega, system.radii)
    G, H = system.disk_dofs.jacobians(rows)

    np.testing.assert_allclose(G.to_csr().toarray()[0], contact.G, atol=1e-15)
    np.testing.assert_allclose(H.to_csr().toarray()[0], contact.H, atol=1e-15)
    assert G.dot(v)[0] == pytest.approx(contact.u_n, abs=1e-12)
    assert H.dot(v)[0] == pytest.approx(contact.u_t, abs=1e-12)


@given(st.integers(1, 6), st.integers(1, 4), st.integers(1, 9), st.data())
def test_sparse_rows_products_are_the_dense_ones(rows, width, columns, data):
    values = np.array(
        data.draw(st.lists(speed, min_size=rows * width, max_size=rows * width))
    ).reshape(rows, width)
    cols = np.array(
        data.draw(
            st.lists(st.integers(0, columns - 1), min_size=rows * width, max_size=rows * width)
        )
    ).reshape(rows, width)
    v = np.array(data.draw(st.lists(speed, min_size=columns, max_size=columns)))
    w = np.array(data.draw(st.lists(speed, min_size=rows, max_size=rows)))
    dense = np.zeros((rows, columns))
    np.add.at(dense, (np.repeat(np.arange(rows), width), cols.ravel()), values.ravel())
    matrix = SparseRows(cols, values, columns)

    np.testing.assert_allclose(matrix.dot(v), dense @ v, atol=1e-12)
    np.testing.assert_allclose(matrix.transpose_dot(w), dense.T @ w, atol=1e-12)
    np.testing.assert_allclose(matrix.to_csr().toarray(), dense, atol=1e-12)
