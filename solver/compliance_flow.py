"""The closed form of pressing compliant contacts of beads on rails (p = 1).

A bead on the rail ``y = y_r`` pressing a linear (p = 1) compliant stop
that is a vertical segment ``x = x_w`` feels, along its rail,

    F·n_x = −k·(x − x_w − n_x r) − c·ẋ,     n_x = sign(x − x_w),

since its overlap is ``δ = r − n_x (x − x_w)`` and ``δ̇ = −n_x ẋ``: the
stop is a spring of stiffness k with rest position ``x_w + n_x r`` and a
damper c from the bead to the ground. While a fixed set of such contacts
presses (a phase of the event-driven stepper), the bead scene with them is
linear: ``k`` goes into ``K``, ``c`` into ``C`` and ``k (x_w + n_x r)``
into the constant force ``f0`` of :class:`solver.linear_bead_model.LinearBeadModel`,
and the engine's closed-form linear flow gives the motion exactly. The
model holds while the bead's centre stays on its side of the wall line
(``n_x (x − x_w) > 0``), one more separation row; the release, where
``k δ + c δ̇`` returns to 0, is located on the exact motion like the other
compliant events (:class:`solver.compliant_events.CompliantEvents`).

Two beads i, j on the same rail pressing each other with a linear
``contact.compliance`` are the same: with ``s = sign(x_i − x_j)`` the overlap
is ``δ = r_i + r_j − s (x_i − x_j)``, a spring k and a damper c between the
two beads with rest length ``r_i + r_j``, and the model holds while
``s (x_i − x_j) > 0``. In general (:meth:`solver.compliance.CompliantSet.linear_term`)
``δ = d0 − a·q`` with a constant row ``a``: ``k a aᵀ`` goes into ``K``,
``c a aᵀ`` into ``C``, ``k d0 a`` into ``f0``, and ``a·q > offset`` is the
separation row.

Any other pressing contact (a Hertz contact, p = 1.5; a slanted segment, an
arc or a corner; a wheel) is not linear: :func:`compliant_bead_model` is
None and the phase is integrated by DOP853.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import scipy.sparse

from solver.linear_bead_model import LinearBeadModel, rigid_bead_model


def compliant_bead_model(
    system: Any, q: np.ndarray, engaged: Iterable[tuple[int, int]]
) -> LinearBeadModel | None:
    """The linear model of a bead scene while the compliant pairs ``engaged`` press, or None.

    Parameters
    ----------
    system : solver.system.System
        The compiled scene (with compliant boundaries).
    q : numpy.ndarray, shape (N,)
        Coordinates at the phase's start (m): they fix the side ``n_x`` of each stop.
    engaged : iterable of (int, int)
        The pressing ``(disk, compliant feature)`` pairs of the phase.

    Returns
    -------
    LinearBeadModel or None
        The scene's own model (:func:`solver.linear_bead_model.rigid_bead_model`)
        with each pressing stop's spring, damper and rest position added and
        a separation row per contact; None when the scene is not linear or
        some pressing contact is neither a linear vertical stop nor a linear
        contact of two beads on one rail.
    """
    base = rigid_bead_model(system, q)
    pairs = sorted(engaged)
    if base is None or not pairs:
        return base
    K, C, f0 = base.K.copy(), base.C.copy(), base.f0.copy()
    rows, offsets = [base.separation_rows], [base.separation_offsets]
    for disk, feature in pairs:
        term = system.compliance.linear_term(disk, feature, q)
        if term is None:
            return None
        row, k, c, d0, offset = term
        outer = np.outer(row, row)
        K += k * outer
        C += c * outer
        f0 += k * d0 * row
        rows.append(scipy.sparse.csr_array(row[None, :]))
        offsets.append(np.array([offset]))
    return LinearBeadModel(
        M=base.M,
        C=C,
        K=K,
        f0=f0,
        harmonics=base.harmonics,
        separation_rows=scipy.sparse.vstack(rows, format="csr"),
        separation_offsets=np.concatenate(offsets),
    )
