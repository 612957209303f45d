"""A damped contact whose force dips to 0 and back between two sub-points is released there.

A bead (m = 1 kg) starts at a damped linear stop (k, c) moving in at V, pushed
in by a spring (stiffness k₀, rest length 0) anchored D past the stop's face.
While the stop presses, the overlap δ = x − x_s obeys the linear ODE

    m δ̈ = k₀ (D − δ) − k δ − c δ̇,     F = k δ + c δ̇,

and on the bead's first swing back out the damper's pull ``c δ̇ < 0`` can bring
F down to 0 for a moment while δ > 0 — the contact is released there (the stop
never pulls), and the bead, free of it, is pushed back in until ``k δ + c δ̇``
rises to 0 again (``touch``). Here D is chosen (brentq) so that F just dips,
its least value −ε of the force's scale: the dip is far shorter than the
spacing of a closed-form piece's sub-points, where F is positive on both sides.

The times are computed here independently of the program: the pressing phase and
the free phase by the matrix exponential of their (linear, constant-forced) ODEs,
their roots by ``brentq``.
"""

import math

import numpy as np
import scipy.linalg
import scipy.optimize
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.scene import parse_scene
from solver.simulation import simulate

R, WALL = 0.1, 0.5
XS = WALL - R  # the bead's centre where it touches the stop


def scene(k, c, k0, D, rest, V, t_end):
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 2,
            "title": "a damped stop whose force dips to zero",
            "view": "side",
            "gravity": [0.0, 0.0],
            "boundaries": [
                {
                    "id": "stop",
                    "type": "segment",
                    "a": [WALL, -1.0],
                    "b": [WALL, 1.0],
                    "compliance": {"stiffness": k, "damping": c, "exponent": 1},
                }
            ],
            "bodies": [
                {"id": "mass", "type": "bead", "rail_y": 0.0, "mass": 1.0, "radius": R}
                | {"x": XS + rest, "vx": V}
            ],
            "springs": [
                {"a": "mass", "anchor": [XS + D, 0.0], "stiffness": k0, "rest_length": 0.0}
            ],
            "solver": {"method": "event-driven", "t_end": t_end, "dt_out": 0.01},
        }
    )


def flow(k, c, k0, D):
    """``G`` of ``d/dt (δ, δ̇, 1) = G (δ, δ̇, 1)``: pressing (k, c) or free (k = c = 0)."""
    return np.array([[0.0, 1.0, 0.0], [-(k + k0), -c, k0 * D], [0.0, 0.0, 0.0]])


def samples(G, y0, s):
    """Rows ``(δ, δ̇, 1)`` at the evenly spaced times ``s`` (one exponential, repeated)."""
    step = scipy.linalg.expm(G * (s[1] - s[0]))
    rows = [y0]
    for _ in s[1:]:
        rows.append(step @ rows[-1])
    return np.array(rows)


def unit_swing(k, c, k0):
    """Time (s) and value of the least ``φ = k u + c u̇`` of ``u`` from (0, 1) (pressing, unforced).

    From the rest overlap δ* = k₀D/(k + k₀) with speed V the pressing motion is
    ``δ = δ* + V u`` and its force ``F = kδ* + V φ``: least at the least φ,
    which the damping makes that of the first swing out.
    """
    G = flow(k, c, k0, 0.0)

    def phi(s):
        u, du, _ = scipy.linalg.expm(G * s) @ np.array([0.0, 1.0, 0.0])
        return k * u + c * du

    s = np.linspace(0.0, 2.0 * math.pi / math.sqrt(k + k0), 801)
    rows = samples(G, np.array([0.0, 1.0, 0.0]), s)
    j = min(int(np.argmin(k * rows[:, 0] + c * rows[:, 1])), len(s) - 2)
    res = scipy.optimize.minimize_scalar(
        phi, bounds=(s[j - 1], s[j + 1]), method="bounded", options={"xatol": 1e-14}
    )
    return float(res.x), float(res.fun)


