"""Closed-form references of wheels: a ball bouncing to rest, a wheel rolling onto a step
(paper 004's corner impact, the ratio derived here) and a wheel on an incline (Coulomb
friction, paper 004). The forms and their conditions: :mod:`solver.reference`.
"""

from __future__ import annotations

import math

import numpy as np

from solver.reference_model import (
    _TOUCH,
    Piece,
    Reference,
    StateFunction,
    _flights,
    _gravity,
    _only,
)
from solver.scene import (
    PolylineBoundary,
    Scene,
    SegmentBoundary,
    Wheel,
)


def _bouncing_ball(scene: Scene, t_end: float) -> Reference | None:
    g = _gravity(scene)
    if g is None or not _only(scene, boundaries=1, bodies=1):
        return None
    ball, ground = scene.bodies[0], scene.boundaries[0]
    if not isinstance(ball, Wheel) or not isinstance(ground, SegmentBoundary):
        return None
    (ax, ay), (bx, by) = ground.a, ground.b
    x0, y0 = ball.position
    vx0, vy0 = ball.velocity
    e, mu = scene.contact_params(ground)
    if ay != by or not min(ax, bx) < x0 < max(ax, bx) or vx0 != 0.0:
        return None
    if ball.angular_velocity != 0.0 and mu > 0.0:
        return None
    r, m = ball.radius, ball.mass
    y_contact = ay + r
    h = y0 - y_contact
    if h < 0.0 or (h == 0.0 and vy0 <= 0.0):
        return None
    u1 = math.sqrt(vy0 * vy0 + 2.0 * g * h)
    t1 = (vy0 + u1) / g
    t_inf = t1 + 2.0 * e * u1 / (g * (1.0 - e)) if e < 1.0 else math.inf
    name = ball.id

    def flight_piece(k: int) -> StateFunction:
        y_start, w = (y0, vy0) if k == 0 else (y_contact, u1 * e**k)

        def state(tau: np.ndarray) -> dict[str, np.ndarray]:
            return {f"{name}.y": y_start + w * tau - 0.5 * g * tau * tau, f"{name}.vy": w - g * tau}

        return state

    def rest(tau: np.ndarray) -> dict[str, np.ndarray]:
        return {f"{name}.y": np.full_like(tau, y_contact), f"{name}.vy": np.zeros_like(tau)}

    tiny = 1e-12 * u1

    def flight(k: int) -> float:
        w = u1 * e**k
        return 0.0 if w <= tiny else 2.0 * w / g

    pieces, impacts, t_valid = _flights(t_end, t1, flight, flight_piece, rest)
    values = {"t_first": t1, "u_first": u1, "restitution": e, "resting_force": m * g}
    if e < 1.0:
        values["t_inf"] = t_inf
    return Reference(
        name="bouncing_ball",
        title=f"bouncing ball: t∞ = {t_inf:.6g} s" if e < 1.0 else "bouncing ball (e = 1)",
        source="impacts of a falling ball: t∞ = t₀(1+e)/(1−e) from rest; resting force mg",
        conditions=(
            "one wheel above one horizontal segment, gravity straight down",
            "no horizontal velocity; no spin, or no friction",
            "Newton's restitution at the ground; the ball never leaves the segment",
        ),
        columns=(f"{name}.y", f"{name}.vy"),
        units=("m", "m/s"),
        t_valid=t_valid,
        impact_times=tuple(impacts),
        values=values,
        pieces=tuple(pieces),
    )


def _step_ahead(
    boundary: PolylineBoundary, x: float, y_floor: float, direction: float
) -> tuple[float, float] | None:
    """The top corner of the step a wheel rolling along ``y_floor`` at ``x`` meets next.

    The floor is a horizontal piece of the polyline under ``x``; its end in
    the direction of motion must rise straight up to the next vertex, the
    corner. ``None`` when the polyline is not shaped so.
    """
    points = boundary.points
    for i in range(len(points) - 1):
        (ax, ay), (bx, by) = points[i], points[i + 1]
        if not (ay == by == y_floor and min(ax, bx) <= x <= max(ax, bx)):
            continue
        forward = (bx - ax) * direction > 0.0
        end, beyond = (i + 1, i + 2) if forward else (i, i - 1)
        if not 0 <= beyond < len(points):
            return None
        (ex, ey), (tx, ty) = points[end], points[beyond]
        if tx == ex and ty > ey:
            return tx, ty
        return None
    return None


