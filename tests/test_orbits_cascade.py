"""A period-doubling cascade on the impact oscillator: --doublings 2 follows period 1 → 2 → 4.

tests/test_orbits.py's oscillator (m = k = 1, c = 0.1, F = 1, e = 0.8, stop at 0.2), ω from
2 up: the period-1 orbit doubles at ω₁ ≈ 2.2653, the period-2 orbit born there doubles at
ω₂ ≈ 2.2782, the period-4 orbit born there is followed (and doubles again at ω₃ ≈ 2.2805).
The test checks every period-4 orbit against the closed form of the free motion between
impacts, and the second doubling against the closed-form period-2 orbit's monodromy.
"""

import csv
import math

import numpy as np
import pytest
import scipy.linalg
from scipy.optimize import root
from test_orbits import C, E, F, K, M, S, _cli, free_motion, oscillator

OMEGA = "forces[0].omega"


@pytest.fixture(scope="module")
def cascade(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cascade")
    args = ("--vary", f"{OMEGA}=2.0:2.3", "--step", "0.05", "--transient", "100")
    code, err = _cli(tmp, oscillator(), *args, "--max-points", "80", "--doublings", "2")
    assert code == 0, err
    rows = list(csv.DictReader(open(tmp / "out" / "branches.csv")))
    impacts = list(csv.DictReader(open(tmp / "out" / "orbit_impacts.csv")))
    return rows, impacts


def impacts_of(impacts, row):
    return [
        (float(i["t"]), -float(i["u_n_minus"]))
        for i in impacts
        if i["branch"] == row["branch"] and i["point"] == row["point"]
    ]


def saltation(t, v_minus, w):
    a_minus = (F * math.sin(w * t) - C * v_minus - K * S) / M
    a_plus = (F * math.sin(w * t) + C * E * v_minus - K * S) / M
    return np.array([[-E, 0.0], [(a_plus + E * a_minus) / v_minus, -E]])


def period_two(w, guess):
    """(t₁, v₁, t₂, v₂) of the two-impact period-2 orbit at ω = w: the periodicity conditions."""
    T = 2 * math.pi / w

    def conditions(u):
        t1, v1, t2, v2 = u
        x2, u2 = free_motion(t1, S, -E * v1, t2, W=w)
        x1, u1 = free_motion(t2, S, -E * v2, t1 + 2 * T, W=w)
        return [x2 - S, u2 - v2, x1 - S, u1 - v1]

    sol = root(conditions, guess, tol=1e-14).x
    assert max(abs(r) for r in conditions(sol)) < 1e-11
    return sol


def period_two_monodromy(w, u):
    t1, v1, t2, v2 = u
    T = 2 * math.pi / w
    A = np.array([[0.0, 1.0], [-K / M, -C / M]])
    E1, E2 = scipy.linalg.expm(A * (t2 - t1)), scipy.linalg.expm(A * (t1 + 2 * T - t2))
    return E2 @ saltation(t2, v2, w) @ E1 @ saltation(t1, v1, w)


def test_cascade_period_one_two_four(cascade):
    rows, impacts = cascade
    branches = [[r for r in rows if r["branch"] == b] for b in ("0", "1", "2")]
    assert [{r["period"] for r in b} for b in branches] == [{"1"}, {"2"}, {"4"}]
    doublings = [
        float(next(r for r in b if r["bifurcation"] == "period_doubling")[OMEGA]) for b in branches
    ]
    w1, w2, w3 = doublings
    assert 2.26 < w1 < w2 < w3 < 2.29
    # each doubled branch starts at the doubling of the one before
    assert branches[1][0][OMEGA] == repr(w1) and branches[2][0][OMEGA] == repr(w2)
    # the period-4 branch: four impacts, each orbit periodic by the closed form
    followed = [r for r in branches[2][1:] if r["bifurcation"] == ""]
    assert len(followed) >= 3
    spreads = []
    for row in followed:
        w = float(row[OMEGA])
        hits = impacts_of(impacts, row)
        assert row["n_impacts"] == "4" and len(hits) == 4
        for (t_a, v_a), (t_b, v_b) in zip(hits, [*hits[1:], hits[0]], strict=True):
            if t_b <= t_a:
                t_b += 4 * 2 * math.pi / w
            x, v = free_motion(t_a, S, -E * v_a, t_b, W=w)
            assert abs(x - S) < 1e-10 and abs(v - v_b) < 1e-10
        speeds = [v for _, v in hits]
        spreads.append((w, abs(speeds[0] - speeds[2])))  # 0 on a period-2 orbit
    assert all(w > w2 and spread > 1e-6 for w, spread in spreads)  # the side ω > ω₂
    # the second doubling: the closed-form period-2 orbit's multiplier crosses −1 at ω₂
    pd = next(r for r in branches[1] if r["bifurcation"] == "period_doubling")
    (t1, v1), (t2, v2) = impacts_of(impacts, pd)
    signs = []
    for w in (w2 - 2e-8, w2 + 2e-8):
        phi = period_two_monodromy(w, period_two(w, [t1, v1, t2, v2]))
        signs.append(np.sign(np.linalg.det(phi + np.eye(2))))
    assert signs[0] == -signs[1]


@pytest.mark.parametrize("bad", ["-1", "1.5", "9", "many"])
def test_bad_doublings_are_refused_naming_the_option(tmp_path, bad):
    args = ("--vary", f"{OMEGA}=2.0:2.3", "--doublings", bad)
    code, err = _cli(tmp_path, oscillator(), *args)
    assert code == 2 and "--doublings" in err


@pytest.fixture(scope="module")
def cascade8(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cascade8")
    args = ("--vary", f"{OMEGA}=2.2:2.3", "--step", "0.05", "--transient", "100")
    code, err = _cli(tmp, oscillator(), *args, "--max-points", "60", "--doublings", "3")
    assert code == 0, err
    rows = list(csv.DictReader(open(tmp / "out" / "branches.csv")))
    impacts = list(csv.DictReader(open(tmp / "out" / "orbit_impacts.csv")))
    return rows, impacts


def test_cascade_reaches_period_eight(cascade8):
    """--doublings 3 starts the period-8 branch at the period-4 branch's doubling (the
    corrector there used to stall at a residual of 9.5e-12 and the command exited 3) and
    follows it to STOP = 2.3: no grazing on the way (every free flight stays off the stop,
    by the closed form), the multiplier growing to about −800. Its corrector used to fail
    at ω ≈ 2.2969 (a multiplier −520; exit 3): the tangent there was built with ∂P/∂p taken
    at the predictor, stale by tens of percent where ∂²P/∂p² is about 2e6."""
    rows, impacts = cascade8
    branches = [[r for r in rows if r["branch"] == b] for b in ("0", "1", "2", "3")]
    assert [{r["period"] for r in b} for b in branches] == [{"1"}, {"2"}, {"4"}, {"8"}]
    w3 = float(next(r for r in branches[2] if r["bifurcation"] == "period_doubling")[OMEGA])
    assert 2.2804792 < w3 < 2.2804793  # ω₃ (docs/ORBITS.md)
    assert branches[3][0][OMEGA] == repr(w3)
    followed = [r for r in branches[3][1:] if r["bifurcation"] in ("", "end")]
    assert len(followed) >= 3
    last = branches[3][-1]
    assert last["bifurcation"] == "end" and float(last[OMEGA]) >= 2.3  # STOP reached
    assert float(last["mu_1_re"]) < -700.0
    A = np.array([[0.0, 1.0], [-K / M, -C / M]])
    for row in followed:
        w = float(row[OMEGA])
        span = 8 * 2 * math.pi / w
        hits = impacts_of(impacts, row)
        assert row["n_impacts"] == "8" and len(hits) == 8
        # the eight impacts chain by the closed-form free motion, the last back to the first,
        # and each free flight stays off the stop (no grazing: x < S inside every flight)
        for (t_a, v_a), (t_b, v_b) in zip(hits, [*hits[1:], hits[0]], strict=True):
            if t_b <= t_a:
                t_b += span
            x, v = free_motion(t_a, S, -E * v_a, t_b, W=w)
            assert abs(x - S) < 1e-10 and abs(v - v_b) < 1e-10
            xs = np.array(
                [free_motion(t_a, S, -E * v_a, t, W=w)[0] for t in np.linspace(t_a, t_b, 402)[1:-1]]
            )
            crests = xs[1:-1][(xs[1:-1] > xs[:-2]) & (xs[1:-1] > xs[2:])]
            assert (xs < S).all() and (crests < S - 1e-3).all()
        speeds = [v for _, v in hits]
        assert abs(speeds[0] - speeds[4]) > 1e-6  # not a period-4 orbit
        # the multipliers: the closed-form monodromy, eight saltations between flows
        t_first = hits[0][0]
        phi = np.eye(2)
        for (t_a, v_a), (t_b, _) in zip(hits, [*hits[1:], (t_first + span, 0.0)], strict=True):
            phi = scipy.linalg.expm(A * (t_b - t_a)) @ saltation(t_a, v_a, w) @ phi
        mu = sorted(np.linalg.eigvals(phi).real, key=abs, reverse=True)
        got = [float(row["mu_1_re"]), float(row["mu_2_re"])]
        assert np.allclose(got, mu, rtol=1e-7, atol=1e-9)
    # the period-8 branch's own doubling is located (the doubled start stays before it):
    # the closed-form period-8 orbit's multiplier crosses −1 there
    pd = next(r for r in branches[3] if r["bifurcation"] == "period_doubling")
    w4 = float(pd[OMEGA])
    w2 = float(next(r for r in branches[1] if r["bifurcation"] == "period_doubling")[OMEGA])
    assert w3 < w4 < w3 + (w3 - w2)
    guess = [x for hit in impacts_of(impacts, pd) for x in hit]
    signs = []
    for w in (w4 - 2e-8, w4 + 2e-8):
        u = period_n(8, w, guess)
        signs.append(np.sign(np.linalg.det(period_n_monodromy(8, w, u) + np.eye(2))))
    assert signs[0] == -signs[1]


def period_n(n, w, guess):
    """(t₁, v₁, …, t_n, v_n) of the n-impact period-n orbit at ω = w: periodicity conditions."""
    span = n * 2 * math.pi / w

    def conditions(u):
        out = []
        for k in range(n):
            t_a, v_a = u[2 * k], u[2 * k + 1]
            t_b, v_b = u[(2 * k + 2) % (2 * n)], u[(2 * k + 3) % (2 * n)]
            if k == n - 1:
                t_b += span
            x, v = free_motion(t_a, S, -E * v_a, t_b, W=w)
            out += [x - S, v - v_b]
        return out

    sol = root(conditions, guess, tol=1e-14).x
    assert max(abs(r) for r in conditions(sol)) < 1e-11
    return sol


def period_n_monodromy(n, w, u):
    span = n * 2 * math.pi / w
    A = np.array([[0.0, 1.0], [-K / M, -C / M]])
    phi = np.eye(2)
    for k in range(n):
        t_a, v_a = u[2 * k], u[2 * k + 1]
        t_b = u[2 * k + 2] if k < n - 1 else u[0] + span
        phi = scipy.linalg.expm(A * (t_b - t_a)) @ saltation(t_a, v_a, w) @ phi
    return phi
