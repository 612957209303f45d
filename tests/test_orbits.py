"""Periodic orbits of the linear impact oscillator against closed forms written here.

The oscillator: ``m ẍ + c ẋ + k x = F sin(ω t)``, one rigid stop at ``x = s``
(the bead's centre; the stop's segment lies one radius further) and Newton's
law ``v⁺ = −e v⁻``.
"""

import math

import numpy as np
import pytest
import scipy.linalg

from solver.errors import InputError, SolverError
from solver.orbit_monodromy import monodromy
from solver.orbits import find_orbit, run_map
from solver.scene import parse_scene

M, C, K, F, W, E, S = 1.0, 0.1, 1.0, 1.0, 2.0, 0.8, 0.2
T = 2 * math.pi / W


def oscillator(stop=S, forcing=True, e=E, x0=0.0):
    forces = [{"body": "mass", "type": "harmonic", "amplitude": [F, 0.0], "omega": W, "phase": 0.0}]
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 2,
            "title": "linear impact oscillator",
            "view": "side",
            "gravity": [0.0, 0.0],
            "contact": {"restitution": e, "friction": 0.0, "impact_law": "newton"},
            "boundaries": [
                {"id": "stop", "type": "segment", "a": [stop + 0.05, -0.2], "b": [stop + 0.05, 0.2]}
            ],
            "bodies": [
                {
                    "id": "mass",
                    "type": "bead",
                    "rail_y": 0.0,
                    "mass": M,
                    "radius": 0.05,
                    "x": x0,
                    "vx": 0.0,
                }
            ],
            "springs": [
                {
                    "a": "mass",
                    "anchor": [0.0, 0.0],
                    "stiffness": K,
                    "rest_length": 0.0,
                    "damping": C,
                }
            ],
            "forces": forces if forcing else [],
            "impulses": [],
            "solver": {"method": "event-driven", "t_end": 10.0, "dt_out": 0.01, "dt": 0.0001},
        }
    )


def free_motion(t0, x0, v0, t, W=W):
    """Closed form of m ẍ + c ẋ + k x = F sin ω t from (x0, v0) at t0: particular + homogeneous."""
    # particular x_p = a sin ωt + b cos ωt
    d = K - M * W**2
    det = d * d + (C * W) ** 2
    a, b = F * d / det, -F * C * W / det

    def xp(t):
        return a * math.sin(W * t) + b * math.cos(W * t), W * (
            a * math.cos(W * t) - b * math.sin(W * t)
        )

    zeta = C / (2 * M)
    wd = math.sqrt(K / M - zeta**2)
    p0, pv0 = xp(t0)
    A, dA = x0 - p0, v0 - pv0  # homogeneous part's initial values
    B = (dA + zeta * A) / wd
    s = t - t0
    decay = math.exp(-zeta * s)
    xh = decay * (A * math.cos(wd * s) + B * math.sin(wd * s))
    vh = -zeta * xh + decay * wd * (-A * math.sin(wd * s) + B * math.cos(wd * s))
    p, pv = xp(t)
    return xh + p, vh + pv


@pytest.fixture(scope="module")
def orbit():
    return find_orbit(oscillator(), transient=100.0)


def test_period_one_orbit_satisfies_closed_form_periodicity(orbit):
    assert len(orbit.impacts) == 1
    impact = orbit.impacts[0]
    t_star, v_minus = impact.t, float(impact.v_minus[0])
    assert v_minus > 0.0 and impact.q[0] == pytest.approx(S, abs=1e-12)
    # from the stop at t*, leaving at −e v⁻, the free motion is back at the stop after T with v⁻
    x_end, v_end = free_motion(t_star, S, -E * v_minus, t_star + T)
    assert abs(x_end - S) < 1e-10
    assert abs(v_end - v_minus) < 1e-10
    # and the section state is that free motion at the section time (t = 0 ≡ T)
    x_sec, v_sec = free_motion(t_star, S, -E * v_minus, T)
    assert np.allclose(orbit.state, [x_sec, v_sec], rtol=0, atol=1e-10)
    # free flight stays off the stop between impacts
    xs = [
        free_motion(t_star, S, -E * v_minus, t_star + T * f)[0] for f in np.linspace(0.01, 0.99, 99)
    ]
    assert max(xs) < S


