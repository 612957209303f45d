"""Contact geometry: distances, normals, Hessians and contact kinematics.

Reference values come from finite differences of the distance along random
smooth trajectories and from closed forms (rolling round a corner, riding in a
bowl), never from the program's own output.
"""

import itertools
import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from solver.errors import InputError
from solver.geometry import (
    Arc,
    Segment,
    Vertex,
    boundary_features,
    bounding_box,
    disk_disk_contact,
    disk_feature_contact,
    disk_segment_contacts,
)

STEP = 1e-3  # time step of the five-point stencils (s)
SPACE_STEP = 1e-6  # spatial step of the gradient / Hessian differences (m)


def close(actual: float, expected: float, tol: float = 1e-6) -> bool:
    return abs(actual - expected) <= tol * max(1.0, abs(expected))


def first_derivative(f, h: float = STEP) -> float:
    """Five-point central difference of f at 0 (error O(h⁴))."""
    return (-f(2 * h) + 8 * f(h) - 8 * f(-h) + f(-2 * h)) / (12 * h)


def second_derivative(f, h: float = STEP) -> float:
    """Five-point central second difference of f at 0 (error O(h⁴))."""
    return (-f(2 * h) + 16 * f(h) - 30 * f(0.0) + 16 * f(-h) - f(-2 * h)) / (12 * h * h)


def rotate90(v: np.ndarray, omega: float) -> np.ndarray:
    """ω × v for a counter-clockwise angular velocity ω about the z axis."""
    return omega * np.array([-v[1], v[0]])


coord = st.floats(-2.0, 2.0)
speed = st.floats(-2.0, 2.0)
accel = st.floats(-5.0, 5.0)
unit_fraction = st.floats(0.2, 0.8)
vec_speed = st.tuples(speed, speed).map(np.array)
vec_accel = st.tuples(accel, accel).map(np.array)


@st.composite
def segment_cases(draw):
    """A segment and a point well inside its Voronoi region, 0.2..1.5 m away."""
    a = np.array([draw(coord), draw(coord)])
    b = np.array([draw(coord), draw(coord)])
    assume(np.linalg.norm(b - a) >= 0.5)
    e = b - a
    left = np.array([-e[1], e[0]]) / np.linalg.norm(e)
    side = draw(st.sampled_from([-1.0, 1.0]))
    c = a + draw(unit_fraction) * e + side * draw(st.floats(0.2, 1.5)) * left
    return Segment(a, b), c


@st.composite
def vertex_cases(draw):
    p = np.array([draw(coord), draw(coord)])
    angle = draw(st.floats(-math.pi, math.pi))
    dist = draw(st.floats(0.2, 2.0))
    return Vertex(p), p + dist * np.array([math.cos(angle), math.sin(angle)])


@st.composite
def arc_cases(draw):
    """An arc and a point inside its angular span, inside or outside the circle."""
    center = np.array([draw(coord), draw(coord)])
    radius = draw(st.floats(0.5, 2.0))
    start = draw(st.floats(-2 * math.pi, 2 * math.pi))
    span = draw(st.floats(0.5, 2 * math.pi))
    theta = start + draw(unit_fraction) * span
    inside = draw(st.booleans())
    rho = radius * (draw(st.floats(0.4, 0.8)) if inside else draw(st.floats(1.2, 3.0)))
    c = center + rho * np.array([math.cos(theta), math.sin(theta)])
    return Arc(center, radius, start, start + span), c


feature_cases = st.one_of(segment_cases(), vertex_cases(), arc_cases())


def distance(feature, c: np.ndarray) -> float:
    near = feature.nearest(c)
    assert near is not None
    return near.d


