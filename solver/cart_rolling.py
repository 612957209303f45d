"""The rolling velocity of an axle cart from its wheels' spin rates (paper 001).

An axle cart's five velocities ``(vxC, vyC, omega, omegaA, omegaB)`` are fixed
by its two wheel rates through the no-slip constraints ``A(q) v = 0``:
``v = C(q) (omegaA, omegaB)`` with Maggi's basis ``C``. The compiled model
(:class:`solver.system.System`) needs this for a scene's initial velocity, the
cart stepper (:mod:`solver.cart_motion`) at every output; it lives here so
that the model does not import the stepper.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from solver.errors import InputError
from solver.nonholonomic import AxleCart, maggi_basis

WHEEL_RATES = np.array([3, 4])
"""Indices of ``omegaA, omegaB`` in ``v``: the independent velocities."""
ROLLING = np.array([0, 1, 2])
"""Indices of ``vxC, vyC, omega`` in ``v``: the dependent velocities."""


def initial_velocity(cart: AxleCart, q: ArrayLike, wheel_rates: ArrayLike) -> np.ndarray:
    """Full velocity ``v`` (5,) of a rolling cart from its wheels' spin rates.

    Parameters
    ----------
    cart : AxleCart
        The cart.
    q : array_like, shape (5,)
        Configuration ``(xC, yC, phi, thetaA, thetaB)``.
    wheel_rates : array_like, shape (2,)
        ``(omegaA, omegaB)`` in rad/s; equal rates roll straight at speed
        ``r omega``, opposite rates spin the cart about C.

    Returns
    -------
    ndarray, shape (5,)
        ``(vxC, vyC, omega, omegaA, omegaB)`` satisfying the no-slip constraints.

    Raises
    ------
    InputError
        For rates that are not two finite numbers, or a cart whose dependent
        block ``A₂`` (``det A₂ = 2 l``) is singular in floating point.
    """
    rates = np.asarray(wheel_rates, dtype=float)
    if rates.shape != (2,) or not np.all(np.isfinite(rates)):
        raise InputError(f"wheel_rates: must be two finite numbers (rad/s), got {wheel_rates!r}")
    return maggi_basis(cart.constraint_matrix(q), WHEEL_RATES) @ rates


def wheel_rate_basis(cart: AxleCart, q: ArrayLike) -> np.ndarray:
    """Maggi's ``C(q)`` (5 × 2) with the wheel rates independent, unchecked.

    :func:`solver.nonholonomic.maggi_basis`'s arithmetic without its checks
    (the rank of ``A``, the condition of ``A₂``), which cost twenty times the
    solve and hold at every pose once they hold at one: ``A₂`` is a rotation
    of ``[[1, 0, 0], [0, 1, −l], [0, 1, l]]``, whatever ``phi``. Check a cart
    once with :func:`initial_velocity` or ``maggi_basis``; the stepper calls
    this at every evaluation of its equations and every output frame.
    """
    A = cart.constraint_matrix(q)
    basis = np.zeros((5, 2))
    basis[WHEEL_RATES, np.arange(2)] = 1.0
    basis[ROLLING] = -np.linalg.solve(A[:, ROLLING], A[:, WHEEL_RATES])
    return basis