def closed_form_monodromy(t_star, v_minus, W=W):
    T = 2 * math.pi / W
    A = np.array([[0.0, 1.0], [-K / M, -C / M]])
    v_plus = -E * v_minus
    a_minus = (F * math.sin(W * t_star) - C * v_minus - K * S) / M
    a_plus = (F * math.sin(W * t_star) - C * v_plus - K * S) / M
    saltation = np.array([[-E, 0.0], [(a_plus + E * a_minus) / v_minus, -E]])
    return scipy.linalg.expm(A * (T - t_star)) @ saltation @ scipy.linalg.expm(A * t_star)


def test_multipliers_match_closed_form_monodromy(orbit):
    impact = orbit.impacts[0]
    expected = closed_form_monodromy(impact.t, float(impact.v_minus[0]))
    assert np.allclose(orbit.monodromy, expected, rtol=0, atol=1e-8)
    mu = np.sort_complex(np.linalg.eigvals(expected))
    assert np.allclose(np.sort_complex(orbit.multipliers), mu, rtol=0, atol=1e-8)
    # determinant: e² times the flow's e^(−c T / m) (Liouville; the saltation's det is e²)
    assert np.prod(orbit.multipliers).real == pytest.approx(E**2 * math.exp(-C * T / M), abs=1e-10)


def test_monodromy_matches_finite_differences_of_the_simulation(orbit):
    scene = oscillator()
    h = 1e-6
    columns = []
    for j in range(2):
        dz = np.zeros(2)
        dz[j] = h
        plus = run_map(scene, orbit.state + dz, T).z_end
        minus = run_map(scene, orbit.state - dz, T).z_end
        columns.append((plus - minus) / (2 * h))
    fd = np.column_stack(columns)
    assert np.allclose(orbit.monodromy, fd, rtol=0, atol=1e-5)
    mu_fd = np.sort_complex(np.linalg.eigvals(fd))
    assert np.allclose(np.sort_complex(orbit.multipliers), mu_fd, rtol=0, atol=1e-5)


def test_monodromy_without_impact_positions_propagates_the_closed_form(orbit):
    impacts = [type(i)(t=i.t, v_minus=i.v_minus, v_plus=i.v_plus) for i in orbit.impacts]
    again = monodromy(oscillator(), orbit.state, impacts, T)
    assert np.allclose(again, orbit.monodromy, rtol=0, atol=1e-10)


def test_stable_orbit_attracts_a_nearby_simulation(orbit):
    assert orbit.stable and np.all(np.abs(orbit.multipliers) < 1.0)
    scene = oscillator()
    z = orbit.state + np.array([1e-3, -2e-3])
    start = float(np.max(np.abs(z - orbit.state)))
    for _ in range(80):
        z = run_map(scene, z, T).z_end
    rho = float(np.max(np.abs(orbit.multipliers)))
    assert np.max(np.abs(z - orbit.state)) < 1e-7 < start
    assert rho**80 < 1e-7  # the decay the multipliers promise


def test_newton_from_a_given_state_finds_the_same_orbit(orbit):
    again = find_orbit(oscillator(), orbit.state + np.array([1e-4, 1e-4]))
    assert np.allclose(again.state, orbit.state, rtol=0, atol=1e-10)
    assert again.iterations >= 1


def test_section_off_the_clock_origin_gives_the_same_multipliers(orbit):
    shifted = find_orbit(oscillator(), transient=100.0, t_section=0.3)
    assert np.allclose(
        np.sort_complex(shifted.multipliers), np.sort_complex(orbit.multipliers), rtol=0, atol=1e-8
    )
    x, v = free_motion(orbit.impacts[0].t, S, -E * float(orbit.impacts[0].v_minus[0]), T + 0.3)
    assert np.allclose(shifted.state, [x, v], rtol=0, atol=1e-10)


