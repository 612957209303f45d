"""What the compliant pairs cost: the pair list as it is against every pair in full.

Run with ``python bench/compliant_events.py``. The compliant contacts' forces,
powers and event values read the list of every compliant pair at a state
(:meth:`solver.compliance.CompliantSet._every_pair`). The baseline below is
that list as it was made before: a full :class:`~solver.geometry.DiskContact`
for every pair (the far end vertices of a floor or a stop included), made
afresh at every call. For each workload (bundled ``soft_floor_ball`` to 2 s,
bundled ``elastic_stop``, the start of the bundled Hertz cradle, one
stroboscopic map of a forced bead against a damped linear stop) the CPU time
of a run with each, in alternation, their medians' ratio, and whether the
two runs' frames and events are the same bits. Then ``soft_floor_ball`` to
t_end = 10 s, the ball at rest from 3.69 s: with the rest of the run one
piece (:mod:`solver.compliant_rest`) and integrated to the end, once each,
and the largest difference of their positions. Prints, asserts nothing.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from solver import compliant_events
from solver.compliance import CompliantSet
from solver.geometry import disk_disk_contact, disk_feature_contact
from solver.orbits import run_map
from solver.scene import parse_scene
from solver.simulation import simulate

SCENES = Path(__file__).resolve().parents[1] / "resources" / "scenes"
ROUNDS = 3


def every_pair_in_full(self: CompliantSet, q: np.ndarray, v: np.ndarray) -> list[Any]:
    """The baseline: every compliant pair's full contact, made afresh (the code before)."""
    system = self.system
    c, cd = system.centres(q), system.centre_velocities(v)
    om = system.angular_velocities(v)
    out = [
        (k, f, disk_feature_contact(feature, c[k], cd[k], system.radii[k], om[k]))
        for f, (_, feature, _) in enumerate(self.features)
        for k in range(system.n_disks)
    ]
    if self.between is not None:
        base, radii = len(self.features), system.radii
        for i in range(system.n_disks):
            for j in range(i + 1, system.n_disks):
                dc = disk_disk_contact(c[i], cd[i], radii[i], om[i], c[j], cd[j], radii[j], om[j])
                out.append((i, base + j, dc))
    return out


def bundled(name: str, t_end: float | None = None) -> Any:
    """A bundled scene, its run cut at ``t_end`` (s) if given."""
    data = json.loads((SCENES / f"{name}.json").read_text())
    if t_end is not None:
        data["solver"]["t_end"] = t_end
    return parse_scene(data)


def forced_bead() -> Any:
    """A forced, damped bead on a spring against a damped stop (tests/test_orbits_compliant.py)."""
    law = {"stiffness": 400.0, "damping": 2.0, "exponent": 1}
    spring = {"a": "mass", "anchor": [0.0, 0.0], "stiffness": 1.0, "rest_length": 0.0}
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 2,
            "gravity": [0.0, 0.0],
            "contact": {"restitution": 1.0, "friction": 0.0, "impact_law": "newton"},
            "boundaries": [
                {"id": "stop", "type": "segment", "a": [0.4, -0.5], "b": [0.4, 0.5]}
                | {"compliance": law}
            ],
            "bodies": [
                {"id": "mass", "type": "bead", "rail_y": 0.0, "mass": 1.0, "radius": 0.2}
                | {"x": 0.0, "vx": 0.0}
            ],
            "springs": [spring | {"damping": 0.1}],
            "forces": [{"body": "mass", "amplitude": [1.0, 0.0], "omega": 2.0, "phase": 0}],
            "solver": {"method": "event-driven", "t_end": 10.0, "dt_out": 0.01},
        }
    )


def run_scene(scene: Any) -> bytes:
    """Run ``scene``; the bits of its frames' states and its events' times."""
    run = simulate(scene)
    q = np.array([f.q for f in run.frames] + [f.v for f in run.frames])
    return q.tobytes() + np.array([e.t for e in run.events]).tobytes()


def orbit_map(scene: Any) -> bytes:
    """One stroboscopic map over a forcing period from a state that presses the stop."""
    run = run_map(scene, np.array([0.25, 0.6]), math.pi)
    return run.z_end.tobytes()


def main() -> None:
    """Time each workload with the pair list as it is and with the baseline, in alternation."""
    as_is = CompliantSet._every_pair
    work = [
        ("soft_floor_ball to 2 s", run_scene, bundled("soft_floor_ball", 2.0)),
        ("elastic_stop", run_scene, bundled("elastic_stop")),
        ("newton_cradle_5_hertz to 0.08 s", run_scene, bundled("newton_cradle_5_hertz", 0.08)),
        ("orbit map (forced bead, stop)", orbit_map, forced_bead()),
    ]
    print(f"{'workload':34s} {'baseline s':>11s} {'now s':>8s} {'ratio':>7s}  same bits")
    for name, job, scene in work:
        times: dict[str, list[float]] = {"baseline": [], "now": []}
        bits: dict[str, bytes] = {}
        for _ in range(ROUNDS):
            for label, method in (("baseline", every_pair_in_full), ("now", as_is)):
                CompliantSet._every_pair = method  # type: ignore[method-assign]
                start = time.process_time()
                bits[label] = job(scene)
                times[label].append(time.process_time() - start)
        CompliantSet._every_pair = as_is  # type: ignore[method-assign]
        base, now = statistics.median(times["baseline"]), statistics.median(times["now"])
        same = bits["baseline"] == bits["now"]
        print(f"{name:34s} {base:11.3f} {now:8.3f} {base / now:7.2f}  {same}")
    scene = bundled("soft_floor_ball", 10.0)
    can_rest = compliant_events.can_rest
    cpu, runs = {}, {}
    for label, rule in (("integrated", lambda compliance: False), ("rest", can_rest)):
        compliant_events.can_rest = rule
        start = time.process_time()
        runs[label] = simulate(scene)
        cpu[label] = time.process_time() - start
    compliant_events.can_rest = can_rest
    moved = max(
        float(np.abs(a.q - b.q).max())
        for a, b in zip(runs["rest"].frames, runs["integrated"].frames, strict=True)
    )
    print(
        f"soft_floor_ball to 10 s: integrated {cpu['integrated']:.2f} s, at rest one piece "
        f"{cpu['rest']:.2f} s, ratio {cpu['integrated'] / cpu['rest']:.1f}; "
        f"positions within {moved:.2g} m"
    )


if __name__ == "__main__":
    main()
