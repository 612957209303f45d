"""A bead that only grazes a compliant stop between two sub-points still touches it.

A bead on a spring to its rest point (m = 1 kg, k₀ = 1 N/m) swings with amplitude
A = x_s + d, its free motion ``x = A sin t`` reaching a hair ``d`` past the centre
position ``x_s`` where it touches the stop. The dip lasts about ``2√(2d/A)`` s — far
shorter than the spacing of a closed-form piece's sub-points, so a search by sign
changes alone sees the gap positive at both and lets the bead through the stop
with no force (the orbits of a forced bead against a compliant stop ran into this
near grazing). The touch is ``asin(x_s / A)``; the contact phase is the linear ODE
``m ẍ = −k₀ x − k (x − x_s) − c ẋ`` from there, and the release is where
``k (x − x_s) + c ẋ`` returns to 0: both computed here with the matrix exponential
and a root finder, independently of the program.
"""

import math

import numpy as np
import scipy.linalg
import scipy.optimize
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.scene import parse_scene
from solver.simulation import simulate

R, WALL = 0.2, 0.4
XS = WALL - R


def grazing_scene(depth, k=400.0, c=2.0):
    A = XS + depth
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 2,
            "title": "a bead grazing a soft stop",
            "view": "side",
            "gravity": [0.0, 0.0],
            "contact": {"restitution": 1.0, "friction": 0.0, "impact_law": "newton"},
            "boundaries": [
                {
                    "id": "stop",
                    "type": "segment",
                    "a": [WALL, -0.5],
                    "b": [WALL, 0.5],
                    "compliance": {"stiffness": k, "damping": c, "exponent": 1},
                }
            ],
            "bodies": [
                {"id": "mass", "type": "bead", "rail_y": 0.0, "mass": 1.0, "radius": R}
                | {"x": 0.0, "vx": A}
            ],
            "springs": [{"a": "mass", "anchor": [0.0, 0.0], "stiffness": 1.0, "rest_length": 0.0}],
            "forces": [],
            "impulses": [],
            "solver": {"method": "event-driven", "t_end": 3.0, "dt_out": 0.01, "dt": 0.0001},
        }
    )


def closed_form(depth, k, c):
    """Touch and release times (s) of the grazing bead, from its two linear phases."""
    A = XS + depth
    t_touch = math.asin(XS / A)
    # pressing: d/dt (x, v, 1) = G (x, v, 1)
    G = np.array([[0.0, 1.0, 0.0], [-(1.0 + k), -c, k * XS], [0.0, 0.0, 0.0]])
    y0 = np.array([XS, A * math.cos(t_touch), 1.0])

    def force(s):
        x, v, _ = scipy.linalg.expm(G * s) @ y0
        return k * (x - XS) + c * v

    # the force starts at c·v > 0 and ends within half a period of the pressed spring
    period = 2.0 * math.pi / math.sqrt(1.0 + k)
    s = np.linspace(1e-12, period, 2001)
    f = np.array([force(x) for x in s])
    j = int(np.nonzero(f <= 0.0)[0][0])
    s_end = scipy.optimize.brentq(force, s[j - 1], s[j], xtol=1e-15, rtol=1e-15)
    return t_touch, t_touch + s_end


def events_of(scene):
    run = simulate(scene)
    assert run.status != "failed", run.message
    return [e for e in run.events if e.type in ("touch", "release")]


def test_a_graze_of_a_tenth_of_a_millimetre_touches_and_releases():
    rows = events_of(grazing_scene(1e-4))
    assert [r.type for r in rows] == ["touch", "release"]
    t_touch, t_release = closed_form(1e-4, 400.0, 2.0)
    assert abs(rows[0].t - t_touch) < 1e-9
    assert abs(rows[1].t - t_release) < 1e-9
    assert rows[1].normal_impulse > 0.0


@settings(max_examples=12, deadline=None)
@given(
    depth=st.floats(1e-7, 1e-3),
    k=st.floats(50.0, 5000.0),
    c=st.floats(0.0, 5.0),
)
def test_every_graze_touches_at_the_closed_form_time(depth, k, c):
    rows = events_of(grazing_scene(depth, k, c))
    assert [r.type for r in rows] == ["touch", "release"]
    t_touch, t_release = closed_form(depth, k, c)
    assert abs(rows[0].t - t_touch) < 1e-9
    assert abs(rows[1].t - t_release) < 1e-9