def test_scene_without_harmonic_forcing_is_refused():
    with pytest.raises(InputError, match="harmonic"):
        find_orbit(oscillator(forcing=False))


def test_unforced_scene_with_a_period_in_seconds_finds_the_rest_state():
    period = 1.7
    orbit = find_orbit(oscillator(forcing=False), np.array([0.05, 0.0]), period_s=period)
    assert np.allclose(orbit.state, [0.0, 0.0], atol=1e-12)
    A = np.array([[0.0, 1.0], [-K / M, -C / M]])
    mu = np.linalg.eigvals(scipy.linalg.expm(A * period))
    assert np.allclose(np.sort_complex(orbit.multipliers), np.sort_complex(mu), atol=1e-12)


def test_newton_that_does_not_converge_names_the_parameter_value():
    with pytest.raises(SolverError, match=r"forces\[0\]\.omega = 2.*did not converge in 1 steps"):
        find_orbit(oscillator(), np.array([-1.0, 3.0]), max_steps=1, label="forces[0].omega = 2")


@pytest.mark.parametrize("bad", [0, -1, 1.5])
def test_bad_period_count_is_refused(bad):
    with pytest.raises(InputError, match="`period`"):
        find_orbit(oscillator(), period=bad)


def _cli(tmp_path, scene, *args):
    import io
    import json

    from solver.cli import main
    from solver.scene import scene_to_dict

    path = tmp_path / "scene.json"
    path.write_text(json.dumps(scene_to_dict(scene)))
    err = io.StringIO()
    code = main(["orbits", str(path), "--out", str(tmp_path / "out"), *args], stderr=err)
    return code, err.getvalue()


def test_cli_branch_rows_obey_liouville_and_periodicity(tmp_path):
    import csv

    code, err = _cli(
        tmp_path,
        oscillator(),
        "--vary",
        "forces[0].omega=2:2.1",
        "--max-points",
        "3",
        "--transient",
        "100",
    )
    assert code == 0, err
    rows = list(csv.DictReader(open(tmp_path / "out" / "branches.csv")))
    omegas = [float(r["forces[0].omega"]) for r in rows]
    assert len(rows) == 3 and omegas[0] == 2.0 and omegas[0] < omegas[1] < omegas[2]
    assert [r["bifurcation"] for r in rows] == ["", "", "end"]
    for r in rows:
        w = float(r["forces[0].omega"])
        mu = complex(float(r["mu_1_re"]), float(r["mu_1_im"])) * complex(
            float(r["mu_2_re"]), float(r["mu_2_im"])
        )
        # one impact per period: det = e² exp(−c T / m), T = 2π/ω
        assert r["n_impacts"] == "1"
        assert mu.real == pytest.approx(E**2 * math.exp(-C * 2 * math.pi / w / M), abs=1e-10)
        assert r["stable"] == (
            "1" if abs(complex(float(r["mu_1_re"]), float(r["mu_1_im"]))) < 1 else "0"
        )


def test_cli_refuses_an_unforced_scene_and_a_bad_range(tmp_path):
    code, err = _cli(tmp_path, oscillator(forcing=False), "--vary", "springs[0].stiffness=1:2")
    assert code == 2 and "harmonic" in err
    code, err = _cli(tmp_path, oscillator(), "--vary", "springs[0].stiffness=1")
    assert code == 2 and "--vary" in err


def closed_form_orbit(w, t_guess, v_guess):
    """(t*, v⁻) of the period-1 orbit at ω = w from the periodicity conditions (scipy root)."""
    from scipy.optimize import root

    def conditions(u):
        t_star, v_minus = u
        x, v = free_motion(t_star, S, -E * v_minus, t_star + 2 * math.pi / w, W=w)
        return [x - S, v - v_minus]

    solution = root(conditions, [t_guess, v_guess], tol=1e-14).x
    assert np.max(np.abs(conditions(solution))) < 1e-12
    return solution