@given(feature_cases)
def test_normal_is_gradient_of_distance(case):
    feature, c = case
    near = feature.nearest(c)
    assert near is not None
    for k in range(2):
        e = np.zeros(2)
        e[k] = SPACE_STEP
        fd = (distance(feature, c + e) - distance(feature, c - e)) / (2 * SPACE_STEP)
        assert close(near.n[k], fd)
    assert close(float(np.linalg.norm(near.n)), 1.0, 1e-12)
    assert np.allclose(near.point + near.d * near.n, c, atol=1e-12)


@given(feature_cases)
def test_hessian_is_second_derivative_of_distance(case):
    feature, c = case
    near = feature.nearest(c)
    for k in range(2):
        e = np.zeros(2)
        e[k] = SPACE_STEP
        column = (feature.nearest(c + e).n - feature.nearest(c - e).n) / (2 * SPACE_STEP)
        for i in range(2):
            assert close(near.hess[i, k], column[i], 1e-5)


@given(feature_cases, vec_speed, vec_accel, st.floats(0.0, 0.15), speed, accel)
def test_disk_feature_kinematics_match_derivatives_of_gap(case, cdot, cddot, r, omega, alpha):
    feature, c0 = case

    def centre(t):
        return c0 + cdot * t + 0.5 * cddot * t * t

    def gap(t):
        return distance(feature, centre(t)) - r

    def slip(t):
        tangent = disk_feature_contact(feature, centre(t), cdot + cddot * t, r, 0.0).t
        return float(tangent @ (cdot + cddot * t)) + r * (omega + alpha * t)

    contact = disk_feature_contact(feature, c0, cdot, r, omega)
    assert close(contact.g, gap(0.0), 1e-12)
    assert close(contact.u_n, first_derivative(gap))
    assert close(float(contact.n @ cddot) + contact.gamma_n, second_derivative(gap))
    assert close(contact.u_t, slip(0.0), 1e-12)
    a_t = float(contact.t @ cddot) + r * alpha + contact.gamma_t
    assert close(a_t, first_derivative(slip))


@given(feature_cases, vec_speed, st.floats(0.0, 0.15), speed)
def test_slip_speed_is_contact_point_velocity_along_tangent(case, cdot, r, omega):
    feature, c = case
    contact = disk_feature_contact(feature, c, cdot, r, omega)
    assert np.allclose(contact.t, [contact.n[1], -contact.n[0]])
    point_velocity = cdot + rotate90(-r * contact.n, omega)
    assert close(contact.u_t, float(contact.t @ point_velocity), 1e-12)


@st.composite
def disk_pairs(draw):
    ci = np.array([draw(coord), draw(coord)])
    cj = np.array([draw(coord), draw(coord)])
    assume(np.linalg.norm(ci - cj) >= 0.3)
    radii = (draw(st.floats(0.0, 0.5)), draw(st.floats(0.0, 0.5)))
    return ci, cj, radii


@given(disk_pairs(), vec_speed, vec_speed, vec_accel, vec_accel, speed, speed, accel, accel)
def test_disk_disk_kinematics_match_derivatives_of_gap(
    pair, vi, vj, ai, aj, omega_i, omega_j, alpha_i, alpha_j
):
    ci0, cj0, (ri, rj) = pair

    def centres(t):
        return ci0 + vi * t + 0.5 * ai * t * t, cj0 + vj * t + 0.5 * aj * t * t

    def gap(t):
        ci, cj = centres(t)
        return float(np.linalg.norm(ci - cj)) - ri - rj

    def slip(t):
        ci, cj = centres(t)
        n = (ci - cj) / np.linalg.norm(ci - cj)
        tangent = np.array([n[1], -n[0]])
        rel = (vi + ai * t) - (vj + aj * t)
        return float(tangent @ rel) + ri * (omega_i + alpha_i * t) + rj * (omega_j + alpha_j * t)

    contact = disk_disk_contact(ci0, vi, ri, omega_i, cj0, vj, rj, omega_j)
    assert close(contact.g, gap(0.0), 1e-12)
    assert np.allclose(contact.n, (ci0 - cj0) / np.linalg.norm(ci0 - cj0))
    assert close(contact.u_n, first_derivative(gap))
    assert close(float(contact.n @ (ai - aj)) + contact.gamma_n, second_derivative(gap))
    assert close(contact.u_t, slip(0.0), 1e-12)
    a_t = float(contact.t @ (ai - aj)) + ri * alpha_i + rj * alpha_j + contact.gamma_t
    assert close(a_t, first_derivative(slip))