def dip_start(k, c, k0, D, share):
    """Start ``(δ*, V)`` from which F's least value is ``−share·kδ*`` (a dip just below 0)."""
    rest = k0 * D / (k + k0)
    _, low = unit_swing(k, c, k0)
    return rest, (1.0 + share) * k * rest / -low


def closed_form(k, c, k0, D, share):
    """Release and re-press (``touch``) times (s) and the overlap at the release (m)."""
    rest, V = dip_start(k, c, k0, D, share)
    G, y0 = flow(k, c, k0, D), np.array([rest, V, 1.0])

    def force(s):
        d, dd, _ = scipy.linalg.expm(G * s) @ y0
        return k * d + c * dd

    t_low, _ = unit_swing(k, c, k0)
    assert force(t_low) < 0.0
    # F falls through 0 once before its least value: from F > 0 within the swing
    lo = 0.0
    s = np.linspace(0.0, t_low, 401)
    for x in s[1:]:
        if force(x) <= 0.0:
            break
        lo = x
    t1 = scipy.optimize.brentq(force, lo, t_low, xtol=1e-15, rtol=4 * np.finfo(float).eps)
    y1 = scipy.linalg.expm(G * t1) @ y0
    free = flow(0.0, 0.0, k0, D)  # no contact force

    def virtual(s):
        d, dd, _ = scipy.linalg.expm(free * s) @ y1
        return k * d + c * dd

    def virtual_rate(s):
        return np.array([k, c, 0.0]) @ free @ scipy.linalg.expm(free * s) @ y1

    # k δ + c δ̇ falls through 0 at t1 and, the bead pushed back in, turns and rises
    # through 0 again: its least value where its rate turns, the root after it
    ss = np.linspace(0.0, 2.0 * math.pi / math.sqrt(k0), 4001)
    rows = samples(free, y1, ss)
    rate = rows @ free.T @ np.array([k, c, 0.0])
    j = int(np.nonzero(rate > 0.0)[0][0])
    eps = 4 * np.finfo(float).eps
    s_low = scipy.optimize.brentq(virtual_rate, 0.0, ss[j], xtol=1e-16, rtol=eps)
    v = k * rows[:, 0] + c * rows[:, 1]
    j = int(np.nonzero((ss > s_low) & (v > 0.0))[0][0])
    t2 = t1 + scipy.optimize.brentq(virtual, s_low, ss[j], xtol=1e-15, rtol=eps)
    return t1, t2, float(y1[0])


def soft_events(k, c, k0, D, share, t_end):
    rest, V = dip_start(k, c, k0, D, share)
    run = simulate(scene(k, c, k0, D, rest, V, t_end))
    assert run.status != "failed", run.message
    return [e for e in run.events if e.type in ("touch", "release")]


def check(k, c, k0, D, share):
    t1, t2, depth = closed_form(k, c, k0, D, share)
    assert depth > 0.0  # released inside the stop, not at its face
    rows = soft_events(k, c, k0, D, share, t2 + 0.5 * (t2 - t1))
    assert [r.type for r in rows[:2]] == ["release", "touch"]
    assert abs(rows[0].t - t1) < 1e-9
    assert abs(rows[1].t - t2) < 1e-9


def test_a_force_dipping_to_zero_for_an_instant_releases_the_contact():
    check(k=100.0, c=5.0, k0=400.0, D=0.02, share=1e-4)


@settings(max_examples=10, deadline=None)
@given(
    k=st.floats(20.0, 500.0),
    c=st.floats(2.0, 10.0),
    k0=st.floats(200.0, 2000.0),
    D=st.floats(0.005, 0.05),
    share=st.floats(1e-7, 1e-3),
)
def test_every_dip_of_the_force_releases_at_the_closed_form_time(k, c, k0, D, share):
    check(k, c, k0, D, share)
