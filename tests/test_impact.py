"""Impact laws against paper 000's examples, Newton's cradle, closed forms and bad input."""

import numpy as np
import pytest
import scipy.sparse as sp

from solver.complementarity import least_distance
from solver.errors import InputError, SolverError
from solver.impact import resolve_impact
from tests.jam_cascade import JAM_G, jammed_pair_cascade

EX1_G = np.array([[-1.0, 0, 0], [0, 1, 1], [1, -1, 1]])
FOUR_BALLS_G = np.array([[-1.0, 0, 0], [1, -1, 0], [0, 1, -1], [0, 0, 1]])
THREE_BALLS_G = np.array([[-1.0, 0], [1, -1], [0, 1]])


def chain_G(N: int) -> np.ndarray:
    """Gaps x_{i+1} - x_i of N touching beads, one column each."""
    G = np.zeros((N, N - 1))
    for i in range(N - 1):
        G[i, i], G[i + 1, i] = -1.0, 1.0
    return G


def test_staged_impact_reproduces_paper_000_example_1():
    V = 2.5
    r = resolve_impact(np.eye(3), EX1_G, np.array([V, 0, 0]), 1.0)
    np.testing.assert_allclose(r.v_plus, V * np.array([-1 / 3, 2 / 3, 2 / 3]), atol=1e-12)
    np.testing.assert_allclose(r.impulse, 2 * V * np.array([2 / 3, 1 / 3, 0]), atol=1e-12)
    assert len(r.stages) == 1 and r.admissible


def test_poisson_impact_of_paper_000_example_2_is_flagged_inadmissible():
    r = resolve_impact(np.eye(4), FOUR_BALLS_G, np.array([1, 0, 0, 1 / 3]), 1.0, "poisson")
    np.testing.assert_allclose(r.v_plus, [-1 / 3, 2 / 3, 2 / 3, 1 / 3], atol=1e-12)
    np.testing.assert_allclose(FOUR_BALLS_G.T @ r.v_plus, [1, 0, -1 / 3], atol=1e-12)
    assert not r.admissible


def test_staged_impact_reproduces_paper_000_example_3_stage_by_stage():
    r = resolve_impact(np.eye(4), FOUR_BALLS_G, np.array([1, 0, 0, 1 / 3]), 1.0, "staged")
    np.testing.assert_allclose(r.v_plus, [-1 / 3, 4 / 9, 4 / 9, 7 / 9], atol=1e-12)
    np.testing.assert_allclose(r.impulse, [4 / 3, 8 / 9, 4 / 9], atol=1e-12)
    assert len(r.stages) == 2 and r.admissible
    # The paper's tables of y_k, w_k and lambda^(k).
    np.testing.assert_allclose(r.stages[1].y, [-1 / 3, 2 / 3, 2 / 3, 1 / 3], atol=1e-12)
    np.testing.assert_allclose(r.stages[0].w, [1 / 3] * 4, atol=1e-12)
    np.testing.assert_allclose(r.stages[1].w, [-1 / 3, 5 / 9, 5 / 9, 5 / 9], atol=1e-12)
    np.testing.assert_allclose(r.stages[0].lam, [2 / 3, 1 / 3, 0], atol=1e-12)
    np.testing.assert_allclose(r.stages[1].lam, [0, 1 / 9, 2 / 9], atol=1e-12)
    assert abs(r.energy_change) < 1e-12


def test_staged_impact_of_paper_000_example_4_corrects_the_printed_impulse():
    # The paper prints [4/3, 1/3]; its own formula (29) gives 2 * [2/3, 1/3].
    r = resolve_impact(np.eye(3), THREE_BALLS_G, np.array([1.0, 0, 0]), 1.0, "staged")
    np.testing.assert_allclose(r.v_plus, [-1 / 3, 2 / 3, 2 / 3], atol=1e-12)
    np.testing.assert_allclose(r.impulse, [4 / 3, 2 / 3], atol=1e-12)