def test_cli_locates_the_period_doubling_where_the_closed_form_multiplier_is_minus_one(tmp_path):
    import csv

    args = ("--vary", "forces[0].omega=1.15:1.1", "--step", "0.01", "--transient", "100")
    code, err = _cli(tmp_path, oscillator(), *args, "--max-points", "6")
    assert code == 0, err
    rows = list(csv.DictReader(open(tmp_path / "out" / "branches.csv")))
    marks = [r["bifurcation"] for r in rows]
    assert marks.count("period_doubling") == 1 and marks[-1] == "end"
    k = marks.index("period_doubling")
    p = float(rows[k]["forces[0].omega"])
    impact = [i for i in csv.DictReader(open(tmp_path / "out" / "orbit_impacts.csv"))][k]
    t_guess, v_guess = float(impact["t"]), -float(impact["u_n_minus"])
    signs = []
    for w in (p - 2e-8, p + 2e-8):
        t_star, v_minus = closed_form_orbit(w, t_guess, v_guess)
        phi = closed_form_monodromy(t_star, v_minus, W=w)
        signs.append(np.sign(np.linalg.det(phi + np.eye(2))))
    assert signs[0] == -signs[1]  # a multiplier crosses −1 within 2e-8 of the reported ω
    mu = complex(float(rows[k]["mu_1_re"]), float(rows[k]["mu_1_im"]))
    assert abs(mu + 1) < 1e-6
    assert float(rows[k - 1]["mu_1_re"]) > -1 > float(rows[k + 1]["mu_1_re"])


def grazing_omega():
    """ω where the free forced motion's amplitude F / √((k − mω²)² + (cω)²) equals the stop's S.

    A quadratic in ω²: m² ω⁴ + (c² − 2 k m) ω² + k² − (F/S)² = 0, the root above resonance.
    """
    a, b, c = M**2, C**2 - 2 * K * M, K**2 - (F / S) ** 2
    return math.sqrt((-b + math.sqrt(b * b - 4 * a * c)) / (2 * a))


def test_grazing_where_the_impact_speed_vanishes_is_the_free_motion_touching_the_stop():
    from solver.orbit_bifurcations import locate_grazing
    from solver.orbit_continuation import Branch
    from solver.scene_paths import with_values

    w_g = grazing_omega()
    assert 2.44 < w_g < 2.45
    w = 2.44  # on the unstable one-impact branch, just below the grazing
    t_star, v_minus = closed_form_orbit(w, 1.9, 0.01)
    assert 0 < v_minus < 0.02
    period = 2 * math.pi / w
    z = free_motion(t_star, S, -E * v_minus, period, W=w)
    path = "forces[0].omega"
    orbit = find_orbit(with_values(oscillator(), {path: w}), np.array(z))
    assert len(orbit.impacts) == 1 and not orbit.stable
    found = locate_grazing(Branch(oscillator(), path), w, orbit, np.eye(1), direction=1, step=1e-3)
    assert found is not None and found.how == "impact" and found.speed < 1e-4
    assert abs(found.p - w_g) < 1e-9
    # the state at the section is the free periodic motion's (amplitude S) there, to 1e-6
    d = K - M * w_g**2
    a, b = F * d / (d * d + (C * w_g) ** 2), -F * C * w_g / (d * d + (C * w_g) ** 2)
    x_free, v_free = b, w_g * a  # x_p(0) = b, ẋ_p(0) = ω a (x_p = a sin ωt + b cos ωt)
    assert math.hypot(a, b) == pytest.approx(S, abs=1e-12)
    assert np.allclose(found.orbit.state, [x_free, v_free], rtol=0, atol=1e-6)


