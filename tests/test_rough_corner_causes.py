"""The two causes behind the rough-corner failures of issue 24, pinned on their own.

* A gap whose normal acceleration is not negative (a wall beside a ball
  bouncing on the floor) still closes when the disk approaches it: the
  summed bounces of a Zeno series must see it (zeno_series._closing_time).
* A frictional impact at speeds of round-off size failed Lemke's
  working-precision check; the laws are positively homogeneous in v⁻, so it
  is solved at speeds scaled by a power of two and scaled back.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from solver.impact import resolve_impact
from solver.zeno_series import _closing_time


@pytest.mark.parametrize(
    ("g", "u", "a_n", "expected"),
    [
        (1.0, -1.0, 0.0, 1.0),  # no acceleration along the normal: g / |u|
        (1.0, -2.0, 1.0, 2.0 - math.sqrt(2.0)),  # ½τ² − 2τ + 1 = 0, the smaller root
        (1.0, -1.0, 1.0, math.inf),  # turns back before touching (u² < 2 a_n g)
        (1.0, 0.5, 1.0, math.inf),  # moving away
        (1.0, 0.0, -2.0, 1.0),  # falling from rest: g = ½ |a| τ²
    ],
)
def test_a_gap_closes_when_it_is_approached_fast_enough(g, u, a_n, expected):
    tau = _closing_time(g, u, a_n)
    if math.isinf(expected):
        assert math.isinf(tau)
    else:
        assert tau == pytest.approx(expected, rel=1e-14)
        assert g + u * tau + 0.5 * a_n * tau * tau == pytest.approx(0.0, abs=1e-14)


# the impact of the ball in the corner (29.69°, 103.7°, μ = 0.56, e = 0.78) at t = 1.1420 s
M = np.array([1.0, 1.0, 0.005])
G = np.array(
    [
        [-0.4953510252212238, 0.7260840155754801],
        [0.8686929042027927, 0.6876059935208432],
        [0.0, 0.0],
    ]
)
H = np.array(
    [
        [0.8686929042027927, 0.6876059935208432],
        [0.4953510252212238, -0.7260840155754801],
        [0.1, 0.1],
    ]
)
V = np.array([-8.813645904998741e-13, -3.312628912800722e-12, -3.773751490928712e-12])


def test_a_frictional_impact_at_round_off_speeds_is_solved_as_its_scaled_copy():
    """Failed before with 'Lemke's method ended on a basis that is not a solution'."""
    r = resolve_impact(M, G, V, 0.7828, "staged", H=H, friction=0.55989)
    big = resolve_impact(M, G, V * 2.0**40, 0.7828, "staged", H=H, friction=0.55989)
    # the laws are positively homogeneous: the answer is the scaled problem's, scaled back
    np.testing.assert_allclose(r.v_plus, big.v_plus * 2.0**-40, rtol=1e-12)
    np.testing.assert_allclose(r.impulse, big.impulse * 2.0**-40, rtol=1e-12)
    assert r.admissible and np.all(G.T @ r.v_plus >= -1e-24)
    assert np.all(np.abs(r.tangent_impulse) <= 0.55989 * r.impulse * (1 + 1e-12))
    balance = np.diag(M) @ (r.v_plus - V) - G @ r.impulse - H @ r.tangent_impulse
    assert np.max(np.abs(balance)) <= 1e-12 * np.max(np.abs(G @ r.impulse))
    assert r.energy_change <= 0.0 and "scaled" in r.note
