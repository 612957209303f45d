"""`solver` is usable without Qt: importing all of it pulls in no Qt binding."""

import pkgutil
import subprocess
import sys

import solver


def test_importing_every_solver_module_loads_no_qt():
    names = sorted(m.name for m in pkgutil.iter_modules(solver.__path__, "solver."))
    assert "solver.impact" in names and "solver.system" in names
    code = (
        "import importlib, sys\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('PySide6', 'PyQt5', 'PyQt6', 'PySide2', 'pyqtgraph', 'superqt', 'qtpy', 'shiboken6')]\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