def test_fixed_parameter_newton_refuses_the_orbit_behind_the_stop(orbit):
    """An orbit with as many impacts on the stop's far side is no continuation of the orbit.

    At ω = 2 the oscillator has two one-impact orbits: the branch's, the bead in front
    of the stop hitting it moving right (x < S, u⁻ > 0), and one behind it (x > S + 2r,
    hitting it moving left). Newton at the fixed parameter from a state in front of the
    stop (x = 0.177 < S) used to take a step behind the stop and converge there, accepted
    because only the impact count was compared. Now the impacts' sides are compared too
    (``same_events``): that step is halved and Newton finds the branch's orbit; from the
    far orbit itself it finds none.
    """
    from solver.orbit_continuation import Branch

    branch = Branch(oscillator(), "forces[0].omega")
    behind = find_orbit(oscillator(x0=0.5), transient=100.0)
    assert len(behind.impacts) == len(orbit.impacts) == 1
    assert behind.state[0] > S + 0.1 and behind.impacts[0].v_minus[0] < 0  # from behind
    assert orbit.state[0] < S and orbit.impacts[0].v_minus[0] > 0  # the branch's, from the front
    found = branch.orbit_at(W, np.array([0.177, 1.266]), orbit.impacts)
    assert found.impacts[0].v_minus[0] > 0
    assert np.allclose(found.state, orbit.state, rtol=0, atol=1e-10)
    with pytest.raises(SolverError, match="no orbit with 1 impacts"):
        branch.orbit_at(W, behind.state, orbit.impacts)


def test_same_events_compares_contacts_and_sides_not_only_the_count():
    from solver.orbit_monodromy import Impact
    from solver.orbits import same_events

    def hit(v_minus, v_plus, other="stop", body="a", captured=False):
        return Impact(0.0, np.array(v_minus), np.array(v_plus), body=body, other=other,
                      captured=captured)  # fmt: skip

    front = [hit([3.0], [-2.4])]
    assert same_events([hit([0.5], [-0.4])], front)  # another speed, the same side
    assert not same_events([hit([-1.76], [1.41])], front)  # behind the stop
    assert not same_events([hit([3.0], [-2.4], other="wall")], front)  # another stop
    assert not same_events(front + front, front)  # another count
    # two beads of equal mass: the jump is (−u, u)/2 up to round-off, its largest entry
    # either one; a swap of the beads reverses it
    pair = [hit([1.0, -1.0], [-0.8, 0.8], other="b")]
    assert same_events([hit([1.0, -1.0 - 1e-16], [-0.8, 0.8 + 1e-16], other="b")], pair)
    assert not same_events([hit([-1.0, 1.0], [0.8, -0.8], other="b")], pair)
    # a chattering sequence captured after any number of bounces is one event
    chatter = [hit([1.0], [-0.5]), hit([0.4], [-0.2]), hit([0.1], [0.0], captured=True)]
    assert same_events(chatter, [hit([0.6], [0.0], captured=True)])


def test_branch_ending_at_a_grazing_in_free_flight_is_located_against_the_closed_form(tmp_path):
    """The anchor moved towards the stop: the free flight's crest touches the stop.

    The test solves the grazing independently: the periodicity conditions of the
    one-impact orbit with the anchor ``a`` unknown, plus a crest of the free flight
    at the stop (x = S, ẋ = 0 at some t_c): four equations in (t*, v⁻, a, t_c).
    """
    import csv

    from scipy.optimize import brentq, root

    args = ("--vary", "springs[0].anchor[0]=0.5:0.6", "--step", "0.05", "--transient", "100")
    code, err = _cli(tmp_path, oscillator(), *args, "--max-points", "100")
    assert code == 0, err
    assert "grazing at springs[0].anchor[0] = 0.527" in err and "free flight" in err
    rows = list(csv.DictReader(open(tmp_path / "out" / "branches.csv")))
    impacts = list(csv.DictReader(open(tmp_path / "out" / "orbit_impacts.csv")))
    marks = [r["bifurcation"] for r in rows]
    assert marks[-1] == "grazing" and marks.count("grazing") == 1 and "end" not in marks
    a_row = float(rows[-1]["springs[0].anchor[0]"])
    t_row, u_row = float(impacts[-1]["t"]), -float(impacts[-1]["u_n_minus"])

    def flight(t_star, v_minus, a, t):  # the bead's x, ẋ in free flight after the impact
        x, v = free_motion(t_star, S - a, -E * v_minus, t)
        return x + a, v

    def crest(t_star, v_minus, a):  # the free flight's highest x: a fine grid, then ẋ = 0
        ts = t_star + T * np.linspace(0.0, 1.0, 20001)[1:-1]
        k = int(np.argmax([flight(t_star, v_minus, a, t)[0] for t in ts]))
        return brentq(lambda t: flight(t_star, v_minus, a, t)[1], ts[k - 1], ts[k + 1], xtol=1e-15)

    def conditions(u):
        t_star, v_minus, a, t_c = u
        x_end, v_end = flight(t_star, v_minus, a, t_star + T)
        x_c, v_c = flight(t_star, v_minus, a, t_c)
        return [x_end - S, v_end - v_minus, x_c - S, v_c]

    guess = [t_row, u_row, a_row, crest(t_row, u_row, a_row)]
    solution = root(conditions, guess, tol=1e-14).x
    assert np.max(np.abs(conditions(solution))) < 1e-12
    assert abs(solution[2] - a_row) < 1e-8
    # the row's orbit (one impact) crests just below the stop, on the side where it exists
    x_crest = flight(t_row, u_row, a_row, crest(t_row, u_row, a_row))[0]
    assert 0.0 <= S - x_crest < 1e-7


