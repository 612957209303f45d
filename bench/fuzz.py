"""Fuzz the scene loader, the command line and the impact laws (outside CI; minutes to hours).

    .venv/bin/python bench/fuzz.py [--scenes 10000] [--impacts 10000] [--seed 0]

Scenes: after a warm-up (each bundled scene run briefly with both methods,
so that compiling the ``fast`` extra's kernels is not counted against the
first scene that uses them), each bundled scene is mutated (wrong types, magnitudes from 1e-308 to
1e308, deep nesting, huge lists and strings, degenerate geometry, tiny time
steps, unknown keys) and run through ``python -m solver run`` in this process;
every run must end with exit 0, 2 or 3, write finite numbers, and keep making
progress in simulated time. A run is cut after ``--scene-wall`` seconds of
this process's CPU time (not wall time: the machine may be shared); it is
counted as a hang when its simulated time did not advance by more than
``solver.simulation.PROGRESS_REL`` of itself in the last ``--stall`` CPU
seconds before the cut (a run that creeps on by a few ulps a phase is a hang
too), else as "cut while progressing" (printed with its index, to replay it).
Cumulative counts are printed every ``--report-every`` scenes.

Impacts: random problems (N <= 6, n <= 6; coupled tangents, mass matrices of
condition up to 1e12, duplicated and dependent columns, sparse G with a
diagonal M, scalar or per-constraint e, with and without friction) through
``resolve_impact`` with every law. Each call must return finite numbers or
raise ``SolverError``, not gain kinetic energy when ``e`` is one number
<= 1 (tolerance ``1e-9 T⁻`` plus the round-off ``10 ε cond(M) T⁻``), and end
within ``TIME_BUDGET_S`` of the calling thread's CPU time, the budget's own
clock (a call over 1.25 times it counts as over budget; one cut after
``HANG_CPU_S`` of CPU time counts as a hang). Wall time would count the
time other programs had the processor.

Prints the counts and timing percentiles at the end.
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import math
import re
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from solver import cli
from solver import simulation as simulation_module
from solver.errors import SolverError
from solver.impact import IMPACT_LAWS, TIME_BUDGET_S, resolve_impact
from solver.record import csv_set_problems

SCENES = sorted((Path(__file__).resolve().parents[1] / "resources" / "scenes").glob("*.json"))
ODD_VALUES = [
    None,
    True,
    "x",
    "\ud800",
    [],
    {},
    [1, 2, 3],
    0,
    -1,
    1e308,
    -1e308,
    1e-308,
    5e-324,
    1e12,
    -1e12,
    1e-12,
    10**400,
    float("nan"),
    float("inf"),
]


HANG_CPU_S = 30.0
"""CPU time (s) after which a call of an impact law is cut and counted as a hang."""


class Cut(BaseException):
    """Raised by the alarm: the run took longer than the bench allows."""


STOP = {"asked": False}
"""Set by SIGTERM/SIGINT: the loops end after the current case and print their counts."""


def _on_stop(signum, frame):
    STOP["asked"] = True


def _on_alarm(signum, frame):
    raise Cut


# ----------------------------------------------------------------------- scenes


def _leaves(node, path=()):
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _leaves(value, (*path, index))
    if path:
        yield path


def _get(node, path):
    for part in path:
        node = node[part]
    return node


def _set(node, path, value):
    _get(node, path[:-1])[path[-1]] = value


MAX_ITEMS_MADE = 20_000
"""Most entries a size mutation makes in one list (past the loader's 10 000)."""


def _mutate(data, rng):
    """One random mutation of the scene object ``data`` (in place); returns a label."""
    try:
        return _mutate_once(data, rng)
    except (TypeError, KeyError, IndexError, AttributeError):
        return "skipped"  # an earlier mutation changed the shape this one needs


def _mutate_once(data, rng):
    paths = list(_leaves(data))
    kind = rng.choice(
        ["type", "scale", "nest", "size", "degenerate", "delete", "unknown", "solver", "text"]
    )
    path = paths[rng.integers(len(paths))]
    if kind == "type":
        _set(data, path, copy.deepcopy(ODD_VALUES[rng.integers(len(ODD_VALUES))]))
    elif kind == "scale":
        numbers = [
            p
            for p in paths
            if isinstance(_get(data, p), (int, float)) and not isinstance(_get(data, p), bool)
        ]
        if numbers:
            p = numbers[rng.integers(len(numbers))]
            try:
                base = float(_get(data, p) or 1.0)
            except OverflowError:  # an int past the floats, put there by an earlier mutation
                base = math.inf
            _set(data, p, base * 10.0 ** rng.integers(-320, 308))
    elif kind == "nest":
        depth = int(10 ** rng.uniform(0.5, 5.5))
        value = 1.0
        for _ in range(min(depth, 200)):
            value = [value] if rng.random() < 0.5 else {"k": value}
        _set(data, path, value if depth <= 200 else f"__DEEP__{depth}")
    elif kind == "size":
        section = rng.choice(["bodies", "boundaries", "springs"])
        items = data.get(section) or []
        if isinstance(items, list) and items:
            times = min(int(10 ** rng.uniform(1, 4.3)), MAX_ITEMS_MADE // len(items))
            data[section] = items * max(times, 1)
        else:
            data["title"] = "t" * int(10 ** rng.uniform(3, 7))
    elif kind == "degenerate":
        bodies, boundaries = data.get("bodies") or [], data.get("boundaries") or []
        if boundaries and rng.random() < 0.5:
            b = boundaries[rng.integers(len(boundaries))]
            if "a" in b:
                b["b"] = list(b["a"])
            elif "points" in b:
                b["points"] = [b["points"][0]] * len(b["points"])
            elif "radius" in b:
                b["radius"] = 0.0 if rng.random() < 0.5 else 1e-300
        elif len(bodies) >= 2:
            same_place = {k: bodies[0][k] for k in ("position", "x") if k in bodies[0]}
            bodies[1] = {**bodies[1], **same_place}
        elif bodies:
            bodies[0]["radius"] = float(10.0 ** rng.uniform(-12, 7))
    elif kind == "delete" and len(path) >= 1:
        parent = _get(data, path[:-1])
        if isinstance(parent, dict):
            del parent[path[-1]]
    elif kind == "unknown":
        data[f"extra{rng.integers(9)}"] = 1
    elif kind == "solver":
        solver = data.setdefault("solver", {})
        key = rng.choice(["dt", "dt_out", "t_end", "method", "rtol", "atol"])
        if key == "method":
            solver[key] = rng.choice(["event-driven", "time-stepping", "rk4"])
        else:
            solver[key] = float(10.0 ** rng.uniform(-14, 7))
    else:
        data["title"] = rng.choice(["\ud800", "é" * 100, "\x00", ""])
    return kind


DEEP_TEXT_BUDGET = 32 * 2**20
"""Most characters the deep-nesting markers of one scene expand to (past the 16 MiB limit)."""


def _scene_text(data) -> str:
    """The scene as JSON text, each ``__DEEP__n`` marker expanded to ``n`` nested lists.

    One pass over the text: a size mutation may copy a marker thousands of times,
    and expanding them one by one was quadratic (minutes for one scene). Past
    ``DEEP_TEXT_BUDGET`` characters, further markers become ``1``.
    """
    budget = [DEEP_TEXT_BUDGET]

    def expand(match: re.Match) -> str:
        depth = int(match.group(1))
        if 2 * depth + 1 > budget[0]:
            return "1"
        budget[0] -= 2 * depth + 1
        return "[" * depth + "1" + "]" * depth

    return re.sub(r'"__DEEP__(\d+)"', expand, json.dumps(data, ensure_ascii=True))


class _Progress:
    """Wraps Watchdog.check to know when the run last advanced in simulated time."""

    def __init__(self) -> None:
        self.t = -math.inf
        self.at = time.process_time()
        original = simulation_module.Watchdog.check
        progress = self

        def check(watchdog, t):
            progress.note(t)
            return original(watchdog, t)

        simulation_module.Watchdog.check = check

    def note(self, t: float) -> None:
        """Note simulated time ``t`` (s): progress when it passed the last as the watchdog asks.

        By more than ``solver.simulation.PROGRESS_REL`` of it (at least 1 s): seed
        2026's stiff plastic pair (scene 2698) crept on by 1.6e-14 s a phase.
        """
        least = simulation_module.PROGRESS_REL * max(1.0, abs(self.t))
        floor = self.t + least if math.isfinite(self.t) else -math.inf
        if t > floor:
            self.t, self.at = t, time.process_time()


def _print_scene_report(report: dict, done: int, seconds: float) -> None:
    print(f"== {done} mutated scenes ({seconds:.0f} s), {len(report['durations'])} run here")
    for key, value in sorted(report["outcomes"].items()):
        print(f"  {key}: {value}")
    print(f"  mutations: { {str(k): v for k, v in report['kinds'].items()} }")
    print(f"  CPU time per run: {_percentiles(report['durations'])}")
    for line in report["problems"][:30]:
        print("  !", line)
    sys.stdout.flush()


def _warm_up(tmp: Path) -> None:
    """Run each bundled scene for a moment with both methods, outside the counts.

    The first time-stepping run of an installation compiles the ``fast``
    extra's kernels (numba; 10–20 s of CPU, then cached on disk): the first
    mutated time-stepping scene would otherwise be cut as a "hang" while
    the compiler, not the scene, runs.
    """
    for path in SCENES:
        data = json.loads(path.read_text(encoding="utf-8"))
        for method in ("event-driven", "time-stepping"):
            data["solver"] = {**data.get("solver", {}), "method": method, "t_end": 0.01}
            scene_path = tmp / "warm.json"
            scene_path.write_text(json.dumps(data), encoding="utf-8")
            cli.main(["run", str(scene_path), "--out", str(tmp / "warm")], stderr=io.StringIO())


def fuzz_scenes(
    count: int, seed: int, wall: float, stall: float, every: int, first: int = 0
) -> dict:
    """Scenes ``first`` .. ``count - 1`` of the seed's sequence (those before: drawn, not run)."""
    rng = np.random.default_rng(seed)
    bases = [json.loads(path.read_text(encoding="utf-8")) for path in SCENES]
    outcomes: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    problems: list[str] = []
    progress = _Progress()
    durations: list[float] = []
    report = {"outcomes": outcomes, "kinds": kinds, "problems": problems, "durations": durations}
    signal.signal(signal.SIGPROF, _on_alarm)
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        _warm_up(Path(tmp))
        scene_path = Path(tmp) / "scene.json"
        for k in range(count):
            data = copy.deepcopy(bases[rng.integers(len(bases))])
            labels = [_mutate(data, rng) for _ in range(rng.integers(1, 4))]
            if k < first:
                continue  # drawn only, so that scene k is the same whatever the start
            if STOP["asked"]:
                print(f"== stopped before scene {k}: resume with --scene-start {k}")
                break
            kinds.update(labels)
            scene_path.write_text(_scene_text(data), encoding="utf-8", errors="surrogatepass")
            out_dir = Path(tmp) / f"out{k % 2}"
            for stale in out_dir.glob("*"):
                stale.unlink()
            progress.t, progress.at = -math.inf, time.process_time()
            stderr = io.StringIO()
            start = time.process_time()
            signal.setitimer(signal.ITIMER_PROF, wall)
            try:
                status = cli.main(["run", str(scene_path), "--out", str(out_dir)], stderr=stderr)
            except Cut:
                status = None
            except BaseException as error:
                status = f"crash {type(error).__name__}"
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
            durations.append(time.process_time() - start)
            if status is None:
                idle = time.process_time() - progress.at
                outcome = "hang" if idle > stall else "cut while progressing"
            elif status in (0, 2, 3):
                outcome = f"exit {status}"
                if "Traceback" in stderr.getvalue():
                    outcome = "traceback"
                elif status == 3 and not (out_dir / "trajectory.csv").exists():
                    outcome = "exit 3 before any output"
                elif status in (0, 3) and csv_set_problems(out_dir):
                    outcome = "non-finite or missing output"
            else:
                outcome = f"crash (status {status})"
            outcomes[outcome] += 1
            if outcome.startswith(
                ("hang", "cut", "traceback", "non-finite", "crash", "exit 3 before")
            ):
                problems.append(f"scene {k} {labels}: {outcome}: {stderr.getvalue()[-200:]!r}")
                print("  !", problems[-1], flush=True)
            if (k + 1) % every == 0:
                _print_scene_report(report, k + 1, time.monotonic() - started)
    return report


# ---------------------------------------------------------------------- impacts


def impact_problem(rng):
    """A random impact problem: (M, G, v, e, H, mu, law, cond)."""
    N = int(rng.integers(1, 7))
    n = int(rng.integers(1, 7))
    diagonal = rng.random() < 0.25
    if diagonal:
        M = 10.0 ** rng.uniform(-3, 3, N)
        cond = float(M.max() / M.min())
    else:
        cond = 10.0 ** rng.uniform(0, 12 if rng.random() < 0.4 else 3)
        Q, _ = np.linalg.qr(rng.normal(size=(N, N)))
        spectrum = np.exp(rng.uniform(0.0, np.log(cond), N))
        spectrum[0], spectrum[-1] = 1.0, cond
        M = Q @ np.diag(spectrum) @ Q.T
        M = 0.5 * (M + M.T)
    G = rng.normal(size=(N, n))
    if n > 1 and rng.random() < 0.3:
        G[:, -1] = G[:, 0] * rng.uniform(0.5, 2.0)  # duplicated (scaled) column
    if n > 2 and rng.random() < 0.2:
        G[:, -2] = G[:, 0] - G[:, 1]  # dependent column
    if rng.random() < 0.3:
        G[rng.random(G.shape) < 0.5] = 0.0
        for j in np.flatnonzero(~G.any(axis=0)):
            G[rng.integers(N), j] = 1.0
    if diagonal and rng.random() < 0.5:
        G = sp.csc_array(G)
    friction = rng.random() < 0.5
    H = rng.normal(size=(N, n)) if friction else None  # coupled to the normals in general
    mu = rng.uniform(0.0, 1.0, n) if friction else None
    scalar_e = rng.random() < 0.7
    e = float(rng.choice([0.0, 1.0, rng.uniform()])) if scalar_e else rng.uniform(0.0, 1.0, n)
    v = rng.normal(size=N) * 10.0 ** rng.uniform(-3, 3)
    law = str(rng.choice(IMPACT_LAWS))
    return M, G, v, e, H, mu, law, cond


def fuzz_impacts(count: int, seed: int, first: int = 0, every: int = 0) -> dict:
    """Problems ``first`` .. ``count - 1`` of the seed's sequence (those before: drawn only)."""
    rng = np.random.default_rng(seed)
    outcomes: Counter[str] = Counter()
    problems: list[str] = []
    durations = []
    eps = np.finfo(float).eps
    signal.signal(signal.SIGPROF, _on_alarm)
    for k in range(count):
        M, G, v, e, H, mu, law, cond = impact_problem(rng)
        if k < first:
            continue
        if STOP["asked"]:
            print(f"== stopped before impact problem {k}: resume with --impact-start {k}")
            break
        if every and k > first and k % every == 0:
            print(f"== impact problems {first}..{k - 1}: {dict(outcomes)}", flush=True)
            print(f"  CPU time per call: {_percentiles(durations)}", flush=True)
        Md = np.diag(M) if M.ndim == 1 else M
        kinetic = 0.5 * v @ Md @ v
        start = time.thread_time()
        signal.setitimer(signal.ITIMER_PROF, HANG_CPU_S)
        try:
            result = resolve_impact(M, G, v, e, law, H=H, friction=mu)
            outcome = "answer"
        except SolverError as error:
            result, outcome = None, "SolverError"
            outcomes[f"SolverError: {str(error)[:48]}"] += 1
        except Cut:
            result, outcome = None, "hang"
        except Exception as error:
            result, outcome = None, f"crash {type(error).__name__}: {error}"
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        elapsed = time.thread_time() - start
        durations.append(elapsed)
        outcomes[outcome if not outcome.startswith("crash") else "crash"] += 1
        if elapsed > 1.25 * TIME_BUDGET_S:
            outcomes["over budget"] += 1
            problems.append(f"impact {k} ({law}): {elapsed:.2f} s")
        if outcome.startswith(("crash", "hang")):
            problems.append(f"impact {k} ({law}): {outcome}")
            print("  !", problems[-1], flush=True)
        if result is None:
            continue
        finite = np.all(np.isfinite(result.v_plus)) and np.all(np.isfinite(result.impulse))
        if not finite:
            outcomes["non-finite"] += 1
            problems.append(f"impact {k} ({law}): non-finite")
        tolerance = (1e-9 + 10 * eps * cond) * kinetic
        if result.energy_change > tolerance:
            if np.ndim(e) == 0:
                outcomes["energy gain (scalar e)"] += 1
                problems.append(
                    f"impact {k} ({law}, e={e:.3g}, friction={H is not None}): "
                    f"gain {result.energy_change / kinetic:.3g} of T-"
                )
            else:
                outcomes["energy gain (per-constraint e)"] += 1
                if not result.gains_energy:
                    outcomes["silent energy gain"] += 1
                    problems.append(f"impact {k} ({law}): energy gain not flagged")
        if result.note:
            outcomes["note: " + result.note.split(":")[0][:40]] += 1
    return {"outcomes": outcomes, "problems": problems, "durations": durations}


def _percentiles(durations) -> str:
    d = np.asarray(durations)
    if d.size == 0:
        return "-"
    p50, p99 = np.percentile(d, [50, 99])
    return f"p50 {p50 * 1e3:.1f} ms, p99 {p99 * 1e3:.1f} ms, max {d.max():.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=10_000)
    parser.add_argument("--impacts", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scene-wall", type=float, default=20.0)
    parser.add_argument("--stall", type=float, default=10.0)
    parser.add_argument("--report-every", type=int, default=250)
    parser.add_argument("--scene-start", type=int, default=0, help="resume at this scene")
    parser.add_argument("--impact-start", type=int, default=0, help="resume at this problem")
    args = parser.parse_args()
    sys.setrecursionlimit(1000)
    signal.signal(signal.SIGTERM, _on_stop)
    signal.signal(signal.SIGINT, _on_stop)
    if args.impacts:
        t0 = time.monotonic()
        report = fuzz_impacts(args.impacts, args.seed, args.impact_start, 10 * args.report_every)
        print(f"== {len(report['durations'])} impact problems ({time.monotonic() - t0:.0f} s)")
        for key, value in sorted(report["outcomes"].items()):
            print(f"  {key}: {value}")
        print(f"  CPU time per call: {_percentiles(report['durations'])}")
        for line in report["problems"][:30]:
            print("  !", line)
        sys.stdout.flush()
    if args.scenes:
        t0 = time.monotonic()
        report = fuzz_scenes(
            args.scenes,
            args.seed,
            args.scene_wall,
            args.stall,
            args.report_every,
            args.scene_start,
        )
        _print_scene_report(report, len(report["durations"]), time.monotonic() - t0)


if __name__ == "__main__":
    main()
