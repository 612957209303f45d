"""Regression tests for the impact-law failures of the reliability issue (bounded effort, energy).

Each case below failed before: a newton law that gave up after 200 rounds on a
well-conditioned problem, a newton law with coupled tangents that gained
energy, a sequential law with friction that followed collisions without end,
and impact calls with no bound on their wall time.
"""

import numpy as np
import pytest

from solver.errors import InputError, SolverError
from solver.impact import resolve_impact

# Full rank, frictionless, cond(M) = 3.3, cond(W) = 36, e = 0.06: rounds take turns on
# the two nearly parallel constraints and shrink by about 0.87 per pair of rounds.
PING_PONG_M = np.array(
    [
        [7.6645790369458640e00, 2.0494368541334101e-01, -7.5751572221427633e-03],
        [2.0494368541334101e-01, 7.9008851158734430e00, 3.5694392731098259e00],
        [-7.5751572221427633e-03, 3.5694392731098259e00, 5.9286185189702163e00],
    ]
)
PING_PONG_G = np.array(
    [
        [0.28685756545382673, -0.5254096407181754],
        [0.868069425402096, -0.8720719677930326],
        [0.6434323387400966, -0.9404604692433001],
    ]
)
PING_PONG_V = np.array([0.5339547617060789, -1.1007479445493213, 1.4891882030211117])


def _rounds_followed_one_by_one(M, G, v, e, rounds=100_000):
    """Independent reference: the newton rounds of this problem followed until none approaches.

    Here one constraint approaches at a time, so a round is Newton's law on it
    alone: ``Λ = −(1 + e) u_i / W_ii``.
    """
    Minv_G = np.linalg.solve(M, G)
    W = G.T @ Minv_G
    impulse = np.zeros(G.shape[1])
    for _ in range(rounds):
        u = G.T @ v
        approaching = np.flatnonzero(u < -1e-14)
        if approaching.size == 0:
            return v, impulse
        assert approaching.size == 1
        i = approaching[0]
        lam = -(1.0 + e) * u[i] / W[i, i]
        impulse[i] += lam
        v = v + Minv_G[:, i] * lam
    raise AssertionError("the reference did not settle")


def test_newton_rounds_taking_turns_on_two_constraints_reach_the_limit_of_the_rounds():
    v_ref, impulse_ref = _rounds_followed_one_by_one(PING_PONG_M, PING_PONG_G, PING_PONG_V, 0.06)
    r = resolve_impact(PING_PONG_M, PING_PONG_G, PING_PONG_V, 0.06, "newton")
    np.testing.assert_allclose(r.v_plus, v_ref, rtol=0, atol=1e-9)
    np.testing.assert_allclose(r.impulse, impulse_ref, rtol=1e-9)
    assert r.admissible and r.energy_change < 0.0
    assert len(r.stages) < 50 and "in closed form" in r.note


# Two dependent contact columns, tangents coupled to the normals through M, e = 1:
# friction on u_t+ alone gained energy here.
COUPLED_M = np.array(
    [
        [1.1857717570287607, 0.03485227669392078, -0.19174187754921668, -0.2588921171539459],
        [0.03485227669392078, 1.352546465825016, 0.25036560411192826, 0.11353420505410249],
        [-0.19174187754921668, 0.25036560411192826, 1.4385920115042343, 0.36961767517141336],
        [-0.2588921171539459, 0.11353420505410249, 0.36961767517141336, 1.7068895762354386],
    ]
)
COUPLED_G = np.array(
    [
        [1.5185277605099936, 0.8398671911918387],
        [-0.16898220482408297, -0.09346066197653324],
        [0.6887265848002576, 0.3809208348493233],
        [-1.1764217007225828, -0.6506552037686631],
    ]
)
COUPLED_H = np.array(
    [
        [0.21151796509181556, 0.9162895637889432],
        [1.17479117744959, 0.9106254285568856],
        [-0.5181286420414067, -0.8702242623536995],
        [1.3945428595171139, 0.5294568053597477],
    ]
)
COUPLED_V = np.array(
    [-2.1886011260623075, -0.35002501834496363, 1.2372486867315537, 1.70308282050856]
)
COUPLED_MU = np.array([0.82447230874157, 0.5361758334462564])


def test_newton_law_with_coupled_tangents_does_not_gain_energy_and_says_why():
    M, G, H, v = COUPLED_M, COUPLED_G, COUPLED_H, COUPLED_V
    r = resolve_impact(M, G, v, 1.0, "newton", H=H, friction=COUPLED_MU)
    kinetic = 0.5 * v @ M @ v
    assert r.energy_change <= 1e-12 * kinetic
    np.testing.assert_allclose(
        M @ (r.v_plus - v), G @ r.impulse + H @ r.tangent_impulse, atol=1e-12 * kinetic
    )
    assert np.all(np.abs(r.tangent_impulse) <= COUPLED_MU * r.impulse * (1 + 1e-9) + 1e-15)
    assert r.admissible
    assert "energetically consistent" in r.note