def test_cli_follows_the_branch_through_its_fold_to_the_grazing_where_it_ends(tmp_path):
    """Stop at 1.5 (beyond the static deflection F/k = 1): the impacting resonance bends
    to higher ω (the stop stiffens the oscillator) and folds back at ω ≈ 1.65; the
    unstable branch then comes down to the grazing above resonance (ω ≈ 1.286), where
    the free motion's amplitude is the stop's distance.

    The test finds the fold independently: the periodicity conditions G(t*, v⁻; ω) = 0
    of the one-impact orbit (closed form) and det ∂G/∂(t*, v⁻) = 0 (central differences
    of the closed form), three equations in (t*, v⁻, ω).
    """
    import csv

    from scipy.optimize import root

    stop = 1.5

    def conditions(t_star, v_minus, w):
        x, v = free_motion(t_star, stop, -E * v_minus, t_star + 2 * math.pi / w, W=w)
        return np.array([x - stop, v - v_minus])

    def fold(u):
        t_star, v_minus, w = u
        h = 1e-5
        dt = (conditions(t_star + h, v_minus, w) - conditions(t_star - h, v_minus, w)) / (2 * h)
        dv = (conditions(t_star, v_minus + h, w) - conditions(t_star, v_minus - h, w)) / (2 * h)
        return [*conditions(t_star, v_minus, w), np.linalg.det(np.column_stack([dt, dv]))]

    args = ("--vary", "forces[0].omega=1.0:1.75", "--step", "0.1", "--transient", "200")
    # from x = −4 the transient reaches the impacting orbit (from rest at ω = 1.6: the free
    # one); from ω = 1 the bisection brackets the fold widely (it stopped 4e-8 early once)
    code, err = _cli(tmp_path, oscillator(stop=stop, x0=-4.0), *args, "--max-points", "200")
    assert code == 0, err
    rows = list(csv.DictReader(open(tmp_path / "out" / "branches.csv")))
    impacts = list(csv.DictReader(open(tmp_path / "out" / "orbit_impacts.csv")))
    marks = [r["bifurcation"] for r in rows]
    assert marks.count("fold") == 1, (code, err, marks)
    k = marks.index("fold")
    w_row = float(rows[k]["forces[0].omega"])
    omegas = [float(r["forces[0].omega"]) for r in rows]
    assert omegas[k - 1] < w_row and omegas[-1] < w_row  # the branch turns back in ω
    assert rows[k - 1]["stable"] == "1" and rows[k + 1]["stable"] == "0"
    # μ − 1 goes like the arclength to the fold, ω like its square: ω is the sharp one
    assert abs(float(rows[k]["mu_1_re"]) - 1.0) < 1e-4 and float(rows[k]["mu_1_im"]) == 0.0
    guess = [float(impacts[k]["t"]), -float(impacts[k]["u_n_minus"]), w_row]
    solution = root(fold, guess, tol=1e-14).x
    assert np.max(np.abs(fold(solution))) < 1e-10
    assert abs(solution[2] - w_row) < 1e-9  # 2e-12 measured
    # the unstable branch ends at the grazing: F / √((k − mω²)² + (cω)²) = stop, ω > 1
    assert marks[-1] == "grazing" and all(r["stable"] == "0" for r in rows[k + 1 :])
    assert "an impact's speed tends to 0" in err
    a, b, c = M**2, C**2 - 2 * K * M, K**2 - (F / stop) ** 2
    w_graze = math.sqrt((-b + math.sqrt(b * b - 4 * a * c)) / (2 * a))
    assert abs(float(rows[-1]["forces[0].omega"]) - w_graze) < 1e-9  # 3e-13 measured


