"""Modules that work together without importing each other (issue 10, "while in these files").

A tool talks to the canvas through ``impactgui.tool_host`` (owned by the
canvas side), and the command types edit anything shaped like a document
(``commands.EditableScene``): neither pair imports both ways, not even for
type checking.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "impactgui"
SCENES = Path(__file__).resolve().parent.parent / "resources" / "scenes"


def _imports(module: str) -> set[str]:
    """The ``impactgui`` modules ``module`` imports anywhere in its source."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("impactgui."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("impactgui.")}
    return found


@pytest.mark.parametrize(("user", "used"), [("canvas", "tools"), ("document", "commands")])
def test_the_pair_imports_one_way_only(user: str, used: str) -> None:
    assert used in _imports(user)
    assert user not in _imports(used)


def test_tools_reach_the_canvas_through_its_host_interface() -> None:
    assert "tool_host" in _imports("tools")
    assert _imports("tool_host") <= {"commands"}


def test_an_event_driven_run_does_not_load_the_compiled_time_stepper() -> None:
    # numba (the `fast` extra) costs 0.2 s at every start and ~28 000 objects on the heap,
    # which the garbage collector then walks: only a time-stepping run brings it in
    import subprocess
    import sys

    code = (
        "import sys, solver.cli, solver.simulation, solver.sweep;"
        "from solver.scene import load_scene;"
        "from solver.simulation import make_stepper;"
        f"make_stepper(load_scene({str(SCENES / 'bouncing_ball.json')!r}));"
        "print('numba' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
