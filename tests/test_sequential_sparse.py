"""The ``sequential`` law on sparse Jacobians (the chain route) against the dense loop.

With a sparse ``G`` and a diagonal ``M`` the law updates only the entries a
collision's column touches and picks the most negative speed from a heap;
with a dense ``G`` it runs the plain loop over whole vectors. Both must make
the same collisions in the same order — same count, same impulses and
velocities to round-off — on touching chains (ties everywhere), chains
between walls, and random sparse constraint sets, with and without
infinite tails (e < 1).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from solver.errors import SolverError
from solver.impact import resolve_impact

speeds = st.sampled_from([0.0, 1.0, -1.0, 0.5, -0.25, 2.0])


@st.composite
def chains(draw):
    """Touching beads (gap columns x_{k+1} − x_k), perhaps against walls at either end."""
    n = draw(st.integers(2, 30))
    columns = []
    for k in range(n - 1):
        column = np.zeros(n)
        column[k], column[k + 1] = -1.0, 1.0
        columns.append(column)
    if draw(st.booleans()):
        wall = np.zeros(n)
        wall[0] = 1.0
        columns.insert(draw(st.sampled_from([0, len(columns)])), wall)
    if draw(st.booleans()):
        wall = np.zeros(n)
        wall[-1] = -1.0
        columns.append(wall)
    masses = np.array(draw(st.lists(st.sampled_from([1.0, 2.0, 0.5]), min_size=n, max_size=n)))
    v = np.array(draw(st.lists(speeds, min_size=n, max_size=n)))
    return masses, np.column_stack(columns), v


@st.composite
def sparse_sets(draw):
    """A few constraints on a few coordinates, each with one to three nonzero entries."""
    N = draw(st.integers(2, 12))
    m = draw(st.integers(1, 10))
    G = np.zeros((N, m))
    for k in range(m):
        rows = draw(st.lists(st.integers(0, N - 1), min_size=1, max_size=3, unique=True))
        for r in rows:
            G[r, k] = draw(st.sampled_from([1.0, -1.0, 0.6, -0.8]))
    masses = np.array(draw(st.lists(st.sampled_from([1.0, 2.0, 0.5]), min_size=N, max_size=N)))
    v = np.array(draw(st.lists(speeds, min_size=N, max_size=N)))
    return masses, G, v


def outcome(M, G, v, e):
    try:
        return resolve_impact(M, G, v, e, law="sequential", max_stages=3000)
    except SolverError as error:
        return str(error).split(" (")[0]  # the bound named, without the count reached


@given(chains() | sparse_sets(), st.sampled_from([1.0, 0.5, 0.0, 0.9]))
def test_sparse_route_makes_the_collisions_of_the_dense_loop(problem, e):
    M, G, v = problem
    dense = outcome(M, G, v, e)
    sparse = outcome(M, sp.csc_array(G), v, e)

    if isinstance(dense, str) or isinstance(sparse, str):
        assert sparse == dense
        return
    assert len(sparse.stages) == len(dense.stages)
    assert sparse.note == dense.note
    scale = 1.0 + float(np.max(np.abs(v)))
    np.testing.assert_allclose(sparse.v_plus, dense.v_plus, rtol=0.0, atol=1e-12 * scale)
    np.testing.assert_allclose(sparse.impulse, dense.impulse, rtol=0.0, atol=1e-12 * scale)
    assert sparse.energy_change == pytest.approx(dense.energy_change, abs=1e-12 * scale**2)
    for k in (0, len(dense.stages) - 1):
        if len(dense.stages):
            np.testing.assert_allclose(
                sparse.stages[k].w, dense.stages[k].w, rtol=0.0, atol=1e-12 * scale
            )
