"""Shortcuts of the affine bead scenes (solver/affine_gaps.py) decide as the general routes do.

``_nothing_missed`` lets the check for missed closings skip its gap
evaluations: wherever it says so, the general check
(:meth:`solver.gap_roots.GapRoots.missed`, run here without the
shortcut) must find nothing and raise nothing — for random end states of a
piece, beads through stops and through each other included.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.affine_gaps import AffineScan
from solver.flight import Piece
from solver.linear_flow import LinearFlow
from solver.simulation import make_stepper
from tests.test_affine_gaps import RADIUS, STOP, oscillator_scene

free = STOP - RADIUS  # a bead centre between the stops is within this of the middle (m)
positions = st.one_of(st.floats(-free, free), st.floats(-STOP - 2 * RADIUS, STOP + 2 * RADIUS))
speeds = st.floats(-3.0, 3.0)


def straight_piece(ya: np.ndarray, yb: np.ndarray, duration: float) -> Piece:
    """A piece moving from state ``ya`` to ``yb`` along the straight line between them."""

    def state(t: float) -> np.ndarray:
        return ya + (t / duration) * (yb - ya)

    return Piece(0.0, duration, state)


@settings(max_examples=300, deadline=None)
@given(
    st.tuples(positions, speeds, positions, speeds),
    st.one_of(st.none(), st.tuples(positions, speeds, positions, speeds)),
    st.floats(1e-3, 0.5),
    st.sampled_from([0.0, 1e-10, 5e-10, 2e-9]),
)
def test_nothing_missed_only_where_the_general_check_finds_nothing(first, second, duration, dent):
    x0 = 0.0 if second is None else -0.1
    scene = oscillator_scene(
        1.0, 0.0, 0.0, 1.0, 5.0, 0.0, x0, 0.0, 0.8, second=None if second is None else (0.1, 0.0)
    )
    stepper = make_stepper(scene)
    gaps = stepper.pairs.candidates()
    xa, va, xb, vb = first
    qa, qb, v_a, v_b = [xa], [xb], [va], [vb]
    if second is not None:
        qa.append(second[0])
        qb.append(second[2])
        v_a.append(second[1])
        v_b.append(second[3])
    # a bead a hair inside a stop (the penetration tolerance is 1e-9 m) at the end
    qb[0] = min(qb[0], STOP - RADIUS + dent) if qb[0] > 0.0 else qb[0]
    work = [0.0, 0.0, 0.0]
    ya = np.array(qa + v_a + work)
    yb = np.array(qb + v_b + work)
    n = len(qa)
    if not stepper.affine.nothing_missed(gaps, ya[:n], yb[:n]):
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(AffineScan, "nothing_missed", lambda *args: False)
        assert stepper.roots.missed(straight_piece(ya, yb, duration), gaps, None) is None


def test_a_flight_between_the_stops_needs_no_check():
    scene = oscillator_scene(1.0, 0.0, 0.0, 1.0, 5.0, 0.0, -0.1, 0.0, 0.8, second=(0.1, 0.0))
    stepper = make_stepper(scene)
    gaps = stepper.pairs.candidates()
    assert stepper.affine.nothing_missed(gaps, np.array([-0.1, 0.1]), np.array([-0.12, 0.02]))
    # the beads passed each other, a bead went through a stop
    assert not stepper.affine.nothing_missed(gaps, np.array([-0.1, 0.1]), np.array([0.05, -0.05]))
    assert not stepper.affine.nothing_missed(gaps, np.array([-0.1, 0.1]), np.array([-0.3, 0.1]))


@settings(max_examples=60, deadline=None)
@given(
    st.floats(0.2, 5.0),
    st.one_of(st.just(0.0), st.floats(1.0, 400.0)),
    st.floats(0.0, 4.0),
    st.floats(0.0, 40.0),
    st.floats(1.0, 40.0),
    st.floats(0.0, 6.3),
    st.tuples(st.floats(-0.2, 0.2), st.floats(-3.0, 3.0), st.floats(-0.2, 0.2)),
    st.floats(0.0, 2.0),
)
def test_projections_are_the_phase_rows_to_rounding(m, k, c, force, omega, phase, start, tau):
    """``a·q(t)`` and ``a·v(t)`` of the scalar closed forms against the phase's array rows.

    Two beads (the first forced, on a spring to the wall, the second free
    under a constant force); rows of a stop gap and of the pair's gap. The
    generator's eigenvalues may coincide (resonance): then there is no
    polynomial form, and None is the answer.
    """
    M = np.array([m, 1.0])
    K = np.diag([k, 0.0])
    C = np.diag([c if k else 0.0, 0.0])
    flow = LinearFlow(M, C, K, np.array([0.0, 0.5]), [(np.array([force, 0.0]), omega, phase)])
    x0, v0, x1 = start
    motion = flow.start(1.0, np.array([x0, x1]), np.array([v0, 0.0]))
    rows = np.array([[1.0, 0.0], [-1.0, 1.0]])
    curves = motion.projections(rows)
    if curves is None:
        assert any(np.any(np.diag(N)) for _, _, N in flow._decomposition.clusters)
        return
    t = 1.0 + tau
    q, v = motion.state(np.array([t]))
    scale = 1.0 + float(np.max(np.abs(q))) + float(np.max(np.abs(v)))
    for n in range(2):
        assert curves.value(n, t) == pytest.approx(rows[n] @ q[0], abs=1e-13 * scale)
        assert curves.rate(n, t) == pytest.approx(rows[n] @ v[0], abs=1e-12 * scale)


@settings(max_examples=60, deadline=None)
@given(
    st.floats(0.2, 5.0),
    st.floats(0.0, 40.0),
    st.floats(1.0, 40.0),
    st.floats(0.0, 6.3),
    st.floats(-3.0, 3.0),
    st.floats(0.0, 1.0),
    st.floats(1e-3, 0.5),
)
def test_gap_kinematics_and_their_curvature_bound(m, force, omega, phase, v0, start, width):
    """A forced free bead's gap: value, rate, second derivative, and a bound of the latter.

    The derivatives against the phase's acceleration rows; the bound of
    ``|g''|`` over ``[ta, tb]`` against ``g''`` sampled on 50 points there.
    """
    flow = LinearFlow([m], [0.0], [0.0], [0.3], [(np.array([force]), omega, phase)])
    motion = flow.start(0.5, np.array([0.01]), np.array([v0]))
    curves = motion.projections(np.array([[-1.0]]))
    ta = 0.5 + start
    tb = ta + width
    bound = curves.curvature_bound(0, ta, tb)
    for t in np.linspace(ta, tb, 50):
        q, v, a = motion.kinematics(np.array([t]))
        value, rate, curvature = curves.kinematics(0, float(t))
        scale = 1.0 + abs(q[0, 0]) + abs(v[0, 0]) + abs(a[0, 0])
        assert value == pytest.approx(-q[0, 0], abs=1e-13 * scale)
        assert rate == pytest.approx(-v[0, 0], abs=1e-12 * scale)
        assert curvature == pytest.approx(-a[0, 0], abs=1e-11 * scale)
        assert abs(a[0, 0]) <= bound * (1.0 + 1e-12) + 1e-12


def test_a_lone_bead_keeps_the_pairs_a_new_search_finds():
    """The search skipped for one bead in a scene its margin covers: the same pairs, in order."""
    scene = oscillator_scene(1.0, 0.0, 0.0, 20.0, 9.0, 0.0, 0.0, 1.5, 0.8, t_end=5.0)
    stepper = make_stepper(scene)
    skipped = 0
    while stepper.status == "running":
        stepper.step()
        if stepper.pairs.pairs_found_at is not None:
            found = stepper.setup.kin.candidates(
                stepper.motion.q, stepper.pairs.margin, np.array([0])
            )
            assert found == stepper.pairs.all_candidates().pairs
            skipped += stepper.pairs.search_finds_the_same()
    assert skipped > 0
