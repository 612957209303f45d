"""Compliant contacts in the scene file: ``compliance`` on boundaries and ``contact``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from solver import cli
from solver.scene import parse_scene, scene_to_dict


def stop_scene(compliance: dict | None = None, contact: dict | None = None) -> dict:
    """A 2 kg bead at 1.5 m/s towards a vertical wall at x = 1 (no gravity)."""
    wall = {"id": "stop", "type": "segment", "a": [1.0, -1.0], "b": [1.0, 1.0]}
    if compliance is not None:
        wall["compliance"] = compliance
    data = {
        "format": "impactgui-scene",
        "version": 2,
        "gravity": [0.0, 0.0],
        "boundaries": [wall],
        "bodies": [
            {
                "id": "b",
                "type": "bead",
                "mass": 2.0,
                "radius": 0.1,
                "x": 0.0,
                "rail_y": 0.0,
                "vx": 1.5,
            }
        ],
        "solver": {"t_end": 1.0, "dt_out": 0.01},
    }
    if contact is not None:
        data["contact"] = contact
    return data


def cli_problems(tmp_path: Path, data: dict) -> tuple[int, list[str]]:
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(data))
    stream = io.StringIO()
    status = cli.main(["run", str(path), "--out", str(tmp_path / "out")], stderr=stream)
    return status, stream.getvalue().splitlines()


@pytest.mark.parametrize(
    ("compliance", "line"),
    [
        ({"stiffness": -1}, "boundaries[0].compliance.stiffness: must be > 0, got -1"),
        ({"stiffness": 0}, "boundaries[0].compliance.stiffness: must be > 0, got 0"),
        (
            {"stiffness": 1e4, "damping": -3},
            "boundaries[0].compliance.damping: must be >= 0, got -3",
        ),
        ({"stiffness": 1e4, "exponent": 2}, "boundaries[0].compliance.exponent: must be 1 or 1.5"),
        ({"damping": 1.0}, "boundaries[0].compliance.stiffness: required key is missing"),
        ({"stiffness": 1e4, "spring": 1}, "boundaries[0].compliance.spring: unknown key"),
    ],
)
def test_bad_compliance_exits_2_naming_the_field(tmp_path, compliance, line):
    status, lines = cli_problems(tmp_path, stop_scene(compliance))
    assert status == 2
    assert any(text.startswith(line) for text in lines), lines


def test_bad_contact_compliance_is_named_too(tmp_path):
    status, lines = cli_problems(tmp_path, stop_scene(contact={"compliance": {"stiffness": -2}}))
    assert status == 2
    assert "contact.compliance.stiffness: must be > 0, got -2" in lines


def test_defaults_round_trip_and_precedence():
    scene = parse_scene(stop_scene({"stiffness": 2e4}, contact={"compliance": {"stiffness": 5.0}}))
    own = scene.compliance_for("stop")
    assert (own.stiffness, own.damping, own.exponent) == (2e4, 0.0, 1.0)
    assert scene.compliance_for("b") is scene.contact.compliance  # body–body: contact's
    assert scene.compliance_for(None).stiffness == 5.0
    assert scene.has_compliance
    assert parse_scene(scene_to_dict(scene)) == scene


def test_a_boundary_without_its_own_takes_the_contacts():
    scene = parse_scene(stop_scene(contact={"compliance": {"stiffness": 3.0, "exponent": 1.5}}))
    assert scene.compliance_for(scene.boundaries[0]).exponent == 1.5


def test_without_compliance_nothing_is_written_and_everything_is_rigid():
    scene = parse_scene(stop_scene())
    assert not scene.has_compliance
    assert scene.compliance_for("stop") is None
    data = scene_to_dict(scene)
    assert "compliance" not in data["contact"]
    assert "compliance" not in data["boundaries"][0]


def test_compliant_body_body_contacts_run_compliant_not_rigid(tmp_path):
    data = stop_scene(contact={"compliance": {"stiffness": 2e4}})
    data["bodies"].append(
        {"id": "c", "type": "bead", "mass": 1.0, "radius": 0.1, "x": 0.5, "rail_y": 0.0}
    )
    status, lines = cli_problems(tmp_path, data)
    assert (status, lines) == (0, [])
    events = (tmp_path / "out" / "events.csv").read_text().splitlines()
    rows = [line.split(",")[1:4] for line in events[1:]]
    # the bead meets the other bead softly (no impact), then the other meets the stop
    assert rows[:2] == [["touch", "b", "c"], ["release", "b", "c"]]
    assert "impact" not in {row[0] for row in rows}


def test_one_disk_with_contact_compliance_runs(tmp_path):
    status, lines = cli_problems(tmp_path, stop_scene(contact={"compliance": {"stiffness": 2e4}}))
    assert (status, lines) == (0, [])
    events = (tmp_path / "out" / "events.csv").read_text().splitlines()
    assert [line.split(",")[1] for line in events[1:]] == ["touch", "release"]
