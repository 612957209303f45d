"""The engine's module layout: the compiled model imports no stepper."""

from __future__ import annotations

import ast
from pathlib import Path

SOLVER = Path(__file__).resolve().parent.parent / "solver"
STEPPERS = {"solver.events", "solver.cart_motion", "solver.timestepping", "solver.simulation"}


def solver_imports(module: str) -> set[str]:
    """The ``solver`` modules ``module`` imports anywhere in its source."""
    tree = ast.parse((SOLVER / f"{module}.py").read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("solver."):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("solver.")}
    return found


def test_the_compiled_model_imports_no_stepper():
    assert not solver_imports("system") & STEPPERS
    assert "solver.system" in solver_imports("cart_motion")