def test_sequential_impact_of_paper_000_example_4_is_newtons_cradle():
    r = resolve_impact(np.eye(3), THREE_BALLS_G, np.array([1.0, 0, 0]), 1.0, "sequential")
    np.testing.assert_allclose(r.v_plus, [0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(r.impulse, [1, 1], atol=1e-12)
    assert len(r.stages) == 2


@pytest.mark.parametrize("N", [2, 5, 12])
def test_sequential_cradle_passes_one_struck_bead_to_the_far_end(N):
    v = np.zeros(N)
    v[0] = 1.0
    r = resolve_impact(np.eye(N), chain_G(N), v, 1.0, "sequential")
    expected = np.zeros(N)
    expected[-1] = 1.0
    np.testing.assert_allclose(r.v_plus, expected, atol=1e-12)


def test_sequential_cradle_passes_two_struck_beads_to_the_far_end():
    r = resolve_impact(np.eye(5), chain_G(5), np.array([1.0, 1, 0, 0, 0]), 1.0, "sequential")
    np.testing.assert_allclose(r.v_plus, [0, 0, 0, 1, 1], atol=1e-12)


def test_sequential_collision_of_unequal_beads_follows_newtons_law():
    m1, m2, e = 2.0, 3.0, 0.6
    r = resolve_impact(
        np.diag([m1, m2]), np.array([[-1.0], [1.0]]), np.array([1.0, 0.0]), e, "sequential"
    )
    # Two-body formulas: v1 = (m1 - e m2)/(m1 + m2), v2 = (1 + e) m1/(m1 + m2).
    np.testing.assert_allclose(
        r.v_plus, [(m1 - e * m2) / (m1 + m2), (1 + e) * m1 / (m1 + m2)], atol=1e-14
    )
    np.testing.assert_allclose(r.impulse, [(1 + e) * m1 * m2 / (m1 + m2)], atol=1e-14)


def test_sequential_three_bead_cradle_with_restitution_half_ends_after_three_collisions():
    # By hand: (1,0,0) -> (1/4,3/4,0) -> (1/4,3/16,9/16) -> (13/64,15/64,9/16).
    r = resolve_impact(np.eye(3), THREE_BALLS_G, np.array([1.0, 0, 0]), 0.5, "sequential")
    np.testing.assert_allclose(r.v_plus, [13 / 64, 15 / 64, 9 / 16], atol=1e-14)
    assert len(r.stages) == 3


def test_sequential_ties_go_to_the_lowest_constraint_index():
    # Both contacts approach at 1 m/s: contact 0 first, then 1, then 0 again.
    r = resolve_impact(np.eye(3), THREE_BALLS_G, np.array([1.0, 0, -1]), 1.0, "sequential")
    np.testing.assert_allclose(r.v_plus, [-1, 0, 1], atol=1e-14)
    assert [int(np.flatnonzero(s.lam)[0]) for s in r.stages] == [0, 1, 0]


@pytest.mark.parametrize("e", [0.0, 0.05])
def test_sequential_bead_pair_against_a_wall_sums_its_infinite_collision_sequence(e):
    # Wall gap x1, bead gap x2 - x1; bead 2 hits resting bead 1 at the wall. Below the
    # inelastic-collapse threshold both come to rest after infinitely many collisions.
    G = np.array([[1.0, -1.0], [0.0, 1.0]])
    r = resolve_impact(np.eye(2), G, np.array([0.0, -1.0]), e, "sequential")
    np.testing.assert_allclose(r.v_plus, [0, 0], atol=1e-12)
    np.testing.assert_allclose(r.impulse, [1, 1], atol=1e-12)
    assert len(r.stages) < 40


def test_sequential_touching_cradle_below_collapse_threshold_reaches_common_velocity():
    # McNamara & Young: three beads collapse for e < 7 - 4 sqrt(3) ~ 0.072.
    r = resolve_impact(np.eye(3), THREE_BALLS_G, np.array([1.0, 0, 0]), 0.05, "sequential")
    np.testing.assert_allclose(r.v_plus, [1 / 3] * 3, atol=1e-12)
    np.testing.assert_allclose(r.impulse, [2 / 3, 1 / 3], atol=1e-12)


def test_newton_law_takes_a_separating_contact_in_a_second_round_and_ends_admissible():
    # Paper 000 ex. 2 under Moreau's law. By hand: round 1 acts on contacts 0, 1 (contact 2
    # separates at 1/3 m/s): 2L0 - L1 = 2, 2L1 = L0 -> L = (4/3, 2/3), v = (-1/3, 2/3, 2/3, 1/3),
    # now contact 2 approaches at 1/3. Round 2 on contacts 1, 2 with u1+ >= 0, u2+ >= 1/3:
    # 2L1 = L2, 3L1 = 2/3 -> L = (2/9, 4/9), v = (-1/3, 4/9, 4/9, 7/9), all separating.
    r = resolve_impact(np.eye(4), FOUR_BALLS_G, np.array([1, 0, 0, 1 / 3]), 1.0, "newton")
    np.testing.assert_allclose(r.v_plus, [-1 / 3, 4 / 9, 4 / 9, 7 / 9], atol=1e-12)
    np.testing.assert_allclose(r.impulse, [4 / 3, 2 / 3 + 2 / 9, 4 / 9], atol=1e-12)
    assert len(r.stages) == 2
    np.testing.assert_allclose(r.stages[0].w, [-1 / 3, 2 / 3, 2 / 3, 1 / 3], atol=1e-12)
    assert r.admissible
    assert r.energy_change == pytest.approx(0.0, abs=1e-12)


def test_newton_law_enforces_minus_e_times_the_approach_speed():
    e = 0.4
    r = resolve_impact(np.eye(3), EX1_G, np.array([1.0, 0, 0]), e, "newton")
    u_minus, u_plus = EX1_G.T @ np.array([1.0, 0, 0]), EX1_G.T @ r.v_plus
    assert np.all(u_plus + e * u_minus >= -1e-12)
    np.testing.assert_allclose(r.impulse * (u_plus + e * u_minus), 0, atol=1e-12)


@pytest.mark.parametrize("N", [20, 200])
def test_staged_chain_impact_through_the_banded_route_matches_the_closed_form(N):
    v = np.zeros(N)
    v[0] = 1.0
    G = sp.csc_array(chain_G(N))
    r = resolve_impact(np.ones(N), G, v, 1.0)
    # One stage: plastic common velocity 1/N, then y1 = 2 w - y0.
    expected = np.full(N, 2 / N)
    expected[0] -= 1.0
    np.testing.assert_allclose(r.v_plus, expected, atol=1e-12)
    np.testing.assert_allclose(r.impulse, 2 * (N - np.arange(1, N)) / N, atol=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_banded_route_agrees_with_the_dense_least_distance_route(seed):
    rng = np.random.default_rng(seed)
    N = 30
    masses = rng.uniform(0.5, 3.0, N)
    v = rng.normal(size=N)
    e = float(rng.uniform())
    r = resolve_impact(masses, sp.csc_array(chain_G(N)), v, e)
    np.testing.assert_allclose(r.v_plus, _dense_staged(masses, chain_G(N), v, e), atol=1e-11)


def _dense_staged(masses, G, y, e):
    """Independent staged loop through the dense least-distance solver (paper 000 (9)-(14))."""
    M = np.diag(masses)
    for _ in range(1000):
        if np.all(G.T @ y >= -1e-12):
            break
        w, _ = least_distance(M, G, y)
        y = w + e * (w - y)
    return y


@pytest.mark.parametrize("wall", ["none", "listed first", "listed last"])
@pytest.mark.parametrize("struck", ["middle", "far end"])
def test_sparse_chain_struck_away_from_the_first_column_matches_the_dense_route(wall, struck):
    # 20 beads (the banded route starts at 16 constraints), some speeds round-off sized; a
    # wall at bead 0 listed after the gaps is banded only after reordering the constraints.
    rng = np.random.default_rng(7)
    N = 20
    masses = rng.uniform(0.5, 3.0, N)
    G = chain_G(N)
    wall_column = np.zeros((N, 1))
    wall_column[0] = 1.0
    if wall == "listed first":
        G = np.hstack([wall_column, G])
    elif wall == "listed last":
        G = np.hstack([G, wall_column])
    v = np.full(N, 0.1) + 1e-17 * rng.normal(size=N)
    v[N // 2 if struck == "middle" else N - 1] = -1.0
    r = resolve_impact(masses, sp.csc_array(G), v, 0.8)
    np.testing.assert_allclose(r.v_plus, _dense_staged(masses, G, v, 0.8), atol=1e-12)
    np.testing.assert_allclose(masses * (r.v_plus - v), G @ r.impulse, atol=1e-12)
    assert r.admissible


@pytest.mark.parametrize("mass", [1.5, 3.0, 49.0, 0.1, 7.3, 1e-3])
def test_elastic_bounce_off_a_wall_reports_exactly_twice_the_momentum_every_time(mass):
    # 1/(1/m) != m for some of these masses: the impulse must come out as 2 m |v| exactly.
    v = np.array([-1.5])
    for _ in range(300):
        r = resolve_impact(np.array([mass]), np.array([[1.0]]), v, 1.0)
        assert r.v_plus[0] == -v[0]
        assert r.impulse[0] == 2.0 * mass * 1.5
        assert r.energy_change == 0.0
        v = -r.v_plus  # the engine mirrors the bead back at the wall


def test_elastic_wheel_drop_reports_exactly_twice_the_normal_momentum():
    v = np.array([0.3, -3.0, 20.0])
    r = resolve_impact(WHEEL_M, GROUND_G, v, 1.0)
    np.testing.assert_array_equal(r.v_plus, [0.3, 3.0, 20.0])
    assert r.impulse[0] == 2.0 * MASS * 3.0
    assert r.energy_change == 0.0


def test_elastic_staged_impact_with_large_impulses_conserves_energy_to_round_off():
    # A hypothesis find: cond(M) = 7.5e5, 47 stages, the first with every constraint
    # pushing (impulses ~6e6 N s against speeds ~1 m/s). Energy is conserved exactly
    # for e = 1; without refining the plastic phase it was off by 3e-9 relative.
    M = np.array(
        [
            [89639.47939277647, -239527.8316455611, 42541.16542721981],
            [-239527.8316455611, 640063.1429473142, -113688.41899544431],
            [42541.16542721981, -113688.41899544431, 20210.969770050597],
        ]
    )
    G = np.array(
        [
            [1.3486888124885688, -1.045444888103173, -0.06393857141550513],
            [0.47501654875724897, -0.4036775203182495, -0.12732162627823698],
            [0.48416012686274634, -0.7981693262149414, 3.0863574152022424],
        ]
    )
    v = np.array([0.30640243064261835, 0.7190294031700821, 0.44888512800674224])
    r = resolve_impact(M, G, v, 1.0)
    assert abs(r.energy_change) <= 1e-12 * 0.5 * v @ M @ v
    assert r.admissible


def test_staged_impact_of_a_bead_clamped_between_walls_ends_at_rest():
    # Rank-deficient G: the stages alternate between the walls, y_k = (-e)^k y_0.
    r = resolve_impact(np.eye(1), np.array([[1.0, -1.0]]), np.array([-1.0]), 0.5)
    np.testing.assert_allclose(r.v_plus, [0], atol=1e-15)
    np.testing.assert_allclose(r.impulse, [1, 0], atol=1e-15)


def test_staged_impact_of_a_clamped_bead_with_restitution_one_reports_no_limit():
    with pytest.raises(SolverError, match="does not converge"):
        resolve_impact(np.eye(1), np.array([[1.0, -1.0]]), np.array([-1.0]), 1.0)


def test_nothing_happens_when_no_constraint_approaches():
    r = resolve_impact(np.eye(3), EX1_G, np.array([0.0, 1.0, 0.0]), 1.0)
    np.testing.assert_array_equal(r.v_plus, [0, 1, 0])
    assert len(r.stages) == 0 and r.energy_change == 0.0


# -- friction: a wheel (m, J, r) dropping onto flat ground, closed forms -------------

MASS, INERTIA, RADIUS, MU = 10.0, 0.05, 0.1, 0.4
WHEEL_M = np.diag([MASS, MASS, INERTIA])
GROUND_G = np.array([[0.0], [1.0], [0.0]])
GROUND_H = np.array([[1.0], [0.0], [RADIUS]])
TANGENT_MASS = 1 / (1 / MASS + RADIUS**2 / INERTIA)


def _wheel_closed_form(v, e):
    """Routh's hypothesis in both phases for one contact without normal-tangent coupling."""
    normal = -MASS * v[1]
    slip = v[0] + RADIUS * v[2]
    p_plastic = -np.sign(slip) * min(MU * normal, TANGENT_MASS * abs(slip))
    slip += p_plastic / TANGENT_MASS
    p_restitution = -np.sign(slip) * min(MU * e * normal, TANGENT_MASS * abs(slip))
    p = p_plastic + p_restitution
    return (
        np.array([v[0] + p / MASS, -e * v[1], v[2] + RADIUS * p / INERTIA]),
        (1 + e) * normal,
        p,
    )


@pytest.mark.parametrize("v", [[1.0, -3, 0], [5.0, -1, 0], [0.2, -3, -50], [-2.0, -0.5, 10]])
@pytest.mark.parametrize("law", ["staged", "poisson", "sequential"])
def test_wheel_impact_with_friction_follows_routh_in_both_phases(v, law):
    e = 0.5
    r = resolve_impact(WHEEL_M, GROUND_G, np.array(v), e, law, H=GROUND_H, friction=MU)
    v_plus, normal, tangent = _wheel_closed_form(np.array(v), e)
    np.testing.assert_allclose(r.v_plus, v_plus, atol=1e-12)
    np.testing.assert_allclose(r.impulse, [normal], atol=1e-12)
    np.testing.assert_allclose(r.tangent_impulse, [tangent], atol=1e-12)


def test_wheel_in_a_concave_corner_balances_momentum_with_two_frictional_contacts():
    G = np.array([[1.0, 0], [0, 1], [0, 0]])  # wall x = r and floor y = r
    H = np.array([[0.0, 1], [1, 0], [-RADIUS, RADIUS]])
    v = np.array([-2.0, -3.0, 20.0])
    for law in ("staged", "poisson", "newton", "sequential"):
        r = resolve_impact(WHEEL_M, G, v, 0.3, law, H=H, friction=MU)
        np.testing.assert_allclose(
            WHEEL_M @ (r.v_plus - v), G @ r.impulse + H @ r.tangent_impulse, atol=1e-12
        )
        assert np.all(np.abs(r.tangent_impulse) <= MU * r.impulse + 1e-12)
        assert r.energy_change <= 1e-12


# -- bad input ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"M": np.array([[1.0, 0.5], [0.0, 1.0]])}, "`M` must be symmetric"),
        ({"M": np.diag([1.0, -1.0])}, "`M` must be positive definite"),
        ({"M": np.eye(3)}, "`G` must have shape"),
        ({"G": np.ones((3, 1))}, "`G` must have shape"),
        ({"v_minus": np.array([np.nan, 0.0])}, "`v_minus` must be finite"),
        ({"v_minus": np.zeros(3)}, "`v_minus` must have shape"),
        ({"restitution": 1.5}, "`restitution` must lie in"),
        ({"restitution": [0.5, 0.5]}, "`restitution` must be a scalar or have shape"),
        ({"friction": -0.1, "H": np.ones((2, 1))}, "`friction` must lie in"),
        ({"friction": 0.3}, "`H`"),
        ({"law": "elastic"}, "`law` must be one of"),
        ({"G": np.zeros((2, 1))}, "`G` column 0 is zero"),
    ],
)
def test_bad_input_is_refused_naming_the_argument(kwargs, message):
    args = {
        "M": np.eye(2),
        "G": np.array([[-1.0], [1.0]]),
        "v_minus": np.array([1.0, 0.0]),
        "restitution": 1.0,
    }
    args.update(kwargs)
    with pytest.raises(InputError, match=message):
        resolve_impact(**args)


@pytest.mark.parametrize(
    ("masses", "v_minus", "e"),
    [
        ((1.0, 1.0), (0.0, 1.0), 0.9),
        ((1.0, 3.0), (1.0, -2.0), 0.5),
        ((2.0, 1.0), (1.0, -2.0), 0.95),
    ],
)
def test_sequential_impulses_of_a_jam_are_the_sum_over_its_collisions(masses, v_minus, e):
    """Two beads jammed between walls: three contacts, two velocities (rank-deficient G).

    Many impulse splits give the same (zero) final velocity; the law's is the
    sum over its own collisions, computed here one collision at a time.
    """
    impulses, v = jammed_pair_cascade(masses, v_minus, e)
    result = resolve_impact(np.array(masses), JAM_G, np.array(v_minus), e, law="sequential")
    np.testing.assert_allclose(result.impulse, impulses, rtol=1e-9)
    np.testing.assert_allclose(result.v_plus, v, atol=1e-11)
