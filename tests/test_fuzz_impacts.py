"""Fuzzing the impact laws: random problems of every hard kind, outcomes asserted.

Problems: mass matrices of condition up to 1e12 (or diagonal, as the engine
passes them), duplicated and dependent contact columns, sparse G, tangents
coupled to the normals through M, one e or one per contact, with and without
friction. Every call must end (bounded effort: stages within their bound)
with finite numbers balancing momentum, or a ``SolverError`` of a documented
kind; with one ``e <= 1`` none may gain kinetic energy. CI runs a fixed
(derandomized) set of examples within about a minute; bench/fuzz.py runs
10 000 of them.
"""

from __future__ import annotations

import re

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.errors import SolverError
from solver.impact import MAX_ROUNDS, MAX_STAGES, max_collisions, resolve_impact

EPS = np.finfo(float).eps
DOCUMENTED_FAILURES = re.compile(
    "|".join(
        [
            r"did not end within (max_stages=\d+|the time budget)",  # a bound, named
            r"Lemke's method ended with ray",  # friction without a consistent impulse (Painlevé)
            r"Lemke's method ended on a basis that is not a solution",  # degenerate pivoting
            r"restitution 1 on dependent constraints does not converge",
            r"are inconsistent \(no feasible z\)",  # newton, different e on dependent columns
            r"no nonnegative solution",
        ]
    )
)


@st.composite
def impact_problems(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    N = draw(st.integers(1, 6))
    n = draw(st.integers(1, 6))
    diagonal = draw(st.booleans())
    if diagonal:
        M = 10.0 ** rng.uniform(-3, 3, N)
        condition = float(M.max() / M.min())
    else:
        condition = 10.0 ** draw(st.sampled_from([0.0, 2.0, 6.0, 12.0]) | st.floats(0.0, 12.0))
        Q, _ = np.linalg.qr(rng.normal(size=(N, N)))
        spectrum = np.exp(rng.uniform(0.0, np.log(condition), N))
        spectrum[0], spectrum[-1] = 1.0, condition
        M = Q @ np.diag(spectrum) @ Q.T
        M = 0.5 * (M + M.T)
    G = rng.normal(size=(N, n))
    if n > 1 and draw(st.booleans()):
        G[:, -1] = G[:, 0] * rng.uniform(0.5, 2.0)  # a duplicated (scaled) column
    if n > 2 and draw(st.booleans()):
        G[:, -2] = G[:, 0] - G[:, 1]  # a dependent column
    if draw(st.booleans()):
        G[rng.random(G.shape) < 0.5] = 0.0  # sparse
        for j in np.flatnonzero(~G.any(axis=0)):
            G[rng.integers(N), j] = 1.0
    friction = draw(st.booleans())
    H = rng.normal(size=(N, n)) if friction else None  # coupled to the normals in general
    mu = rng.uniform(0.0, 1.0, n) if friction else None
    if draw(st.booleans()):
        e = draw(st.sampled_from([0.0, 1.0]) | st.floats(0.0, 1.0))
    else:
        e = rng.uniform(0.0, 1.0, n)
    v = rng.normal(size=N) * 10.0 ** rng.uniform(-3, 3)
    G_given = sp.csc_array(G) if diagonal and draw(st.booleans()) else G
    return M, G_given, G, v, e, H, mu, condition


def _bound(law: str, n: int) -> int:
    return {"staged": MAX_STAGES, "poisson": 1, "newton": MAX_ROUNDS}.get(law) or max_collisions(n)


@settings(max_examples=200)
@given(impact_problems(), st.sampled_from(["staged", "poisson", "sequential", "newton"]))
def test_every_impact_ends_with_finite_balanced_numbers_or_a_documented_failure(problem, law):
    M, G_given, G, v, e, H, mu, condition = problem
    try:
        r = resolve_impact(M, G_given, v, e, law, H=H, friction=mu)
    except SolverError as error:
        assert DOCUMENTED_FAILURES.search(str(error)), str(error)
        return
    Md = np.diag(M) if M.ndim == 1 else M
    assert np.all(np.isfinite(r.v_plus)) and np.all(np.isfinite(r.impulse))
    assert np.all(np.isfinite(r.tangent_impulse)) and np.isfinite(r.energy_change)
    assert np.all(r.impulse >= 0.0)
    assert len(r.stages) <= _bound(law, G.shape[1]) + 1  # + a summed tail
    momentum = Md @ (r.v_plus - v)
    applied = G @ r.impulse + (H @ r.tangent_impulse if H is not None else 0.0)
    scale = max(np.max(np.abs(Md @ v)), np.max(np.abs(applied)), 1e-300)
    assert np.max(np.abs(momentum - applied)) <= 1e-6 * max(1.0, condition * EPS * 1e4) * scale
    if mu is not None:
        assert np.all(np.abs(r.tangent_impulse) <= mu * r.impulse * (1 + 1e-6) + 1e-12 * scale)
    kinetic = 0.5 * v @ Md @ v
    if np.ndim(e) == 0:
        assert r.energy_change <= (1e-9 + 10 * EPS * condition) * kinetic, (
            f"gain {r.energy_change / kinetic:.3g} of T- with e = {e}"
        )


@settings(max_examples=150)
@given(impact_problems(), st.floats(0.0, 1.0), st.integers(0, 2**32 - 1))
def test_newton_law_with_coupled_tangents_never_gains_energy(problem, e, seed):
    M, G_given, G, v, _e, _H, _mu, condition = problem
    rng = np.random.default_rng(seed)
    H = rng.normal(size=G.shape)
    mu = rng.uniform(0.0, 1.0, G.shape[1])
    try:
        r = resolve_impact(M, G_given, v, e, "newton", H=H, friction=mu)
    except SolverError as error:
        assert DOCUMENTED_FAILURES.search(str(error)), str(error)
        return
    Md = np.diag(M) if M.ndim == 1 else M
    kinetic = 0.5 * v @ Md @ v
    assert r.energy_change <= (1e-9 + 10 * EPS * condition) * kinetic
    assert r.admissible