def test_cli_follows_the_doubled_branch_from_the_period_doubling(tmp_path):
    """--follow-doubling: branch 1 starts at the located period doubling (ω ≈ 1.13004).

    Its orbits have period 2 and two impacts (t₁, v₁), (t₂, v₂) that the test checks
    against the closed form: the free flight from the stop at t₁ leaving at −e v₁ is
    back at the stop with v₂ at t₂, and from t₂ back with v₁ at t₁ + 2T. They differ,
    by a gap that closes like √|ω − ω_PD| (a pitchfork of the twice-iterated map).
    """
    import csv

    args = ("--vary", "forces[0].omega=1.15:1.1", "--step", "0.01", "--transient", "100")
    code, err = _cli(tmp_path, oscillator(), *args, "--max-points", "6", "--follow-doubling")
    assert code == 0, err
    rows = list(csv.DictReader(open(tmp_path / "out" / "branches.csv")))
    impacts = list(csv.DictReader(open(tmp_path / "out" / "orbit_impacts.csv")))
    single = [r for r in rows if r["branch"] == "0"]
    doubled = [r for r in rows if r["branch"] == "1"]
    pd = next(r for r in single if r["bifurcation"] == "period_doubling")
    w_pd = float(pd["forces[0].omega"])
    assert len(doubled) == 7 and all(r["period"] == "2" for r in doubled)  # junction + 6
    # the junction: the period-doubling orbit itself, its multipliers squared
    junction = doubled[0]
    assert junction["forces[0].omega"] == pd["forces[0].omega"]
    assert junction["mass.x"] == pd["mass.x"] and junction["mass.vx"] == pd["mass.vx"]
    for k in (1, 2):
        mu = complex(float(pd[f"mu_{k}_re"]), float(pd[f"mu_{k}_im"])) ** 2
        assert (
            abs(complex(float(junction[f"mu_{k}_re"]), float(junction[f"mu_{k}_im"])) - mu) < 1e-8
        )
    gaps = []
    for r in doubled[1:]:
        w = float(r["forces[0].omega"])
        period = 2 * math.pi / w
        assert r["n_impacts"] == "2" and w < w_pd  # the stable side: the doubling is supercritical
        (t1, v1), (t2, v2) = [
            (float(i["t"]), -float(i["u_n_minus"]))
            for i in impacts
            if i["branch"] == "1" and i["point"] == r["point"]
        ]
        x, v = free_motion(t1, S, -E * v1, t2, W=w)
        assert abs(x - S) < 1e-10 and abs(v - v2) < 1e-10
        x, v = free_motion(t2, S, -E * v2, t1 + 2 * period, W=w)
        assert abs(x - S) < 1e-10 and abs(v - v1) < 1e-10
        gaps.append(((v1 - v2) ** 2, w_pd - w))
    assert all(g > 0 for g, _ in gaps) and gaps[0][0] < gaps[-1][0]
    ratios = [g / dw for g, dw in gaps]
    assert max(ratios) < 1.2 * min(ratios)  # (v₁ − v₂)² ∝ ω_PD − ω: a pitchfork
