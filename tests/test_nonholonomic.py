"""Nonholonomic impulses without multipliers (paper 001, MECHANICS §5) and the axle cart.

Reference values: MECHANICS §7's closed form of paper 001's example (with the
paper's slip in ``ẏ_C`` corrected) and a closed form derived by hand below
for any ``phi, l, r, m, M`` and any impulse on the axle:

with ``e = (cos phi, sin phi)``, ``n = (−sin phi, cos phi)`` and the wheel
rates ``a, b`` independent, ``vC = r (a + b)/2 · n`` and
``omega = r (b − a)/(2 l)``. In ``p = (a + b)/2``, ``w = (b − a)/2`` the
kinetic energy is diagonal, ``T = ½ r² (M + 3m) p² + ½ r² (I/l² + m) w²``
with ``I = M l²/3 + 2 m l² + m r²/2``, and an impulse ``S`` at distance
``s`` from C along the axle has power ``(n·S)(r p + s r w / l)``. Hence

    Δ(n·vC) = (n·S)/(M + 3m),   Δomega = s (n·S)/(M l²/3 + 3 m l² + m r²/2),
    Δ(e·vC) = 0,   ΔomegaA = (Δ(n·vC) − l Δomega)/r,   ΔomegaB = (Δ(n·vC) + l Δomega)/r.
"""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from solver.errors import InputError
from solver.nonholonomic import (
    AxleCart,
    impulsive_response,
    independent_rows,
    maggi_basis,
    multiplier_response,
)

SQRT2 = np.sqrt(2.0)
CONDITION_BOUND = 50.0
"""Random constraint matrices worse conditioned than this are skipped: the
multiplier form loses about cond² · eps and the comparisons are to 1e-12."""


def paper_constraint_rows(phi: float, l: float, r: float) -> np.ndarray:
    """Paper 001's (a)', (b)', (c)' as rows over (xC, yC, phi, thetaA, thetaB)."""
    s, c = np.sin(phi), np.cos(phi)
    return np.array(
        [
            [1.0, 0.0, l * s, r * s, 0.0],
            [0.0, 1.0, -l * c, -r * c, 0.0],
            [1.0, 0.0, -l * s, 0.0, r * s],
        ]
    )


def hand_derived_jump(cart: AxleCart, phi: float, point: float, S: np.ndarray) -> np.ndarray:
    """The closed form of the module docstring: Δv for an impulse ``S`` at ``point``."""
    M, l, m, r = cart.axle_mass, cart.half_length, cart.wheel_mass, cart.wheel_radius
    n = np.array([-np.sin(phi), np.cos(phi)])
    forward = float(n @ S) / (M + 3.0 * m)
    turn = point * float(n @ S) / (M * l**2 / 3.0 + 3.0 * m * l**2 + m * r**2 / 2.0)
    return np.array([*(forward * n), turn, (forward - l * turn) / r, (forward + l * turn) / r])


def spec_example_velocity(S: float, omega: float, m: float, r: float) -> np.ndarray:
    """MECHANICS §7 '001 example' after the impulse (M = m, l = r, phi = pi/4)."""
    l = r
    return np.array(
        [
            SQRT2 / 8 * S / m - SQRT2 / 2 * l * omega,
            -SQRT2 / 8 * S / m + SQRT2 / 2 * l * omega,
            omega,
            -S / (4 * m * r),
            -S / (4 * m * r) + 2 * omega,
        ]
    )


@pytest.mark.parametrize(("S", "omega", "m", "r"), [(1.0, 0.0, 1.0, 1.0), (3.0, 2.0, 0.5, 0.2)])
def test_axle_cart_impulse_reproduces_paper_001_example(S, omega, m, r):
    cart = AxleCart(axle_mass=m, half_length=r, wheel_mass=m, wheel_radius=r)
    phi = np.pi / 4
    q = np.array([0.3, -0.2, phi, 1.0, 2.0])
    # Before: axle turning at omega, wheel A not turning: wheel A's centre at rest,
    # so vC = l omega n and wheel B rolls at 2 l omega / r.
    v_minus = np.array([-SQRT2 / 2 * r * omega, SQRT2 / 2 * r * omega, omega, 0.0, 2.0 * omega])
    assert np.allclose(cart.constraint_matrix(q) @ v_minus, 0.0, atol=1e-15)
    # S perpendicular to the axle at C, towards −n (paper: Q̂ = (S sin phi, −S cos phi, 0, 0, 0)).
    impulse = cart.generalized_impulse(q, 0.0, S * np.array([np.sin(phi), -np.cos(phi)]))
    assert np.allclose(impulse, [S / SQRT2, -S / SQRT2, 0.0, 0.0, 0.0], atol=1e-15)
    v_plus = impulsive_response(cart.mass_matrix(q), cart.constraint_matrix(q), impulse, v_minus)
    np.testing.assert_allclose(v_plus, spec_example_velocity(S, omega, m, r), rtol=0, atol=1e-12)


