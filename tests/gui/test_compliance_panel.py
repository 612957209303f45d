"""A boundary's compliance edited in the property panel (issue 22, the app).

Paper 003's elastic stop: a 2 kg mass at 1.5 m/s against a stop of stiffness
k = 2·10⁴ N/m stays in contact for τ = π√(m/k) (eq. 10, λ² = k/m), the test's
own closed form. The panel makes a rigid stop soft, refuses k ≤ 0, c < 0 and
p ∉ {1, 1.5} in red naming the field, undoes each change, and the scene file
holds ``"compliance": {"stiffness": k, "damping": c, "exponent": p}``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.gui.conftest import run_to_end, scene_path

K = "boundaries[0].compliance.stiffness"
C = "boundaries[0].compliance.damping"
P = "boundaries[0].compliance.exponent"


@pytest.fixture
def rigid_stop(tmp_path: Path) -> Path:
    """The bundled elastic stop with its stop made rigid (no ``compliance``)."""
    data = json.loads(scene_path("elastic_stop").read_text())
    del data["boundaries"][0]["compliance"]
    path = tmp_path / "stop.json"
    path.write_text(json.dumps(data))
    return path


def test_a_rigid_stop_made_soft_in_the_panel_gives_paper_003s_contact_time(
    qtbot, window, rigid_stop: Path, tmp_path: Path
) -> None:
    assert window.open_file(rigid_stop)
    window.doc.select(("boundaries", 0))
    panel = window.properties
    assert panel.field(K).editors[0].placeholderText().startswith("rigid")
    # damping of a rigid stop: refused, it has no spring yet
    assert not panel.submit(C, "5")
    assert "stiffness k first" in panel.field(C).error.text()
    assert "compliance" not in window.doc.data["boundaries"][0]
    panel.field(C).show_error("")
    # k typed: the whole object, as the scene format writes it
    assert panel.submit(K, "2e4")
    assert window.doc.data["boundaries"][0]["compliance"] == {
        "stiffness": 20000.0,
        "damping": 0.0,
        "exponent": 1.0,
    }
    run_to_end(qtbot, window)
    events = window.runner.trajectory.events
    touch = next(e for e in events if e.type == "touch")
    release = next(e for e in events if e.type == "release")
    # mass 2 kg from x = 0 at 1.5 m/s, radius 0.1 m, stop at x = 1: touch at 0.9 / 1.5 s
    assert touch.t == pytest.approx(0.9 / 1.5, abs=1e-9)
    assert release.t - touch.t == pytest.approx(math.pi * math.sqrt(2.0 / 2e4), abs=1e-9)
    window.reset_run()
    # saved exactly as the scene format says
    saved = tmp_path / "soft.json"
    assert window.save_as(saved)
    written = json.loads(saved.read_text())["boundaries"][0]["compliance"]
    assert written == {"stiffness": 20000.0, "damping": 0.0, "exponent": 1.0}


@pytest.mark.parametrize(
    ("path", "text", "reason"),
    [
        (K, "-1", "must be > 0, got -1"),
        (K, "0", "must be > 0, got 0"),
        (C, "-0.5", "-0.5"),
        (P, "2", "must be 1 or 1.5, got 2"),
        (P, "1.2", "must be 1 or 1.5, got 1.2"),
    ],
)
def test_bad_compliance_is_refused_in_red_naming_the_field(
    qtbot, window, path: str, text: str, reason: str
) -> None:
    assert window.open_file(scene_path("elastic_stop"))
    window.doc.select(("boundaries", 0))
    panel = window.properties
    before = json.dumps(window.doc.data, sort_keys=True)
    assert not panel.submit(path, text)
    editor = panel.field(path)
    assert editor.invalid and reason in editor.error.text()
    assert "background: #ffebee" in editor.editors[0].styleSheet()  # red
    label = editor.spec.label
    assert any(line.startswith(f"Wall “stop”, {label}: ") for line in panel.refused())
    assert json.dumps(window.doc.data, sort_keys=True) == before  # the document is unchanged
    assert not window.start_run()  # a red field keeps the scene from running


def test_compliance_edits_are_undone_one_by_one(qtbot, window) -> None:
    assert window.open_file(scene_path("elastic_stop"))
    window.doc.select(("boundaries", 0))
    panel = window.properties
    stop = lambda: window.doc.data["boundaries"][0]  # noqa: E731
    assert panel.submit(P, "1.5")
    assert panel.submit(C, "12.5")
    assert stop()["compliance"] == {"stiffness": 20000.0, "damping": 12.5, "exponent": 1.5}
    assert panel.field(P).editors[0].text() == "1.5"
    assert panel.submit(K, "")  # blank k: rigid again
    assert "compliance" not in stop()
    assert panel.field(K).editors[0].text() == ""
    window.doc.undo_stack.undo()
    assert stop()["compliance"] == {"stiffness": 20000.0, "damping": 12.5, "exponent": 1.5}
    window.doc.undo_stack.undo()
    window.doc.undo_stack.undo()
    assert stop()["compliance"] == {"stiffness": 20000.0, "damping": 0.0, "exponent": 1.0}
    assert panel.field(C).editors[0].text() == "0"