@given(disk_pairs(), vec_speed, vec_speed, speed, speed)
def test_disk_disk_contact_is_symmetric_and_slips_at_the_contact_points(
    pair, vi, vj, omega_i, omega_j
):
    ci, cj, (ri, rj) = pair
    ij = disk_disk_contact(ci, vi, ri, omega_i, cj, vj, rj, omega_j)
    ji = disk_disk_contact(cj, vj, rj, omega_j, ci, vi, ri, omega_i)
    assert close(ij.g, ji.g, 1e-12)
    assert np.allclose(ij.n, -ji.n)
    for name in ("u_n", "u_t", "gamma_n", "gamma_t"):
        assert close(getattr(ij, name), getattr(ji, name), 1e-12)
    velocity_on_i = vi + rotate90(-ri * ij.n, omega_i)
    velocity_on_j = vj + rotate90(rj * ij.n, omega_j)
    assert close(ij.u_t, float(ij.t @ (velocity_on_i - velocity_on_j)), 1e-12)
    assert np.allclose(ij.point, cj + rj * ij.n)


def test_wheel_on_flat_ground_follows_spec_conventions():
    ground = Segment((-1.0, 0.0), (1.0, 0.0))
    contact = disk_feature_contact(ground, (0.2, 0.1), (-5.0, -3.0), 0.1, 4.0)
    assert np.allclose(contact.n, [0.0, 1.0])
    assert np.allclose(contact.t, [1.0, 0.0])
    assert contact.g == pytest.approx(0.0, abs=1e-15)
    assert contact.u_n == pytest.approx(-3.0)
    assert contact.u_t == pytest.approx(-5.0 + 0.1 * 4.0)
    assert contact.gamma_n == 0.0 and contact.gamma_t == 0.0


@given(st.floats(0.0, math.pi), st.floats(-10.0, 10.0), st.floats(0.02, 0.5))
def test_rolling_over_convex_corner_has_positive_gamma_n(theta, w, r):
    """MECHANICS §1: the centre circles the corner at radius r, gamma_n = (t·ċ)²/r >= 0.

    Paper 004 (26c) prints gamma_n = f''(x) ẋ² with f concave: the wrong sign.
    """
    corner = Vertex((0.4, 0.05))
    radial = np.array([math.cos(theta), math.sin(theta)])
    c = np.array(corner.p) + r * radial
    cdot = r * w * np.array([-radial[1], radial[0]])
    contact = disk_feature_contact(corner, c, cdot, r, 0.0)
    assert contact.g == pytest.approx(0.0, abs=1e-14)
    assert contact.gamma_n == pytest.approx(float(contact.t @ cdot) ** 2 / r, rel=1e-12)
    assert contact.gamma_n == pytest.approx(r * w * w, rel=1e-12, abs=1e-300)
    centripetal = -r * w * w * radial
    assert float(contact.n @ centripetal) + contact.gamma_n == pytest.approx(0.0, abs=1e-9)


@given(st.floats(math.pi + 0.1, 2 * math.pi - 0.1), st.floats(-10.0, 10.0))
def test_riding_inside_a_bowl_has_negative_gamma_n(theta, w):
    """Concave side of an arc: the disk circles the bowl's centre at R - r."""
    R, r = 1.0, 0.1
    bowl = Arc((0.0, 1.0), R, math.pi, 2 * math.pi)
    radial = np.array([math.cos(theta), math.sin(theta)])
    rho = R - r
    c = np.array(bowl.center) + rho * radial
    cdot = rho * w * np.array([-radial[1], radial[0]])
    contact = disk_feature_contact(bowl, c, cdot, r, 0.0)
    assert np.allclose(contact.n, -radial)
    assert contact.g == pytest.approx(0.0, abs=1e-14)
    assert contact.gamma_n == pytest.approx(-float(cdot @ cdot) / rho, rel=1e-12, abs=1e-300)
    centripetal = -rho * w * w * radial
    assert float(contact.n @ centripetal) + contact.gamma_n == pytest.approx(0.0, abs=1e-9)


