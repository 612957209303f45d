"""``python -m solver orbits``: a branch of periodic orbits over one scene field (docs/ORBITS.md).

    python -m solver orbits SCENE.json --vary PATH=START:STOP --out DIR
        [--period K] [--transient T] [--max-points N] [--step S] [--follow-doubling]

The branches are followed by :func:`solver.orbit_branches.follow_branches`
(pseudo-arclength from the orbit the scene reaches after T s at START, in steps
of arclength S in ``(state, parameter)``, until the parameter passes STOP or N
orbits; bifurcations located as extra rows; a grazing ends a branch with a
``grazing`` row, exit 0). A corrector that fails at the smallest step ends the
branch: the last orbit found is marked ``end`` and the reason (naming the
parameter value) goes to stderr, exit 3.
"""

from __future__ import annotations

import argparse
import csv
import math
from pathlib import Path
from typing import Any, TextIO

from solver.errors import InputError, SolverError
from solver.orbit_branches import follow_branches
from solver.orbits import PeriodicOrbit, find_orbit
from solver.scene import SceneError, load_scene
from solver.scene_paths import check_settable
from solver.system import System

DEFAULT_MAX_POINTS = 50

IMPACT_COLUMNS = ["branch", "point", "t", "body", "other", "u_n_minus", "u_n_plus"]


def add_orbits_parser(commands: Any) -> argparse.ArgumentParser:
    """Add the ``orbits`` command to ``python -m solver``'s subparsers."""
    parser = commands.add_parser(
        "orbits",
        help="follow a branch of periodic orbits of a forced bead scene, write branches.csv",
        description=(
            "Follow the periodic orbits of a harmonically forced bead scene (Newton on the "
            "stroboscopic map with the exact monodromy) along one scene field by "
            "pseudo-arclength continuation, and write DIR/branches.csv (parameter, period, "
            "impacts, stability, Floquet multipliers, state at the section; folds, period "
            "doublings and tori located as extra rows) and DIR/orbit_impacts.csv (each "
            "orbit's impacts in the period after its section). Exit 0, 2 on invalid input, "
            "3 when a Newton fails (the branch so far is written, its last point `end`)."
        ),
    )
    parser.add_argument("scene", metavar="SCENE.json", help="scene file (impactgui-scene JSON)")
    parser.add_argument("--vary", metavar="PATH=START:STOP", required=True, help="field and range")
    parser.add_argument("--out", metavar="DIR", required=True, help="directory for branches.csv")
    parser.add_argument("--period", metavar="K", default="1", help="forcing periods per orbit")
    parser.add_argument(
        "--transient", metavar="T", default="0", help="seconds simulated before the first Newton"
    )
    parser.add_argument(
        "--max-points",
        metavar="N",
        default=str(DEFAULT_MAX_POINTS),
        help="most orbits on the branch",
    )
    parser.add_argument(
        "--step",
        metavar="S",
        help="arclength step in (state, parameter) (default |STOP − START| / (N − 1))",
    )
    parser.add_argument(
        "--follow-doubling",
        action="store_true",
        help=(
            "at the first located period doubling, start the doubled branch (period 2K, "
            "branch 1) along the multiplier −1's eigenvector and follow it too"
        ),
    )
    parser.add_argument(
        "--doublings",
        metavar="D",
        default="0",
        help=(
            "follow D doubled branches in turn (a period-doubling cascade): branch d, of "
            "period 2^d K, starts at the first period doubling of branch d − 1 "
            "(--follow-doubling is --doublings 1)"
        ),
    )
    return parser


def _float(option: str, text: str, problems: list[str]) -> float | None:
    try:
        value = float(text)
    except ValueError:
        problems.append(f"{option}: not a number: {text!r}")
        return None
    if not math.isfinite(value):
        problems.append(f"{option}: must be finite, got {text!r}")
        return None
    return value


def _plan(
    args: argparse.Namespace, problems: list[str]
) -> tuple[Any, str, list[float], int, float]:
    scene = None
    if not Path(args.scene).exists():
        problems.append(f"SCENE: no such file: {args.scene}")
    else:
        try:
            scene = load_scene(Path(args.scene))
        except SceneError as error:
            problems.extend(error.problems)
    path, _, span = args.vary.partition("=")
    start_text, _, stop_text = span.partition(":")
    if not path or not stop_text:
        problems.append(f"--vary: write PATH=START:STOP, got {args.vary!r}")
        start = stop = None
    else:
        start = _float("--vary", start_text, problems)
        stop = _float("--vary", stop_text, problems)
        if scene is not None:
            try:
                check_settable(scene, path)
            except InputError as error:
                problems.append(f"--vary: {error}")
    period_f = _float("--period", args.period, problems)
    period = int(period_f) if period_f is not None and period_f == int(period_f) else 0
    if period_f is not None and period < 1:
        problems.append(f"--period: must be a whole number ≥ 1, got {args.period!r}")
    transient = _float("--transient", args.transient, problems)
    if transient is not None and transient < 0:
        problems.append(f"--transient: must be ≥ 0 s, got {args.transient!r}")
    n_f = _float("--max-points", args.max_points, problems)
    n = int(n_f) if n_f is not None and n_f == int(n_f) and n_f >= 1 else 0
    if n_f is not None and n < 1:
        problems.append(f"--max-points: must be a whole number ≥ 1, got {args.max_points!r}")
    step = 0.0
    if start is not None and stop is not None and n >= 1:
        if args.step is not None:
            given = _float("--step", args.step, problems)
            if given is not None and given <= 0.0:
                problems.append(f"--step: must be > 0, got {args.step!r}")
            step = given or 0.0
        elif n > 1:
            step = abs(stop - start) / (n - 1)
        if stop == start:
            step = 0.0
    return scene, path, (start, stop, step, n), period, transient or 0.0


