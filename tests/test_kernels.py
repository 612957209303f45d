"""Compiled once, visibly (issue 24): the warm-up compiles every numba kernel, a run after it
compiles nothing.

Each check runs in a fresh process with its own empty numba cache
(``NUMBA_CACHE_DIR``), as on a fresh install.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from solver import kernels

ROOT = Path(__file__).resolve().parents[1]


def _python(code: str, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )


def test_the_first_run_compiles_each_kernel_visibly_and_the_next_compiles_nothing(tmp_path):
    """A cold cache: ``run`` compiles every kernel first, one progress line each; then a run
    in a new process loads them from disk (numba's cache hits, no miss)."""
    cache = tmp_path / "numba-cache"
    scene = ROOT / "resources" / "scenes" / "bouncing_ball.json"
    first = _python(
        f"""
        import json
        from solver import kernels
        assert kernels.is_cold()
        from solver.cli import main
        status = main(["run", {str(scene)!r}, "--out", {str(tmp_path / "one")!r},
                       "--t-end", "0.2", "--method", "time-stepping"])
        signatures = {{k: len(d.signatures) for k, d in kernels.dispatchers().items()}}
        misses = {{k: sum(d.stats.cache_misses.values()) for k, d in kernels.dispatchers().items()}}
        print(json.dumps([status, signatures, misses, kernels.is_cold()]))
        """,
        cache,
    )
    assert first.returncode == 0, first.stderr
    status, signatures, misses, cold = json.loads(first.stdout.splitlines()[-1])
    assert status == 0 and not cold
    assert set(signatures) == set(kernels.KERNEL_NAMES)
    assert all(count >= 1 for count in signatures.values())  # each kernel compiled
    assert all(count >= 1 for count in misses.values())  # here: nothing was cached before
    lines = first.stderr.splitlines()
    assert lines[:8] == [
        "compiling the solver's kernels, once: 1/7 quiet_steps…",
        "compiling the solver's kernels, once: 2/7 banded_contact_lcp…",
        "compiling the solver's kernels, once: 3/7 sweeps…",
        "compiling the solver's kernels, once: 4/7 phase_end…",
        "compiling the solver's kernels, once: 5/7 gap_values…",
        "compiling the solver's kernels, once: 6/7 closing_rows…",
        "compiling the solver's kernels, once: 7/7 clear_rows…",
        "compiling the solver's kernels, once: done (7)",
    ]
    assert (tmp_path / "one" / "events.csv").exists()

    second = _python(
        f"""
        import json
        from solver import kernels
        from solver.cli import main
        status = main(["run", {str(scene)!r}, "--out", {str(tmp_path / "two")!r},
                       "--t-end", "0.2", "--method", "time-stepping"])
        kernel = kernels.dispatchers()["quiet_steps"]
        print(json.dumps([status, len(kernel.stats.cache_hits),
                          sum(kernel.stats.cache_misses.values())]))
        """,
        cache,
    )
    assert second.returncode == 0, second.stderr
    status, hits, misses = json.loads(second.stdout.splitlines()[-1])
    assert status == 0
    assert hits >= 1 and misses == 0  # loaded from the disk cache, never compiled in a step
    assert "compiling" not in second.stderr


def test_the_compile_command_reports_each_kernel(monkeypatch, capsys):
    """``python -m solver compile``: the same lines, whatever the cache holds."""
    from solver.cli import main

    called: list[str] = []
    monkeypatch.setattr(
        kernels,
        "_WARM_UPS",
        {name: (lambda n=name: called.append(n)) for name in kernels.KERNEL_NAMES},
    )
    monkeypatch.setattr(kernels, "stamp_paths", lambda: [Path(os.devnull) / "no-stamp"])
    assert main(["compile"]) == 0
    assert called == list(kernels.KERNEL_NAMES)
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "compiling the solver's kernels, once: 1/7 quiet_steps…"
    assert err[-1] == "compiling the solver's kernels, once: done (7)"


def _read_only_copy(tmp_path: Path) -> Path:
    """A copy of ``solver/`` that cannot be written, even by root: each ``__pycache__`` is a file.

    Neither numba (its in-tree cache) nor the stamp can make a folder there; without
    root, the copy is also made read-only.
    """
    root = tmp_path / "install"
    shutil.copytree(ROOT / "solver", root / "solver", ignore=shutil.ignore_patterns("__pycache__"))
    for folder in [root / "solver", *(p for p in (root / "solver").rglob("*") if p.is_dir())]:
        (folder / "__pycache__").write_text("a read-only install\n")
    for path in [root, *root.rglob("*")]:
        path.chmod(path.stat().st_mode & ~0o222)
    return root


def test_a_read_only_install_compiles_once_then_runs_quietly(tmp_path):
    """The install cannot be written: numba caches in the user's cache dir, and the stamp
    goes there too (``$XDG_CACHE_HOME/impactgui``), so the second run prints no compile
    lines and compiles nothing. Before, the stamp could not be written and every run
    printed the compile lines again."""
    install = _read_only_copy(tmp_path)
    xdg = tmp_path / "xdg"
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_CACHE_DIR"}
    env.update(XDG_CACHE_HOME=str(xdg), PYTHONPATH=str(install), PYTHONDONTWRITEBYTECODE="1")
    scene = ROOT / "resources" / "scenes" / "bouncing_ball.json"
    code = textwrap.dedent(
        f"""
        import json
        from solver import kernels
        from solver.cli import main
        assert kernels.__file__.startswith({str(install)!r}), kernels.__file__
        cold = kernels.is_cold()
        status = main(["run", {str(scene)!r}, "--out", OUT,
                       "--t-end", "0.2", "--method", "time-stepping"])
        kernel = kernels.dispatchers()["quiet_steps"]
        print(json.dumps([cold, status, len(kernel.stats.cache_hits),
                          sum(kernel.stats.cache_misses.values())]))
        """
    )
    runs = []
    try:
        for name in ("one", "two"):
            runs.append(
                subprocess.run(
                    [sys.executable, "-c", code.replace("OUT", repr(str(tmp_path / name)))],
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=900,
                    cwd=tmp_path,
                )
            )
    finally:
        for path in [install, *install.rglob("*")]:
            path.chmod(path.stat().st_mode | 0o200)  # so that tmp_path can be removed
    first, second = runs
    assert first.returncode == 0, first.stderr
    cold, status, _, misses = json.loads(first.stdout.splitlines()[-1])
    assert cold and status == 0 and misses >= 1
    assert "compiling the solver's kernels, once: done (7)" in first.stderr.splitlines()
    assert (xdg / "numba").is_dir()  # numba moved its cache to the user's cache dir
    assert len(list((xdg / "impactgui").glob("impactgui-kernels-*.stamp"))) == 1

    assert second.returncode == 0, second.stderr
    cold, status, hits, misses = json.loads(second.stdout.splitlines()[-1])
    assert not cold and status == 0
    assert hits >= 1 and misses == 0  # loaded from numba's cache, not compiled
    assert "compiling" not in second.stderr


def test_the_window_s_start_loads_the_kernels_so_a_first_step_loads_nothing(tmp_path):
    """``impactgui.app.load_kernels_in_background`` (the window's start): afterwards the
    paper-004 wheel's first steps import no part of numba and load no kernel; without it
    the first step did both, 0.4-0.5 s inside a run's worker thread."""
    cache = tmp_path / "numba-cache"
    code = """
        import json, sys
        from impactgui.app import load_kernels_in_background
        from solver import gap_kernel
        from solver.scene import load_scene
        from solver.simulation import make_stepper

        load_kernels_in_background().join()
        before = set(sys.modules)
        loaded = len(gap_kernel.compiled_gap_values().overloads)
        stepper = make_stepper(load_scene("resources/scenes/wheel_curb_e03.json"))
        for _ in range(5):
            stepper.step()
        new = sorted(m for m in set(sys.modules) - before if m.split(".")[0] == "numba")
        after = len(gap_kernel.compiled_gap_values().overloads)
        print(json.dumps({"new": new, "loaded": loaded, "after": after}))
    """
    assert _python("from solver import kernels; kernels.compile_all()", cache).returncode == 0
    done = _python(code, cache)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["new"] == []
    assert seen["loaded"] >= 1 and seen["after"] == seen["loaded"]