def point_to_segment_distance(c: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    e = b - a
    s = min(1.0, max(0.0, float((c - a) @ e) / float(e @ e)))
    return float(np.linalg.norm(c - (a + s * e)))


def feature_distance(features, c) -> float:
    answers = [f.nearest(c) for _, f in features]
    return min(near.d for near in answers if near is not None)


@given(
    st.lists(st.tuples(coord, coord), min_size=2, max_size=8, unique=True),
    st.tuples(st.floats(-3.0, 3.0), st.floats(-3.0, 3.0)),
)
def test_polyline_distance_is_min_over_its_features(points, c):
    pts = [np.array(p) for p in points]
    assume(all(np.linalg.norm(p - q) > 1e-3 for p, q in itertools.pairwise(pts)))
    c = np.array(c)
    assume(all(np.linalg.norm(c - p) > 0 for p in pts))
    features = boundary_features(SimpleNamespace(type="polyline", points=points))
    brute = min(point_to_segment_distance(c, p, q) for p, q in itertools.pairwise(pts))
    assert feature_distance(features, c) == pytest.approx(brute, rel=1e-9, abs=1e-12)


@given(
    st.floats(-360.0, 360.0),
    st.floats(5.0, 355.0),
    st.tuples(st.floats(-3.0, 3.0), st.floats(-3.0, 3.0)),
)
def test_arc_distance_is_min_over_its_features(start_deg, span_deg, c):
    boundary = SimpleNamespace(
        type="arc",
        center=(0.3, -0.2),
        radius=1.2,
        start_deg=start_deg,
        end_deg=start_deg + span_deg,
    )
    c = np.array(c)
    features = boundary_features(boundary)
    assert [suffix for suffix, _ in features] == ["", "#v0", "#v1"]
    angles = np.radians(np.linspace(start_deg, start_deg + span_deg, 20001))
    samples = np.array(boundary.center) + 1.2 * np.column_stack([np.cos(angles), np.sin(angles)])
    sampled = float(np.min(np.linalg.norm(samples - c, axis=1)))
    spacing = 1.2 * (angles[1] - angles[0])
    d = feature_distance(features, c)
    assert sampled - spacing <= d <= sampled + 1e-12


def test_segment_answers_only_on_its_open_interior():
    wall = Segment((0.0, 0.0), (2.0, 0.0))
    assert wall.nearest((0.0, 1.0)) is None
    assert wall.nearest((2.0, -1.0)) is None
    assert wall.nearest((-0.5, 0.3)) is None
    assert wall.nearest((1.0, -0.5)).d == pytest.approx(0.5)
    assert np.allclose(wall.nearest((1.0, -0.5)).n, [0.0, -1.0])


def test_point_on_a_segment_gets_the_left_normal():
    wall = Segment((1.0, 1.0), (1.0, 3.0))
    near = wall.nearest((1.0, 2.0))
    assert near.d == 0.0
    assert np.allclose(near.n, [-1.0, 0.0])
    assert np.allclose(near.point, [1.0, 2.0])


def test_point_on_an_arc_gets_the_outward_normal():
    arc = Arc((0.0, 0.0), 2.0, 0.0, math.pi)
    near = arc.nearest((0.0, 2.0))
    assert near.d == 0.0
    assert np.allclose(near.n, [0.0, 1.0])
    assert np.allclose(near.hess, [[0.5, 0.0], [0.0, 0.0]])


def test_degenerate_points_have_no_nearest():
    assert Vertex((1.0, 2.0)).nearest((1.0, 2.0)) is None
    assert Arc((0.0, 0.0), 1.0, 0.0, 2 * math.pi).nearest((0.0, 0.0)) is None
    assert disk_disk_contact((1, 1), (0, 0), 0.1, 0.0, (1, 1), (1, 0), 0.1, 0.0) is None


def test_arc_answers_only_strictly_inside_its_span():
    arc = Arc((0.0, 0.0), 1.0, 0.0, math.pi / 2)
    assert arc.nearest((2.0, 0.0)) is None
    assert arc.nearest((0.0, 2.0)) is None
    assert arc.nearest((1.0, -0.1)) is None
    assert arc.nearest((1.0, 1.0)).d == pytest.approx(math.sqrt(2) - 1)


def test_arc_angles_are_normalised_counter_clockwise():
    wrapped = Arc((0.0, 0.0), 1.0, math.radians(350), math.radians(10))
    assert wrapped.start == pytest.approx(math.radians(350))
    assert wrapped.span == pytest.approx(math.radians(20))
    assert wrapped.nearest((1.0, 0.0)) is not None
    negative = Arc((0.0, 0.0), 1.0, -math.pi / 2, math.pi / 2)
    assert negative.start == pytest.approx(3 * math.pi / 2)
    assert negative.end == pytest.approx(5 * math.pi / 2)
    assert negative.nearest((0.5, 0.0)) is not None
    assert negative.nearest((-0.5, 0.0)) is None
    full = Arc((0.0, 0.0), 1.0, math.radians(90), math.radians(450))
    assert full.is_full_circle
    assert full.nearest((-0.5, 0.0)) is not None


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: Segment((1.0, 1.0), (1.0, 1.0)), "a"),
        (lambda: Segment((0.0, math.nan), (1.0, 1.0)), "a"),
        (lambda: Arc((0.0, 0.0), 0.0, 0.0, 1.0), "radius"),
        (lambda: Arc((0.0, 0.0), 1.0, 1.0, 1.0), "start"),
        (lambda: Vertex((1.0, 2.0, 3.0)), "p"),
        (lambda: bounding_box("wall"), "feature"),
        (lambda: boundary_features(SimpleNamespace(type="circle")), "type"),
        (lambda: boundary_features(SimpleNamespace(type="polyline", points=[[0, 0]])), "points"),
        (
            lambda: boundary_features(SimpleNamespace(type="polyline", points=[[0, 0], [0, 0]])),
            "points",
        ),
    ],
)
def test_bad_geometry_is_refused_naming_the_field(make, field):
    with pytest.raises(InputError, match=field):
        make()


