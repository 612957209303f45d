"""The solver's modules import each other without a circle (type-only imports included).

``frames`` (what a run produces) imports no other solver module; ``stages``
reads a run through a protocol rather than importing ``record``; ``record``
writes both. A circle makes a module impossible to read, or test, alone.
"""

from __future__ import annotations

import ast
from pathlib import Path

SOLVER = Path(__file__).resolve().parents[1] / "solver"


def _imports() -> dict[str, set[str]]:
    modules = {path.stem for path in SOLVER.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in SOLVER.glob("*.py"):
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("solver.")
            ):
                name = node.module.split(".")[1]
                if name in modules:
                    found.add(name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    if parts[0] == "solver" and len(parts) > 1 and parts[1] in modules:
                        found.add(parts[1])
        graph[path.stem] = found - {path.stem}
    return graph


def test_frames_record_and_stages_import_without_a_circle():
    graph = _imports()
    assert graph["frames"] == set()
    assert "record" not in graph["stages"]
    assert "frames" in graph["stages"] and {"frames", "stages"} <= graph["record"]
