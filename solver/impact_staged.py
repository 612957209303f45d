"""The ``staged`` and ``poisson`` impact laws (paper 000 §2-§3, (3)-(14)): stages of a plastic
phase (the least-distance projection of Theorem 1) followed by a Poisson restitution phase,
repeated until no constraint approaches (``poisson``: one such stage). Called by
:func:`solver.impact.resolve_impact`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from solver.complementarity import (
    minimum_norm_nonnegative,
)
from solver.errors import SolverError
from solver.impact_problem import (
    ImpactStage,
    _Budget,
    _ImpactProblem,
)


def _staged(
    problem: _ImpactProblem, v_minus: np.ndarray, budget: _Budget, single_stage: bool
) -> tuple[np.ndarray, list[ImpactStage], np.ndarray]:
    """Stages of paper 000 (9)-(14) until no constraint approaches.

    Theorem 2 of paper 000 assumes ``rank G = n``. With dependent columns (a
    bead clamped between two walls) the stages can go on forever: if a stage
    ends at the same plastic velocity ``w`` as the one before, both ``d = y_k − w``
    and ``−e d`` lie in the normal cone of ``{Gᵀz >= 0}`` at ``w``, so every
    later stage is ``y = w + (−e)^j d`` with the same ``w`` (when the active
    constraints share one ``e``). For ``e < 1`` the limit is ``w``; the
    impulses reported are then the minimum-norm nonnegative ones with
    ``GΛ = M(w − v⁻)`` (the split among dependent constraints is not unique).
    For ``e = 1`` the velocity oscillates without limit and
    :class:`SolverError` says so.

    Returns the final velocity, the stage records and the normal impulse
    per constraint ``(1 + e) Σ λ^(k)`` (N·s).
    """
    all_cols = np.arange(problem.e.size)
    y = v_minus
    stages: list[ImpactStage] = []
    while problem.approaching(y):
        if single_stage and stages:
            break
        budget.check(len(stages), f" (largest approach speed {-problem.speeds(y).min():.3g} m/s)")
        y_next, stage = problem.poisson_stage(y, all_cols)
        previous = stages[-1] if stages else None
        stages.append(stage)
        if (
            previous is not None
            and not problem.has_friction
            and _self_similar(problem, previous, stage)
        ):
            if np.all(problem.e[previous.lam > 0.0] >= 1.0):
                raise SolverError(
                    "staged impact with restitution 1 on dependent constraints does not "
                    "converge: the velocity oscillates between stages (paper 000, Theorem 2 "
                    "needs rank G = n)"
                )
            W = problem.W.toarray() if sp.issparse(problem.W) else problem.W
            impulse = minimum_norm_nonnegative(W, problem.speeds(stage.w - v_minus))
            return stage.w, stages, impulse
        y = y_next
    return y, stages, sum(((1.0 + problem.e) * s.lam for s in stages), np.zeros(problem.e.size))


def _self_similar(problem: _ImpactProblem, previous: ImpactStage, stage: ImpactStage) -> bool:
    """Whether two consecutive stages end at the same ``w`` with one shared ``e``."""
    active = (previous.lam > 0.0) | (stage.lam > 0.0)
    if np.any(active) and np.ptp(problem.e[active]) > 0.0:
        return False
    scale = max(float(np.max(np.abs(previous.y))), np.finfo(float).tiny)
    return bool(np.max(np.abs(stage.w - previous.w)) <= 1e-12 * scale)