def test_newton_law_with_decoupled_tangents_keeps_friction_on_the_velocity_after():
    # A disk on a wall: GᵀM⁻¹H = 0; the plain law does not gain, so nothing changes.
    M = np.array([2.0, 2.0, 0.01])  # m, m, J for a disk of radius 0.1
    G = np.array([[0.0], [1.0], [0.0]])
    H = np.array([[1.0], [0.0], [0.1]])
    v = np.array([1.0, -2.0, 0.0])
    r = resolve_impact(M, G, v, 0.5, "newton", H=H, friction=0.1)
    assert r.note == ""
    # Slip throughout (closed form): Λ = 2 (1 + e) = 6, p_t = −μΛ = −0.6.
    np.testing.assert_allclose(r.impulse, [6.0], rtol=1e-12)
    np.testing.assert_allclose(r.tangent_impulse, [-0.6], rtol=1e-12)


# Three contacts with friction, tangents coupled, e = 0: the sequential law bounced
# between two of them without end (tens of seconds, thousands of Lemke solves).
SEQ_M = np.array(
    [
        [46.60920814645727, 43.44086237914341, -42.9843598301412],
        [43.44086237914341, 48.37925506032809, -71.66754664658023],
        [-42.9843598301412, -71.66754664658023, 198.770323776484],
    ]
)
SEQ_G = np.array(
    [
        [-0.15059799836040494, 0.3469527857023623, -0.10444706906656219],
        [-0.8022875453678814, -0.8683891967525209, 0.4253944258208237],
        [-1.030480450166701, 0.6462427057150405, -1.524148363645292],
    ]
)
SEQ_H = np.array(
    [
        [-1.2521519434446158, 0.6520108635265922, -0.01853881330950251],
        [-1.0360736815895426, -1.5188882297503954, -1.5655893713726405],
        [0.05103394513032868, -1.1568301070665343, -1.364879600732452],
    ]
)
SEQ_V = np.array([-1.343088650464953, -0.43051197019258486, 0.2613508456100389])
SEQ_MU = np.array([0.14382527227092345, 0.7488998444884865, 0.6687281297620549])


def test_sequential_law_with_friction_sums_an_endless_tail_in_closed_form():
    r = resolve_impact(
        SEQ_M, SEQ_G, SEQ_V, 0.0, "sequential", H=SEQ_H, friction=SEQ_MU, max_stages=500
    )
    kinetic = 0.5 * SEQ_V @ SEQ_M @ SEQ_V
    np.testing.assert_allclose(
        SEQ_M @ (r.v_plus - SEQ_V),
        SEQ_G @ r.impulse + SEQ_H @ r.tangent_impulse,
        atol=1e-9 * np.max(np.abs(SEQ_M @ SEQ_V)),
    )
    assert np.all(r.impulse >= 0.0)
    assert np.all(np.abs(r.tangent_impulse) <= SEQ_MU * r.impulse * (1 + 1e-9))
    assert r.admissible and r.energy_change <= 0.0 and -r.energy_change <= kinetic
    assert "summed in closed form" in r.note and len(r.stages) < 500


@pytest.mark.parametrize("law", ["staged", "poisson", "newton", "sequential"])
def test_every_law_gives_up_at_its_time_budget_with_a_message_naming_it(law):
    rng = np.random.default_rng(7)
    G = rng.normal(size=(4, 3))
    with pytest.raises(SolverError, match=r"time budget of 1e-09 s"):
        resolve_impact(np.eye(4), G, -G @ np.ones(3), 1.0, law, time_budget=1e-9)


def test_the_count_bound_is_named_in_the_message():
    # A bead between two walls with e = 1 (dependent columns): the staged law oscillates.
    with pytest.raises(SolverError, match=r"max_stages=5 collisions"):
        resolve_impact(
            np.array([1.0]),
            np.array([[1.0, -1.0]]),
            np.array([-1.0]),
            0.999,
            "sequential",
            max_stages=5,
        )


@pytest.mark.parametrize("budget", [0.0, -1.0, float("nan"), float("inf")])
def test_a_time_budget_must_be_a_positive_number(budget):
    with pytest.raises(InputError, match="time_budget"):
        resolve_impact(np.eye(1), np.ones((1, 1)), np.array([-1.0]), 0.5, time_budget=budget)
