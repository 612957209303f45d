"""The compiled banded contact LCP against complementarity.banded_lcp and the LCP's own laws."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver import chain_lcp
from solver.complementarity import banded_lcp, lemke
from solver.contact_arrays import SparseRows

SOLVERS = [
    pytest.param(chain_lcp.banded_contact_lcp, id="plain-python"),
    pytest.param("compiled", id="numba"),
]


def solver_of(solver):
    return chain_lcp.compiled_banded_contact_lcp() if solver == "compiled" else solver


@st.composite
def chain_problems(draw):
    """Contacts of ``n`` beads in a row (each pair ``k, k + 1``; some pairs also ``k, k + 2``)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(2, 40))
    reach = draw(st.sampled_from([1, 2]))
    rows = [(k, k + d) for k in range(n - 1) for d in range(1, reach + 1) if k + d < n]
    cols = np.array(rows)
    vals = np.column_stack((-np.ones(len(rows)), np.ones(len(rows))))
    m_inv = rng.uniform(0.2, 5.0, n)
    q = rng.normal(size=len(rows))
    q[rng.random(len(rows)) < 0.3] = 0.0
    return cols, vals, m_inv, q


@pytest.mark.parametrize("solver", SOLVERS)
@settings(max_examples=200)
@given(problem=chain_problems())
def test_banded_contact_lcp_is_banded_lcp_on_the_delassus_band(solver, problem):
    cols, vals, m_inv, q = problem
    G = SparseRows(cols, vals, len(m_inv)).to_csr().toarray()
    W = G @ np.diag(m_inv) @ G.T
    bandwidth = int(max(abs(i - j) for i, j in zip(*np.nonzero(W), strict=True)))
    band = np.zeros((bandwidth + 1, len(q)))
    for k in range(bandwidth + 1):
        band[bandwidth - k, k:] = np.diagonal(W, k)
    z = np.zeros(len(q))

    outcome = solver_of(solver)(cols, vals, m_inv, q, q <= 0.0, 8, z)

    if np.linalg.matrix_rank(W) < len(q):  # dependent contacts (k, k+1, k+2 on few beads)
        assert outcome in (chain_lcp.SOLVED, chain_lcp.SINGULAR)
        return
    reference = banded_lcp(band, q, initial_free=q <= 0.0)
    assert (outcome, reference.status) == (chain_lcp.SOLVED, "solved")
    scale = max(1.0, float(np.max(np.abs(reference.z))))
    np.testing.assert_allclose(z, reference.z, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(z, lemke(W, q).z, rtol=0, atol=1e-9 * scale)


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_band_wider_than_asked_is_refused(solver):
    cols = np.array([[0, 5], [1, 2], [2, 3], [3, 4], [4, 5]])
    vals = np.column_stack((-np.ones(5), np.ones(5)))  # contacts 0 and 4 share bead 5
    z = np.zeros(5)

    outcome = solver_of(solver)(cols, vals, np.ones(6), -np.ones(5), np.ones(5, bool), 3, z)

    assert outcome == chain_lcp.TOO_WIDE