MAX_DOUBLINGS = 8
"""Most doubled branches one command follows (period up to 256 K)."""


def _doublings(text: str, problems: list[str]) -> int:
    value = _float("--doublings", text, problems)
    if value is None:
        return 0
    if not (math.isfinite(value) and value == int(value) and 0 <= value <= MAX_DOUBLINGS):
        problems.append(
            f"--doublings: must be a whole number from 0 to {MAX_DOUBLINGS}, got {text!r}"
        )
        return 0
    return int(value)


def _columns(system: System, path: str) -> tuple[list[str], list[int]]:
    """branches.csv header and the state index of each state column."""
    n = 2 * system.N
    head = ["branch", "point", path, "period", "n_impacts", "stable", "bifurcation"]
    for k in range(1, n + 1):
        head += [f"mu_{k}_re", f"mu_{k}_im"]
    head.append("t_section")
    order: list[int] = []
    for body_id, coord_names, rate_names in system.dof_labels:
        head += [f"{body_id}.{name}" for name in (*coord_names, *rate_names)]
    ix = [system._disk_ix[system._disk_of_body[b.id]] for b in system.scene.bodies]
    for i in ix:
        order += [i, system.N + i]
    return head, order


def _row(
    branch: int, point: int, value: float, orbit: PeriodicOrbit, mark: str, order: list[int]
) -> list[str]:
    row = [str(branch), str(point), repr(value), str(orbit.period), str(len(orbit.contacts))]
    row += ["1" if orbit.stable else "0", mark]
    for mu in orbit.multipliers:
        row += [repr(float(mu.real)), repr(float(mu.imag))]
    row.append(repr(orbit.t_section))
    row += [repr(float(orbit.state[i])) for i in order]
    return row


def run_orbits_command(args: argparse.Namespace, stderr: TextIO) -> int:
    """``orbits`` with parsed arguments; returns the exit status (0, 2 or 3)."""
    problems: list[str] = []
    scene, path, (p_start, p_stop, h, n_max), period, transient = _plan(args, problems)
    doublings = _doublings(args.doublings, problems)
    out_dir = Path(args.out)
    if out_dir.exists() and not out_dir.is_dir():
        problems.append(f"--out: not a directory: {args.out}")
    if not problems:
        try:
            find_orbit(scene, period=period, max_steps=0, transient=0.0)
        except InputError as error:
            problems.append(str(error))
        except SolverError:
            pass  # the inputs are fine; Newton has not run yet
    if problems:
        for line in problems:
            print(line, file=stderr)
        return 2
    followed = follow_branches(
        scene,
        path,
        p_start,
        p_stop,
        h,
        n_max,
        period=period,
        transient=transient,
        follow_doubling=args.follow_doubling,
        doublings=doublings,
    )
    M = System(scene).M
    orbits = [
        (b, k, value, orbit, mark or ("end" if k == len(f.rows) - 1 else ""))
        for b, f in enumerate(followed)
        for k, (value, orbit, mark) in enumerate(f.rows)
    ]
    failure = "; ".join(f.failure for f in followed if f.failure)
    note = "\n".join(f.note for f in followed if f.note)
    out_dir.mkdir(parents=True, exist_ok=True)
    head, order = _columns(System(scene), path)
    with open(out_dir / "branches.csv", "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(head)
        for b, point, value, orbit, mark in orbits:
            writer.writerow(_row(b, point, value, orbit, mark, order))
    with open(out_dir / "orbit_impacts.csv", "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(IMPACT_COLUMNS)
        for b, point, _value, orbit, _mark in orbits:
            for impact in orbit.contacts:
                u_minus, u_plus = impact.normal_velocities(M)
                t = orbit.t_section + impact.t
                writer.writerow(
                    [
                        str(b),
                        str(point),
                        repr(t),
                        impact.body,
                        impact.other,
                        repr(u_minus),
                        repr(u_plus),
                    ]
                )
    if note:
        print(note, file=stderr)
    if failure:
        print(f"solver failed: {failure}", file=stderr)
        return 3
    return 0