def _curb(scene: Scene, t_end: float) -> Reference | None:
    g = _gravity(scene)
    if g is None or not _only(scene, boundaries=1, bodies=1):
        return None
    wheel, boundary = scene.bodies[0], scene.boundaries[0]
    if not isinstance(wheel, Wheel) or not isinstance(boundary, PolylineBoundary):
        return None
    (x0, y0), (vx, vy) = wheel.position, wheel.velocity
    r, m, J = wheel.radius, wheel.mass, wheel.inertia
    if vy != 0.0 or vx == 0.0 or abs(wheel.angular_velocity + vx / r) > _TOUCH * abs(vx / r):
        return None
    direction = 1.0 if vx > 0 else -1.0
    y_floor = y0 - r
    corner = _step_ahead(boundary, x0, y_floor, direction)
    if corner is None:
        return None
    cx, top_y = corner
    h = top_y - y_floor
    if not 0.0 < h < r:
        return None
    # centre when the disk touches the corner: |c − corner| = r at height y0
    dx = math.sqrt(r * r - (r - h) ** 2)
    x_hit = cx - direction * dx
    if (x_hit - x0) * direction < 0.0:
        return None
    t_hit = (x_hit - x0) / vx
    ratio = 1.0 - m * r * h / (J + m * r * r)
    omega_minus = wheel.angular_velocity
    omega_plus = ratio * omega_minus
    # centre velocity after: rotation about the corner, ω⁺ × (c − corner)
    rel = (x_hit - corner[0], y0 - corner[1])
    v_plus = (-omega_plus * rel[1], omega_plus * rel[0])
    impulse = (m * (v_plus[0] - vx), m * (v_plus[1] - 0.0))
    normal = (rel[0] / r, rel[1] / r)
    P_n = impulse[0] * normal[0] + impulse[1] * normal[1]
    P_t = abs(impulse[0] * normal[1] - impulse[1] * normal[0])
    needed = P_t / P_n if P_n > 0 else math.inf
    e_corner, mu_corner = scene.contact_params(boundary)
    if e_corner != 0.0 or mu_corner < needed or t_hit > t_end:
        return None
    name = wheel.id

    def rolling(tau: np.ndarray) -> dict[str, np.ndarray]:
        return {
            f"{name}.x": x0 + vx * tau,
            f"{name}.y": np.full_like(tau, y0),
            f"{name}.vx": np.full_like(tau, vx),
            f"{name}.vy": np.zeros_like(tau),
            f"{name}.omega": np.full_like(tau, omega_minus),
        }

    def after(tau: np.ndarray) -> dict[str, np.ndarray]:
        # only the instant after the impact is closed-form (then a pendulum about the corner)
        return {
            f"{name}.x": np.full_like(tau, x_hit),
            f"{name}.y": np.full_like(tau, y0),
            f"{name}.vx": np.full_like(tau, v_plus[0]),
            f"{name}.vy": np.full_like(tau, v_plus[1]),
            f"{name}.omega": np.full_like(tau, omega_plus),
        }

    return Reference(
        name="curb",
        title=f"wheel onto a step: ω⁺/ω⁻ = 1 − m r h/(J + m r²) = {ratio:.6g}",
        source="derived (not in the papers): plastic impact about the corner, "
        "angular momentum about it kept",
        conditions=(
            "a wheel rolling without slip on a horizontal floor towards a step 0 < h < r",
            "restitution 0 at the corner, friction at least "
            f"{needed:.4g} (the impulse's tangential/normal ratio); "
            "1 − 2h/(3r) when J = m r²/2",
            "valid up to the instant after the impact",
        ),
        columns=(f"{name}.x", f"{name}.y", f"{name}.vx", f"{name}.vy", f"{name}.omega"),
        units=("m", "m", "m/s", "m/s", "rad/s"),
        t_valid=t_hit,
        impact_times=(t_hit,),
        values={
            "speed_ratio": ratio,
            "uniform_disk_ratio": 1.0 - 2.0 * h / (3.0 * r),
            "step_height": h,
            "t_impact": t_hit,
            "omega_plus": omega_plus,
            "friction_needed": needed,
        },
        pieces=(Piece(0.0, rolling), Piece(t_hit, after)),
    )


