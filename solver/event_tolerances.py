"""Tolerances and work bounds of the event-driven stepper (:mod:`solver.events`).

Lengths in m, speeds in m/s, times in s. ``docs/PHYSICS.md`` explains how they
work together (closing, grazing, penetration, junctions, Zeno).
"""

GAP_TOL = 1e-10
"""Gap (m) within which a contact counts as closed."""
GAP_EVENT_TOL = 1e-12
"""Overlap (m) that a closed, non-active contact may reach before it is an event."""
IMPACT_SPEED_TOL = 1e-7
"""Approach speed (m/s) below which a closing contact is taken up without an impact."""
REST_SPEED_TOL = 1e-9
"""Normal speed (m/s) below which a closed contact may become active."""
FRICTION_FLOOR = 1e-12
"""A friction coefficient below this is taken as 0 (frictionless).

The friction force it allows, ``μλ``, is then below the rounding of the
contact forces themselves, and the stick test ``μλ − |F_t| ≥ 0`` would be
decided by rounding alone (μ = 3e-299: a wheel wedged in a notch switched
between stick and slip at one instant until ``MAX_STALLED_EVENTS``)."""
TIME_TOL = 1e-14
"""Absolute accuracy of event times (s)."""
ZENO_HEIGHT = 1e-6
"""A geometric bounce sequence is ended once its next hop would rise less than this (m)."""
MAX_ZENO_BOUNCES = 1000
"""Bound on the bounces summed in closed form on the way to an accumulation point."""
ZENO_SPEED_FLOOR = 1e-12
"""Approach speed (m/s) at which a summed bounce series has reached its accumulation point."""
COLLAPSE_INTERVAL = 1e-6
"""Impacts of a shrinking run this close in time (s) with nothing pressing: inelastic collapse."""
MAX_IMPACT_ROUNDS = 1000
"""Bound on impacts resolved one after another at a single instant."""
MAX_STALLED_EVENTS = 200
"""Bound on consecutive events without time advancing."""
MAX_PHASES_PER_STEP = 256
"""Smooth phases one ``step()`` integrates at most before it returns (bounded work per step)."""
STEP_WALL_SLICE_S = 0.25
"""Wall time (s) after which ``step()`` returns at the end of the current phase.

A scene with thousands of springs can take a tenth of a second per phase:
without a slice one step could run for a minute, and a window could not
pause, strike or stop it meanwhile. Where a step returns does not change
the result (the next step continues with the same phase sequence)."""
PENETRATION_TOL = 1e-9
"""Overlap (m) of a watched contact at the end of a flight piece that is never accepted silently."""
REGION_TOL = 1e-12
"""Distance (m) beyond a segment's or arc's end within which a contact on it still counts.

A disk exactly at a junction (a scene drawn that way, or an event located
there) is then in the contact set of both features that meet."""
JUNCTION_TOL = 1e-12
"""Distance (m) within which the end points of two features are one junction."""
MAX_PROJECTION_ITERATIONS = 20
"""Bound on the Gauss–Newton iterations of the position projection."""
FEW_DISKS = 16
"""Up to this many disks are searched for neighbours directly, more through the grid."""
SPARSE_ABOVE = 64
"""Systems with more coordinates than this pass sparse Jacobians to the impact law."""
MISSED_SAMPLES = 64
"""Samples of a piece on which a gap closing that the search missed is looked for."""
REOPEN_SAMPLES = 16
"""Samples of a step searched for a contact that opened after an impact closing again."""
SUBPOINTS_ODE = 4
SUBPOINTS_FLIGHT = 8
SUBPOINTS_LINEAR = 2
"""Sub-points per closed-form linear piece; a piece lasts ``SUBPOINTS_LINEAR / max_rate``."""
FLOW_START_TOL = 1e-9
"""Agreement (m, m/s; relative to the scale of q) of a closed-form flow with its start state."""
WORK_NODES = 24
"""Gauss–Legendre nodes integrating damping and input power over a closed-form piece."""