def test_paper_001_printed_pre_impact_velocity_violates_its_own_constraint_b():
    l = r = omega = 1.0
    phi = np.pi / 4
    printed = np.array([-SQRT2 / 2 * l * omega, -SQRT2 / 2 * l * omega, omega, 0.0, 2 * omega])
    residual = paper_constraint_rows(phi, l, r) @ printed
    assert residual[1] == pytest.approx(-SQRT2 * l * omega)
    corrected = printed * np.array([1, -1, 1, 1, 1])
    np.testing.assert_allclose(paper_constraint_rows(phi, l, r) @ corrected, 0.0, atol=1e-15)


@pytest.mark.parametrize(
    ("axle_mass", "half_length", "wheel_mass", "wheel_radius", "phi", "point", "S"),
    [
        (2.0, 0.5, 0.7, 0.15, 0.3, 0.0, (0.4, -1.2)),
        (0.1, 1.3, 5.0, 0.6, 2.9, -1.0, (2.0, 0.5)),
        (10.0, 0.2, 0.3, 0.05, -1.7, 0.13, (-0.3, 0.0)),
        (1.0, 1.0, 1.0, 1.0, 0.0, 0.5, (0.0, 1.0)),
    ],
)
def test_axle_cart_impulse_matches_hand_derived_closed_form_and_multipliers(
    axle_mass, half_length, wheel_mass, wheel_radius, phi, point, S
):
    cart = AxleCart(axle_mass, half_length, wheel_mass, wheel_radius)
    q = np.array([1.0, 2.0, phi, 0.4, -0.3])
    A = cart.constraint_matrix(q)
    v_minus = maggi_basis(A, [3, 4]) @ np.array([1.5, -0.25])
    impulse = cart.generalized_impulse(q, point, np.array(S))
    expected = v_minus + hand_derived_jump(cart, phi, point, np.array(S))
    maggi = impulsive_response(cart.mass_matrix(q), A, impulse, v_minus)
    with_multipliers, _ = multiplier_response(cart.mass_matrix(q), A, impulse, v_minus)
    np.testing.assert_allclose(maggi, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(maggi, with_multipliers, rtol=0, atol=1e-12)


@pytest.mark.parametrize("phi", [0.0, np.pi, 0.3, np.pi / 4, -2.0])
def test_axle_cart_constraints_have_rank_three_for_every_heading(phi):
    cart = AxleCart(1.0, 0.4, 2.0, 0.1)
    A = cart.constraint_matrix([0.0, 0.0, phi, 0.0, 0.0])
    assert np.linalg.matrix_rank(A) == 3


def test_paper_constraints_lose_rank_along_x_axis_but_span_the_cart_constraints_elsewhere():
    cart = AxleCart(1.0, 0.4, 2.0, 0.1)
    assert np.linalg.matrix_rank(paper_constraint_rows(0.0, 0.4, 0.1)) == 2
    for phi in (0.3, np.pi / 4, 2.0, -1.0):
        ours = cart.constraint_matrix([0.0, 0.0, phi, 0.0, 0.0])
        paper = paper_constraint_rows(phi, 0.4, 0.1)
        assert np.linalg.matrix_rank(np.vstack([ours, paper])) == 3


def test_axle_cart_kinetic_energy_equals_sum_over_axle_and_wheels():
    M, l, m, r = 1.7, 0.6, 0.9, 0.25
    cart = AxleCart(M, l, m, r)
    phi = 0.8
    q = np.array([0.0, 0.0, phi, 0.0, 0.0])
    v = np.array([0.3, -1.1, 2.0, 0.7, -4.0])
    n = np.array([-np.sin(phi), np.cos(phi)])
    centre, omega = v[:2], v[2]
    wheel_a, wheel_b = centre - l * omega * n, centre + l * omega * n
    expected = (
        0.5 * M * centre @ centre
        + 0.5 * (M * l**2 / 3) * omega**2
        + 0.5 * m * (wheel_a @ wheel_a + wheel_b @ wheel_b)
        + 0.5 * (m * r**2 / 2) * (v[3] ** 2 + v[4] ** 2)
        + 2 * 0.5 * (m * r**2 / 4) * omega**2
    )
    assert cart.kinetic_energy(q, v) == pytest.approx(expected, rel=1e-14)


def _axle_point(q, along):
    """World position (m) of the axle point ``along`` m from the centre C towards wheel B."""
    return q[:2] + along * np.array([np.cos(q[2]), np.sin(q[2])])


def test_axle_cart_wheels_roll_without_slip_along_the_rolling_direction():
    cart = AxleCart(1.0, 0.4, 2.0, 0.1)
    phi = 0.7
    q = np.array([0.2, 0.1, phi, 0.0, 0.0])
    v = maggi_basis(cart.constraint_matrix(q), [3, 4]) @ np.array([2.0, -3.0])
    h = 1e-6

    def wheel_positions(q):  # centres C − l e (wheel A) and C + l e (wheel B)
        return np.array([_axle_point(q, -cart.half_length), _axle_point(q, cart.half_length)])

    wheel_velocity = (wheel_positions(q + h * v) - wheel_positions(q - h * v)) / (2 * h)
    n = np.array([-np.sin(phi), np.cos(phi)])
    np.testing.assert_allclose(wheel_velocity[0], cart.wheel_radius * v[3] * n, atol=1e-9)
    np.testing.assert_allclose(wheel_velocity[1], cart.wheel_radius * v[4] * n, atol=1e-9)
    assert wheel_positions(q)[1] @ np.array([np.cos(phi), np.sin(phi)]) > 0.0


def test_generalized_impulse_equals_power_of_the_impulse_on_the_axle_point():
    cart = AxleCart(1.0, 0.4, 2.0, 0.1)
    q = np.array([0.2, 0.1, 1.1, 0.0, 0.0])
    v = np.array([0.3, -0.5, 1.7, 2.0, 3.0])
    S = np.array([0.8, -0.3])
    h = 1e-6
    point_velocity = (_axle_point(q + h * v, -0.25) - _axle_point(q - h * v, -0.25)) / (2 * h)
    assert cart.generalized_impulse(q, -0.25, S) @ v == pytest.approx(S @ point_velocity, rel=1e-9)


@st.composite
def constrained_systems(draw, with_a0=False):
    """Random SPD ``M``, constraints ``A`` (sometimes with a singular natural block
    ``A₂`` = last s columns, sometimes with redundant rows), ``Q̂``, ``v⁻`` and ``a0``
    with ``A v⁻ + a0 = 0`` (``a0 = 0`` unless ``with_a0``)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(1, 6))
    s = draw(st.integers(0, n))
    layout = draw(st.sampled_from(["generic", "singular_natural_block", "redundant_rows"]))
    B = rng.uniform(-1.0, 1.0, (n, n))
    M = B @ B.T + 0.5 * np.eye(n)
    A = rng.uniform(-1.0, 1.0, (s, n))
    if layout == "singular_natural_block" and s == 1 and n > 1:
        A[:, n - 1] = 0.0
    if layout == "singular_natural_block" and 2 <= s < n:
        A[:, n - 1] = A[:, n - 2]
    if layout == "redundant_rows" and s >= 1:
        A = np.vstack([A, rng.uniform(-1.0, 1.0, (2, s)) @ A])
    assume(s == 0 or np.linalg.cond(A[independent_rows(A)]) < CONDITION_BOUND)
    impulse = rng.uniform(-2.0, 2.0, n)
    v_minus = rng.uniform(-2.0, 2.0, n)
    if with_a0:
        a0 = -A @ v_minus
    else:
        a0 = np.zeros(A.shape[0])
        if s:
            v_minus -= np.linalg.pinv(A) @ (A @ v_minus)
    return M, A, impulse, v_minus, a0


@given(constrained_systems())
def test_maggi_form_equals_multiplier_form(system):
    M, A, impulse, v_minus, _ = system
    maggi = impulsive_response(M, A, impulse, v_minus)
    with_multipliers, _ = multiplier_response(M, A, impulse, v_minus)
    np.testing.assert_allclose(maggi, with_multipliers, rtol=0, atol=1e-12)


@given(constrained_systems(), st.data())
def test_impulsive_response_does_not_depend_on_the_independent_velocities_chosen(system, data):
    M, A, impulse, v_minus, _ = system
    rank = independent_rows(A).size
    n = M.shape[0]
    independent = data.draw(st.permutations(range(n)))[: n - rank]
    dependent = np.setdiff1d(np.arange(n), independent)
    reduced = A[independent_rows(A)]
    # The chosen basis C has entries −A₂⁻¹A₁; skip choices that make them large.
    assume(rank == 0 or np.linalg.cond(reduced[:, dependent]) < CONDITION_BOUND)
    assume(rank == 0 or np.abs(np.linalg.solve(reduced[:, dependent], reduced)).max() < 10.0)
    chosen = impulsive_response(M, A, impulse, v_minus, np.array(independent, dtype=int))
    pivoted = impulsive_response(M, A, impulse, v_minus)
    np.testing.assert_allclose(chosen, pivoted, rtol=0, atol=1e-12)


@given(constrained_systems(with_a0=True))
def test_impulse_keeps_the_velocity_constraints(system):
    M, A, impulse, v_minus, a0 = system
    v_plus = impulsive_response(M, A, impulse, v_minus)
    np.testing.assert_allclose(A @ v_plus, A @ v_minus, rtol=0, atol=1e-12)
    np.testing.assert_allclose(A @ v_plus + a0, 0.0, rtol=0, atol=1e-12)


@given(constrained_systems())
def test_energy_change_equals_work_of_impulse_at_mean_velocity_for_catastatic_constraints(system):
    M, A, impulse, v_minus, _ = system
    v_plus = impulsive_response(M, A, impulse, v_minus)
    change = 0.5 * v_plus @ M @ v_plus - 0.5 * v_minus @ M @ v_minus
    assert change == pytest.approx(impulse @ (v_plus + v_minus) / 2, abs=1e-11)


@given(constrained_systems(with_a0=True))
def test_energy_change_with_moving_constraints_includes_constraint_impulse_work(system):
    # M Δv = Q̂ + Aᵀσ and A v± = −a0 give ΔT = Q̂·(v⁺ + v⁻)/2 − σ·a0.
    M, A, impulse, v_minus, a0 = system
    v_plus, sigma = multiplier_response(M, A, impulse, v_minus)
    change = 0.5 * v_plus @ M @ v_plus - 0.5 * v_minus @ M @ v_minus
    assert change == pytest.approx(impulse @ (v_plus + v_minus) / 2 - sigma @ a0, abs=1e-11)


def test_redundant_constraint_rows_are_dropped():
    A = np.array([[1.0, 2.0, 0.0, 1.0], [0.0, 1.0, -1.0, 0.5], [2.0, 5.0, -1.0, 2.5]])
    M = np.diag([1.0, 2.0, 3.0, 4.0])
    impulse = np.array([1.0, -1.0, 0.5, 2.0])
    assert independent_rows(A).size == 2
    full = impulsive_response(M, A, impulse, np.zeros(4))
    reduced = impulsive_response(M, A[:2], impulse, np.zeros(4))
    np.testing.assert_allclose(full, reduced, rtol=0, atol=1e-14)
    _, sigma = multiplier_response(M, A, impulse, np.zeros(4))
    assert sigma[2] == 0.0


def test_unconstrained_impulse_is_inverse_mass_times_impulse():
    M = np.array([[2.0, 0.5], [0.5, 1.0]])
    impulse = np.array([1.0, 3.0])
    v_plus = impulsive_response(M, np.zeros((0, 2)), impulse, np.array([0.5, 0.0]))
    np.testing.assert_allclose(v_plus - [0.5, 0.0], np.linalg.solve(M, impulse), atol=1e-15)


@pytest.mark.parametrize(
    ("M", "A", "impulse", "v_minus", "independent", "names"),
    [
        ([[1.0, 0.2], [0.0, 1.0]], [[1.0, 1.0]], [1.0, 0.0], [0.0, 0.0], None, "symmetric"),
        ([[1.0, 0.0], [0.0, -1.0]], [[1.0, 1.0]], [1.0, 0.0], [0.0, 0.0], None, "positive"),
        (np.eye(2), [[1.0, 1.0, 0.0]], [1.0, 0.0], [0.0, 0.0], None, "A: must have n = 2"),
        (np.eye(2), [[1.0, 1.0]], [1.0, np.nan], [0.0, 0.0], None, "impulse: all components"),
        (np.eye(2), [[1.0, 1.0]], [1.0, 0.0], [0.0], None, "v_minus: must have shape"),
        (np.eye(3), [[1.0, 0.0, 0.0]], [1.0, 0.0, 0.0], [0.0] * 3, [0, 1], "singular"),
        (np.eye(3), [[1.0, 0.0, 0.0]], [1.0, 0.0, 0.0], [0.0] * 3, [1], "must name 2"),
    ],
)
def test_impulsive_response_refuses_bad_input_naming_the_argument(
    M, A, impulse, v_minus, independent, names
):
    with pytest.raises(InputError, match=names):
        impulsive_response(M, A, impulse, v_minus, independent)


def test_axle_cart_refuses_bad_parameters_and_off_axle_points():
    with pytest.raises(InputError, match="wheel_radius"):
        AxleCart(1.0, 1.0, 1.0, -0.1)
    cart = AxleCart(1.0, 0.5, 1.0, 0.1)
    with pytest.raises(InputError, match="point"):
        cart.generalized_impulse(np.zeros(5), 0.6, [1.0, 0.0])
    with pytest.raises(InputError, match="q: must have shape"):
        cart.mass_matrix(np.zeros(4))
