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
    """
    rates = np.asarray(wheel_rates, dtype=float)
    if rates.shape != (2,) or not np.all(np.isfinite(rates)):
        raise InputError(f"wheel_rates: must be two finite numbers (rad/s), got {wheel_rates!r}")
    return wheel_rate_basis(cart, q) @ rates


def wheel_rate_basis(cart: AxleCart, q: ArrayLike) -> np.ndarray:
    """Maggi's ``C(q)`` (5 × 2) with the wheel rates independent."""
    return maggi_basis(cart.constraint_matrix(q), WHEEL_RATES)
