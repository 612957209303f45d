"""Candidate search: same pairs as brute force, far fewer tests than brute force."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from solver.broadphase import StaticIndex, disk_pairs
from solver.errors import InputError
from solver.geometry import Arc, Segment, Vertex, bounding_box

coord = st.floats(-5.0, 5.0)
point = st.tuples(coord, coord)
radius = st.floats(0.0, 0.8)
margin = st.floats(0.0, 0.5)


@st.composite
def disks(draw, max_size=30):
    centres = draw(st.lists(point, min_size=0, max_size=max_size))
    # Repeat some centres so coincident and touching disks occur.
    centres += draw(st.lists(st.sampled_from(centres), max_size=3)) if centres else []
    radii = draw(st.lists(radius, min_size=len(centres), max_size=len(centres)))
    return np.array(centres, dtype=float).reshape(-1, 2), np.array(radii, dtype=float)


segments = (
    st.tuples(point, point).filter(lambda ab: math.dist(*ab) > 1e-9).map(lambda ab: Segment(*ab))
)
vertices = point.map(Vertex)


def arc_by_span(center, r, start, span):
    return Arc(center, r, start, start + span)


arc_features = st.builds(
    arc_by_span, point, st.floats(0.1, 3.0), st.floats(-7.0, 7.0), st.floats(0.1, 2 * math.pi)
)
feature_lists = st.lists(st.one_of(segments, vertices, arc_features), max_size=15)


def brute_force_feature_pairs(centres, radii, margin, feats):
    pairs = []
    reach = radii + margin
    for disk, ((x, y), h) in enumerate(zip(centres, reach, strict=True)):
        for k, f in enumerate(feats):
            xmin, ymin, xmax, ymax = bounding_box(f)
            if xmin <= x + h and x - h <= xmax and ymin <= y + h and y - h <= ymax:
                pairs.append((disk, k))
    return sorted(pairs)


def true_distance(feature, c) -> float:
    """Distance from c to the closed feature (end points included), closed forms."""
    c = np.asarray(c, dtype=float)
    if isinstance(feature, Vertex):
        return float(np.linalg.norm(c - feature.p))
    if isinstance(feature, Segment):
        a, b = np.array(feature.a), np.array(feature.b)
        s = min(1.0, max(0.0, float((c - a) @ (b - a)) / float((b - a) @ (b - a))))
        return float(np.linalg.norm(c - a - s * (b - a)))
    rel = c - feature.center
    theta = math.atan2(rel[1], rel[0])
    if feature.is_full_circle or (theta - feature.start) % (2 * math.pi) <= feature.span:
        return abs(float(np.linalg.norm(rel)) - feature.radius)
    return min(
        float(np.linalg.norm(c - feature.point_at(feature.start))),
        float(np.linalg.norm(c - feature.point_at(feature.end))),
    )


@given(disks(), margin, feature_lists, st.sampled_from([None, 0.05, 0.7, 20.0]))
def test_static_query_finds_the_brute_force_pairs(disk_set, m, feats, cell):
    centres, radii = disk_set
    index = StaticIndex(feats, cell=cell)
    found = index.query(centres, radii, m)
    assert [tuple(p) for p in found.pairs.tolist()] == brute_force_feature_pairs(
        centres, radii, m, feats
    )
    assert found.checks <= len(centres) * len(feats)
    listed = {tuple(p) for p in found.pairs.tolist()}
    for disk, (c, r) in enumerate(zip(centres, radii, strict=True)):
        for k, f in enumerate(feats):
            if true_distance(f, c) - r <= m - 1e-9:
                assert (disk, k) in listed


def brute_force_disk_pairs(centres, radii, m):
    points = centres.tolist()
    return [
        (i, j)
        for i in range(len(points))
        for j in range(i + 1, len(points))
        if math.dist(points[i], points[j]) <= radii[i] + radii[j] + m
    ]


@given(disks(max_size=40), margin)
def test_disk_pairs_are_the_brute_force_pairs(disk_set, m):
    centres, radii = disk_set
    found = disk_pairs(centres, radii, m)
    assert [tuple(p) for p in found.pairs.tolist()] == brute_force_disk_pairs(centres, radii, m)
    assert found.checks <= len(centres) * (len(centres) - 1) // 2


def test_touching_disks_of_zero_radius_are_paired():
    found = disk_pairs([[1.0, 1.0], [1.0, 1.0], [2.0, 1.0]], [0.0, 0.0, 0.0], 0.0)
    assert found.pairs.tolist() == [[0, 1]]


def test_five_hundred_disks_need_far_fewer_tests_than_all_pairs():
    rng = np.random.default_rng(7)
    k = 500
    centres = rng.uniform(0.0, 25.0, size=(k, 2))
    radii = rng.uniform(0.05, 0.15, size=k)
    m = 0.05
    found = disk_pairs(centres, radii, m)
    assert found.checks < k * k // 100
    assert [tuple(p) for p in found.pairs.tolist()] == brute_force_disk_pairs(centres, radii, m)

    xs = np.linspace(0.0, 25.0, 201)
    ground = [
        Segment((a, 0.3 * math.sin(a)), (b, 0.3 * math.sin(b))) for a, b in itertools.pairwise(xs)
    ]
    feats = ground + [Vertex(s.a) for s in ground]
    query = StaticIndex(feats).query(centres, radii, m)
    assert query.checks < k * len(feats) // 100
    assert [tuple(p) for p in query.pairs.tolist()] == brute_force_feature_pairs(
        centres, radii, m, feats
    )


def test_long_diagonal_wall_and_huge_disk_are_still_found():
    wall = Segment((-1000.0, -1000.0), (1000.0, 1000.0))
    pebble = Vertex((500.0, -500.0))
    index = StaticIndex([wall, pebble], cell=0.01)
    found = index.query([[3.0, 3.1], [0.0, -10.0]], [0.2, 800.0], 0.0)
    assert found.pairs.tolist() == [[0, 0], [1, 0], [1, 1]]


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: disk_pairs([[0.0, 0.0, 0.0]], [0.1], 0.0), "centres"),
        (lambda: disk_pairs([[0.0, math.inf]], [0.1], 0.0), "centres"),
        (lambda: disk_pairs([[0.0, 0.0]], [-0.1], 0.0), "radii"),
        (lambda: disk_pairs([[0.0, 0.0]], [0.1, 0.2], 0.0), "radii"),
        (lambda: disk_pairs([[0.0, 0.0]], [0.1], -1.0), "margin"),
        (lambda: StaticIndex([Vertex((0.0, 0.0))], cell=0.0), "cell"),
        (lambda: StaticIndex([]).query([[0.0, 0.0]], [0.1], math.nan), "margin"),
    ],
)
def test_bad_search_input_is_refused_naming_the_argument(call, field):
    with pytest.raises(InputError, match=field):
        call()
