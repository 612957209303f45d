"""Random one-contact problems for the closed forms of solver.contact (hypothesis)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import strategies as st


@st.composite
def one_contact(draw, modes: tuple, u_t: st.SearchStrategy | None = None):
    """A contact on N coordinates, a diagonal ``M⁻¹``, an applied force and a mode.

    ``modes`` are the modes drawn from (``None``: the solver decides);
    ``u_t`` draws the tangential speed (m/s; default: normal with unit spread).
    Returns ``(contact, mode, M_inv, f)``.
    """
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    N = draw(st.integers(2, 6))
    M_inv = 1.0 / rng.uniform(0.1, 10.0, N)
    G, H, f = rng.normal(size=(3, N))
    mu = draw(st.sampled_from([0.0]) | st.floats(0.0, 2.0))
    tangential = float(rng.normal()) if u_t is None else draw(u_t)
    contact = SimpleNamespace(
        body="disk",
        other="wall",
        G=G,
        H=H,
        u_t=tangential,
        gamma_n=float(rng.normal()),
        gamma_t=float(rng.normal()),
        friction=mu,
    )
    mode = draw(st.sampled_from(modes))
    return contact, mode, M_inv, f
