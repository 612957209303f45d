"""Every bundled scene runs from the command line and keeps the laws of MECHANICS §4 and §6.

For each scene in ``resources/scenes/`` (a preset of the GUI and a case of
MECHANICS §7): ``python -m solver run`` exits 0 and writes the three CSV files
with the docs/CONTRACT.md columns; the energy balance ``E_total + E_dissipated −
E_input`` stays constant to 1e-8 of the energy scale; no disk sinks into a
boundary or another disk by more than 1e-9 m (measured here with the
geometry of the scene file, independently of the solver's contact search);
a compliant boundary is entered (that is its force) but never crossed.
"""

import csv
import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from solver import cli
from solver.scene import load_scene

SCENES = sorted((Path(__file__).parents[1] / "resources" / "scenes").glob("*.json"))
ENERGY_COLUMNS = ["E_kin", "E_pot", "E_spring", "E_total", "E_dissipated", "E_input"]


def _point_segment_distance(p, a, b):
    a, b, p = np.asarray(a, float), np.asarray(b, float), np.asarray(p, float)
    ab = b - a
    s = np.clip((p - a) @ ab / (ab @ ab), 0.0, 1.0)
    return float(np.linalg.norm(p - (a + s * ab)))


def _point_arc_distance(p, arc):
    c = np.asarray(arc.center, float)
    start, end = math.radians(arc.start_deg), math.radians(arc.end_deg)
    span = (end - start) % (2 * math.pi) or 2 * math.pi
    d = np.asarray(p, float) - c
    angle = math.atan2(d[1], d[0])
    if (angle - start) % (2 * math.pi) <= span:
        return abs(float(np.linalg.norm(d)) - arc.radius)
    ends = [c + arc.radius * np.array([math.cos(t), math.sin(t)]) for t in (start, start + span)]
    return min(float(np.linalg.norm(np.asarray(p) - e)) for e in ends)


def _distance(p, boundary):
    if boundary.type == "segment":
        return _point_segment_distance(p, boundary.a, boundary.b)
    if boundary.type == "polyline":
        pts = boundary.points
        return min(_point_segment_distance(p, a, b) for a, b in itertools.pairwise(pts))
    return _point_arc_distance(p, boundary)


def _centres(scene, row):
    """Disk centres of every wheel and bead from one trajectory.csv row."""
    out = []
    for body in scene.bodies:
        if body.type == "wheel":
            out.append((body, (float(row[f"{body.id}.x"]), float(row[f"{body.id}.y"]))))
        elif body.type == "bead":
            out.append((body, (float(row[f"{body.id}.x"]), body.rail_y)))
    return out


@pytest.mark.parametrize("path", SCENES, ids=[p.stem for p in SCENES])
def test_bundled_scene_runs_from_the_command_line_and_keeps_its_laws(path, tmp_path):
    scene = load_scene(path)
    status = cli.main(["run", str(path), "--out", str(tmp_path)])
    assert status == 0
    with open(tmp_path / "trajectory.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    header = list(rows[0])
    assert header[:2] == ["t", "kind"] and header[-6:] == ENERGY_COLUMNS
    for name in ("contacts.csv", "events.csv"):
        assert (tmp_path / name).is_file()
    times = [float(r["t"]) for r in rows]
    assert times[0] == 0.0 and times[-1] == pytest.approx(scene.solver.t_end)
    assert all(b >= a for a, b in itertools.pairwise(times))

    energy = np.array([[float(r[c]) for c in ENERGY_COLUMNS] for r in rows])
    kinetic, potential, spring, total, dissipated, supplied = energy.T
    np.testing.assert_allclose(total, kinetic + potential + spring, rtol=1e-12, atol=1e-12)
    balance = total + dissipated - supplied
    scale = max(1.0, float(np.max(np.abs(energy[:, [0, 1, 2, 5]]))))
    assert np.ptp(balance) <= 1e-8 * scale
    assert np.all(np.diff(dissipated) >= -1e-9 * scale)

    worst = 0.0
    for row in rows[:: max(1, len(rows) // 400)] + [r for r in rows if r["kind"] != "sample"]:
        disks = _centres(scene, row)
        for body, centre in disks:
            for boundary in scene.boundaries:
                sunk = body.radius - _distance(centre, boundary)
                if scene.compliance_for(boundary) is not None:
                    assert sunk < body.radius  # a soft stop is entered, never crossed
                else:
                    worst = max(worst, sunk)
        for n, (bi, ci) in enumerate(disks):
            for bj, cj in disks[n + 1 :]:
                worst = max(worst, bi.radius + bj.radius - math.dist(ci, cj))
    assert worst <= 1e-9