def _incline(scene: Scene, t_end: float) -> Reference | None:
    if not _only(scene, boundaries=1, bodies=1):
        return None
    wheel, segment = scene.bodies[0], scene.boundaries[0]
    if not isinstance(wheel, Wheel) or not isinstance(segment, SegmentBoundary):
        return None
    a = np.array(segment.a, dtype=float)
    b = np.array(segment.b, dtype=float)
    length = float(np.linalg.norm(b - a))
    along = (b - a) / length
    c0 = np.array(wheel.position, dtype=float)
    s0 = float((c0 - a) @ along)
    if not 0.0 < s0 < length:
        return None
    n = np.array([-along[1], along[0]])
    if (c0 - a) @ n < 0.0:
        n = -n
    r, m, J = wheel.radius, wheel.mass, wheel.inertia
    if abs(float((c0 - a) @ n) - r) > _TOUCH * max(1.0, r):
        return None
    v0 = np.array(wheel.velocity, dtype=float)
    if abs(float(v0 @ n)) > _TOUCH * max(1.0, float(np.linalg.norm(v0))):
        return None
    gravity = np.array(scene.gravity, dtype=float)
    N = -m * float(gravity @ n)
    if N <= 0.0:
        return None
    t_dir = np.array([n[1], -n[0]])  # the tangent of the slip speed u = v·t + r ω
    g_t = float(gravity @ t_dir)
    mu = scene.contact_params(segment)[1]
    v_t0 = float(v0 @ t_dir)
    omega0 = wheel.angular_velocity
    u0 = v_t0 + r * omega0
    friction_to_roll = abs(g_t) / (1.0 / m + r * r / J)
    rolls = friction_to_roll <= mu * N
    a_roll = g_t / (1.0 + J / (m * r * r))
    name = wheel.id
    p0 = c0
    phi0 = wheel.angle

    def motion(
        s_start: float, v_start: float, w_start: float, phi_start: float, a_t: float, alpha: float
    ) -> StateFunction:
        def state(tau: np.ndarray) -> dict[str, np.ndarray]:
            s = s_start + v_start * tau + 0.5 * a_t * tau * tau
            v = v_start + a_t * tau
            centre = p0[:, None] + t_dir[:, None] * (s - 0.0)[None, :]
            return {
                f"{name}.x": centre[0],
                f"{name}.y": centre[1],
                f"{name}.phi": phi_start + w_start * tau + 0.5 * alpha * tau * tau,
                f"{name}.vx": t_dir[0] * v,
                f"{name}.vy": t_dir[1] * v,
                f"{name}.omega": w_start + alpha * tau,
            }

        return state

    def sliding(sign: float) -> tuple[float, float]:
        force = -mu * N * sign
        return g_t + force / m, force * r / J

    pieces: list[Piece] = []
    modes: list[str] = []
    t_switch = math.inf
    if abs(u0) <= _TOUCH * max(1.0, abs(v_t0)):
        if rolls:
            pieces.append(Piece(0.0, motion(0.0, v_t0, omega0, phi0, a_roll, -a_roll / r)))
            modes.append("rolling")
        else:
            a_t, alpha = sliding(math.copysign(1.0, g_t))
            pieces.append(Piece(0.0, motion(0.0, v_t0, omega0, phi0, a_t, alpha)))
            modes.append("sliding")
    else:
        sign = math.copysign(1.0, u0)
        a_t, alpha = sliding(sign)
        u_dot = a_t + r * alpha
        pieces.append(Piece(0.0, motion(0.0, v_t0, omega0, phi0, a_t, alpha)))
        modes.append("sliding")
        if u_dot * sign < 0.0:
            t_switch = -u0 / u_dot
            if t_switch < t_end:
                s1 = v_t0 * t_switch + 0.5 * a_t * t_switch**2
                v1 = v_t0 + a_t * t_switch
                w1 = omega0 + alpha * t_switch
                phi1 = phi0 + omega0 * t_switch + 0.5 * alpha * t_switch**2
                if rolls:
                    next_piece = motion(s1, v1, w1, phi1, a_roll, -a_roll / r)
                    modes.append("rolling")
                else:
                    a2, alpha2 = sliding(math.copysign(1.0, g_t))
                    next_piece = motion(s1, v1, w1, phi1, a2, alpha2)
                    modes.append("sliding")
                pieces.append(Piece(t_switch, next_piece))
    # valid while the contact point stays on the segment
    t_valid = t_end
    for piece_index, piece in enumerate(pieces):
        t_stop = pieces[piece_index + 1].t_start if piece_index + 1 < len(pieces) else t_end
        taus = np.linspace(0.0, max(t_stop - piece.t_start, 0.0), 2001)
        state = piece.state(taus)
        centre = np.stack([state[f"{name}.x"], state[f"{name}.y"]])
        s = (centre - a[:, None]).T @ along
        outside = np.nonzero((s <= 0.0) | (s >= length))[0]
        if len(outside):
            t_valid = min(t_valid, piece.t_start + float(taus[max(outside[0] - 1, 0)]))
            break
    return Reference(
        name="incline",
        title=f"wheel on an incline: {' then '.join(modes)}",
        source="Coulomb friction on a disk: rolling needs μN ≥ |g_t|/(1/m + r²/J)",
        conditions=(
            "one wheel touching one straight segment, pressed onto it by gravity",
            "velocity along the segment; valid while the contact stays on it",
        ),
        columns=(
            f"{name}.x",
            f"{name}.y",
            f"{name}.phi",
            f"{name}.vx",
            f"{name}.vy",
            f"{name}.omega",
        ),
        units=("m", "m", "rad", "m/s", "m/s", "rad/s"),
        t_valid=t_valid,
        impact_times=(),
        values={
            "rolling_acceleration": a_roll,
            "friction_to_roll": friction_to_roll,
            "normal_force": N,
            "t_roll": t_switch if rolls else math.inf,
        },
        pieces=tuple(pieces),
    )