def test_boundary_features_name_every_feature():
    curb = SimpleNamespace(
        type="polyline", points=[[0, 0.6], [0, 0.05], [0.4, 0.05], [0.4, 0], [2, 0]]
    )
    features = boundary_features(curb)
    suffixes = [suffix for suffix, _ in features]
    assert sorted(suffixes) == sorted([f"#s{k}" for k in range(4)] + [f"#v{k}" for k in range(5)])
    by_suffix = dict(features)
    assert by_suffix["#s1"] == Segment((0.0, 0.05), (0.4, 0.05))
    assert by_suffix["#v2"] == Vertex((0.4, 0.05))

    wall = boundary_features(SimpleNamespace(type="segment", a=[2, 0], b=[2, 0.5]))
    assert wall == [
        ("", Segment((2.0, 0.0), (2.0, 0.5))),
        ("#v0", Vertex((2.0, 0.0))),
        ("#v1", Vertex((2.0, 0.5))),
    ]

    bump = dict(
        boundary_features(
            SimpleNamespace(type="arc", center=[1, 0], radius=0.1, start_deg=0, end_deg=180)
        )
    )
    assert bump[""] == Arc((1.0, 0.0), 0.1, 0.0, math.pi)
    assert np.allclose(bump["#v0"].p, [1.1, 0.0])
    assert np.allclose(bump["#v1"].p, [0.9, 0.0])

    # counter-clockwise from start to end: 180 -> 0 is the lower half
    lower = SimpleNamespace(type="arc", center=[1, 0], radius=0.1, start_deg=180, end_deg=0)
    lower_arc = dict(boundary_features(lower))[""]
    assert lower_arc.contains_angle(-math.pi / 2)
    assert not lower_arc.contains_angle(math.pi / 2)

    ring = SimpleNamespace(type="arc", center=[0, 0], radius=1.0, start_deg=0, end_deg=360)
    assert [suffix for suffix, _ in boundary_features(ring)] == [""]


