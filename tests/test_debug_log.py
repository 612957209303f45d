"""``run --debug`` names each phase kind and event of an event-driven run as it runs."""

from __future__ import annotations

import io
import logging
from pathlib import Path

from solver import cli

SCENES = Path(__file__).resolve().parents[1] / "resources" / "scenes"


def _debug_lines(scene: str, tmp_path: Path) -> list[str]:
    stream = io.StringIO()
    status = cli.main(
        ["run", str(SCENES / scene), "--out", str(tmp_path), "--debug"], stderr=stream
    )
    assert status == 0
    return stream.getvalue().splitlines()


def test_the_ball_s_phases_are_named_free_flight_then_train_flights(tmp_path):
    lines = _debug_lines("bouncing_ball.json", tmp_path)
    assert lines[0].startswith("solver.events: free flight to t = 0.4515")  # sqrt(2 h / g), h = 1
    assert any("bounce-train flight" in line for line in lines)
    impacts = [line for line in lines if ": impact ball ground" in line]
    assert len(impacts) >= 5
    assert any("zeno" in line for line in lines)  # the bounces summed to their end


def test_stop_and_general_phases_are_named(tmp_path):
    stops = _debug_lines("forced_mass_between_stops.json", tmp_path / "stops")
    assert any("stop phase to t" in line for line in stops)
    chain = _debug_lines("chain_forced.json", tmp_path / "chain")
    assert any("general phase to t" in line for line in chain)


def test_without_debug_nothing_is_logged_and_the_logger_is_left_as_it_was(tmp_path):
    level = logging.getLogger("solver").level
    handlers = list(logging.getLogger("solver").handlers)
    _debug_lines("bouncing_ball.json", tmp_path / "a")
    assert logging.getLogger("solver").level == level
    assert logging.getLogger("solver").handlers == handlers
    stream = io.StringIO()
    cli.main(
        ["run", str(SCENES / "bouncing_ball.json"), "--out", str(tmp_path / "b")], stderr=stream
    )
    assert stream.getvalue() == ""