@given(st.floats(-360.0, 360.0), st.floats(1.0, 360.0))
def test_arc_bounding_box_encloses_the_arc_tightly(start_deg, span_deg):
    arc = Arc((0.5, -1.0), 2.0, math.radians(start_deg), math.radians(start_deg + span_deg))
    angles = np.linspace(arc.start, arc.end, 4001)
    pts = np.array(arc.center) + 2.0 * np.column_stack([np.cos(angles), np.sin(angles)])
    xmin, ymin, xmax, ymax = bounding_box(arc)
    spacing = 2.0 * (angles[1] - angles[0])
    assert xmin <= pts[:, 0].min() + 1e-12 and pts[:, 0].max() <= xmax + 1e-12
    assert ymin <= pts[:, 1].min() + 1e-12 and pts[:, 1].max() <= ymax + 1e-12
    assert xmin >= pts[:, 0].min() - spacing and xmax <= pts[:, 0].max() + spacing
    assert ymin >= pts[:, 1].min() - spacing and ymax <= pts[:, 1].max() + spacing


def test_bounding_boxes_of_segment_and_vertex():
    assert bounding_box(Segment((1.0, -1.0), (-2.0, 3.0))) == (-2.0, -1.0, 1.0, 3.0)
    assert bounding_box(Vertex((0.5, 0.25))) == (0.5, 0.25, 0.5, 0.25)


@given(
    st.lists(st.tuples(unit_fraction, st.floats(-1.5, 1.5), speed, speed, speed), min_size=1),
    coord,
    coord,
    st.floats(0.01, 0.5),
)
def test_segment_contacts_over_many_states_equal_the_scalar_kinematics_bit_for_bit(rows, bx, by, r):
    segment = Segment((-0.7, 0.3), (bx, by))
    a, e = np.array(segment.a), np.array(segment.b) - np.array(segment.a)
    assume(np.linalg.norm(e) >= 0.5)
    left = np.array([-e[1], e[0]]) / np.linalg.norm(e)
    # the last row sits on the wall itself: the left normal
    c = np.array([a + s * e + h * left for s, h, *_ in rows] + [a + 0.5 * e])
    cdot = np.array([(vx, vy) for *_, vx, vy, _ in rows] + [(0.3, -0.2)])
    omega = np.array([w for *_, w in rows] + [1.5])

    many = disk_segment_contacts(segment, c, cdot, r, omega)

    assert many.inside.all()
    for k in range(len(c)):
        one = disk_feature_contact(segment, c[k], cdot[k], r, omega[k])
        assert many.n[k].tolist() == one.n.tolist()
        assert many.point[k].tolist() == one.point.tolist()
        assert (many.u_n[k], many.u_t[k]) == (one.u_n, one.u_t)


def test_segment_contacts_mark_states_beyond_the_segment_ends():
    segment = Segment((0.0, 0.0), (1.0, 0.0))
    c = np.array([[-0.1, 0.5], [0.5, 0.5], [1.2, -0.5]])
    many = disk_segment_contacts(segment, c, np.zeros((3, 2)), 0.1, np.zeros(3))
    assert many.inside.tolist() == [False, True, False]
