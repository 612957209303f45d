"""Every numba kernel of the solver, compiled once, visibly (``python -m solver compile``).

numba compiles a kernel at its first call with the argument types of that
call, and ``cache=True`` keeps the machine code on disk (next to the module,
or in numba's user cache when that folder cannot be written; ``NUMBA_CACHE_DIR``
chooses another). Without a warm-up the first time-stepping run after an
install paid for it inside its first step: 28 s of CPU with no word. Here
each kernel is called once on a tiny problem with the argument types the
solver passes, in a fixed order, with a line of progress for each:

* ``quiet_steps`` (:mod:`solver.timestep_kernels`): Moreau–Jean steps of a
  small scene, reached by a real time-stepping run of a bouncing ball (which
  compiles the accuracy measure's ``deepest``, :mod:`solver.kernel_accuracy`, too);
* ``banded_contact_lcp`` (:mod:`solver.chain_lcp`): a chain's frictionless
  contact LCP;
* ``sweeps`` (:mod:`solver.gauss_seidel`): projected Gauss–Seidel;
* ``phase_end`` (:mod:`solver.stop_closing`): a bead's closing with a stop
  (event-driven);
* ``gap_values`` (:mod:`solver.gap_kernel`): the gaps and normal speeds of
  a set of contact pairs (event-driven), for the centres' two layouts
  (one state; many states from ``System.centres_many``);
* ``closing_rows`` (:mod:`solver.gap_kernel`): when the gaps of a set of
  pairs close along a free flight, and one segment's (a bounce train's);
* ``clear_rows`` (:mod:`solver.gap_kernel`): proofs that gaps stay open
  along a free flight.

The Makefile runs ``python -m solver compile`` after installing; the command
line and the window call :func:`compile_if_cold` at start, which compiles
(with the same progress) only when the stamp of this exact code and numba
version is missing. The stamp lies next to the code, as numba's cache does;
in a read-only install, where numba caches in the user's cache dir, it lies
in ``$XDG_CACHE_HOME/impactgui`` (``~/.cache/impactgui``), so a second run is
quiet. numba is a dependency (docs/INSTALL.md: a platform without numba
wheels is not a target); the plain loops these kernels are compiled from are
the tests' references.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

MODULES = (
    "timestep_kernels",
    "kernel_tables",
    "kernel_kinematics",
    "kernel_lemke",
    "kernel_accuracy",
    "chain_lcp",
    "gauss_seidel",
    "stop_closing",
    "gap_kernel",
    "kernels",
)
"""Modules whose source decides the compiled code (their hash names the stamp)."""

KERNEL_NAMES = (
    "quiet_steps",
    "banded_contact_lcp",
    "sweeps",
    "phase_end",
    "gap_values",
    "closing_rows",
    "clear_rows",
)
"""The kernels, in the order they are compiled."""

Progress = Callable[[int, int, str], None]
"""``(done, total, name)``: called before each kernel is compiled and once at the end."""


def dispatchers() -> dict[str, Any]:
    """The numba dispatcher of each kernel (compiled or not yet), by name."""
    from solver import chain_lcp, gap_kernel, gauss_seidel, stop_closing, timestep_kernels

    return {
        "quiet_steps": timestep_kernels.compiled_quiet_steps(),
        "banded_contact_lcp": chain_lcp.compiled_banded_contact_lcp(),
        "sweeps": gauss_seidel._kernel(),
        "phase_end": stop_closing.compiled_phase_end(),
        "gap_values": gap_kernel.compiled_gap_values(),
        "closing_rows": gap_kernel.compiled_closing_rows()[1],
        "clear_rows": gap_kernel.compiled_clear_rows(),
    }


def _quiet_steps() -> None:
    """A real time-stepping run of a ball dropped on the ground: the compiled loop's types."""
    from solver.scene import parse_scene
    from solver.simulation import make_stepper

    scene = parse_scene(
        {
            "format": "impactgui-scene",
            "version": 2,
            "gravity": [0.0, -9.81],
            "boundaries": [{"id": "ground", "type": "segment", "a": [-1, 0], "b": [1, 0]}],
            "bodies": [
                {
                    "id": "ball",
                    "type": "wheel",
                    "mass": 1.0,
                    "inertia": 0.004,
                    "radius": 0.1,
                    "position": [0.0, 0.1001],
                    "velocity": [0.5, 0.0],
                },
            ],
            "solver": {"method": "time-stepping", "t_end": 0.02, "dt_out": 0.01, "dt": 1e-3},
        }
    )
    stepper = make_stepper(scene)
    while stepper.status == "running":
        stepper.step()


def _rows(K: int, W: int) -> tuple[np.ndarray, np.ndarray]:
    """Sparse rows of a chain of ``K`` contacts between ``K + 1`` beads (cols, values)."""
    cols = np.zeros((K, W), dtype=np.intp)
    vals = np.zeros((K, W))
    for k in range(K):
        cols[k, :2] = (k, k + 1)
        vals[k, :2] = (-1.0, 1.0)
    return cols, vals


def _banded_contact_lcp() -> None:
    from solver import chain_lcp

    cols, vals = _rows(3, 2)
    chain_lcp.compiled_banded_contact_lcp()(
        cols, vals, np.ones(4), np.array([-1.0, 0.0, 0.0]), np.zeros(3, dtype=bool), 8, np.zeros(3)
    )


def _sweeps() -> None:
    from solver import gauss_seidel

    cols, vals = _rows(2, 2)
    gauss_seidel._kernel()(
        cols, vals, cols, vals, np.ones(3), np.zeros(2), np.full(2, 0.3), np.full(2, 2.0),
        np.full(2, 2.0), np.zeros(2), np.zeros(2), np.array([1.0, 0.0, 0.0]), 1e-10, 50,
    )  # fmt: skip


def _phase_end() -> None:
    from solver import stop_closing

    stop_closing.load_compiled()


def _gap_values() -> None:
    """A disk over a segment, its centres in C and in Fortran order (both reach the loop)."""
    from solver import gap_kernel

    index, number = np.zeros(1, dtype=np.intp), np.zeros(1)
    table = np.array([[-1.0, 0.0, 2.0, 0.0, 4.0, 2.0]])
    for C in (np.zeros((1, 1, 2)), np.zeros((2, 1, 2), order="F")):
        G = np.empty((len(C), 1))
        gap_kernel.compiled_gap_values()(
            C, C, True, index, index - 1, index, number, number + 0.1, index, table,
            np.zeros(2, dtype=np.intp), np.zeros((0, 6)), 0.0, False, G, G.copy(),
        )  # fmt: skip


def _closing_rows() -> None:
    """A falling disk over a segment: one segment from Python, and the rows' loop."""
    from solver import gap_kernel

    one, rows = gap_kernel.compiled_closing_rows()
    one(0.0, 1.0, 0.0, 0.0, 0.0, -9.81, -1.0, 0.0, 2.0, 0.0, 4.0, 2.0, 0.1, 1.0, True)
    index, number = np.zeros(1, dtype=np.intp), np.zeros(1)
    table = np.array([[-1.0, 0.0, 2.0, 0.0, 4.0, 2.0]])
    C = np.array([[0.0, 1.0]])
    rows(
        C, C, C, index, index - 1, index, number, number + 0.1, index, table, 1.0,
        np.empty(1), np.empty(1, dtype=np.int8),
    )  # fmt: skip


def _clear_rows() -> None:
    """A disk falling over a segment proved clear of it, rows as the solver passes them."""
    from solver import gap_kernel

    index, C = np.zeros(1, dtype=np.intp), np.array([[0.0, 1.0]])
    gap_kernel.compiled_clear_rows()(
        C, C * 0.0, C * 0.0, index, index, index - 1, index, np.zeros(1), np.array([0.1]),
        np.array([[-1.0, 0.0, 1.0, 0.0, np.nan]]), 0.1, 0.0, np.empty(1, dtype=np.bool_),
    )  # fmt: skip


_WARM_UPS: dict[str, Callable[[], None]] = {
    "quiet_steps": _quiet_steps,
    "banded_contact_lcp": _banded_contact_lcp,
    "sweeps": _sweeps,
    "phase_end": _phase_end,
    "gap_values": _gap_values,
    "closing_rows": _closing_rows,
    "clear_rows": _clear_rows,
}


def _stamp_name() -> str:
    """The stamp's name: a hash of the kernels' sources, numba's version and where they live.

    The folder is in the hash because numba caches per source folder: a second
    install of the same code elsewhere compiles its own kernels.
    """
    digest = hashlib.sha256()
    here = Path(__file__).resolve().parent
    digest.update(str(here).encode())
    for name in MODULES:
        digest.update((here / f"{name}.py").read_bytes())
    import numba

    digest.update(numba.__version__.encode())
    return f"impactgui-kernels-{digest.hexdigest()[:16]}.stamp"


def user_cache_dir() -> Path:
    """This program's folder in the user's cache (XDG: ``$XDG_CACHE_HOME/impactgui``).

    Where the stamp goes when the install cannot be written; numba's own
    cache then moves to the same user cache (``$XDG_CACHE_HOME/numba``).
    """
    base = os.environ.get("XDG_CACHE_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    return root / "impactgui"


def stamp_paths() -> list[Path]:
    """Where the stamp may be, in the order it is written: the first folder that can be.

    ``NUMBA_CACHE_DIR`` when set (numba's cache is there and nowhere else);
    else next to the code, as numba's cache is, then the user's cache dir
    (:func:`user_cache_dir`) for a read-only install.
    """
    name = _stamp_name()
    cache = os.environ.get("NUMBA_CACHE_DIR")
    if cache:
        return [Path(cache) / name]
    here = Path(__file__).resolve().parent
    return [here / "__pycache__" / name, user_cache_dir() / name]


def stamp_path() -> Path | None:
    """The stamp that says the kernels of this code and numba version are compiled and cached;
    None when there is none yet."""
    return next((path for path in stamp_paths() if path.is_file()), None)


def is_cold() -> bool:
    """True when the kernels of this code were not compiled yet."""
    return stamp_path() is None


def _write_stamp() -> Path | None:
    """Write the stamp in the first folder of :func:`stamp_paths` that can be written."""
    for stamp in stamp_paths():
        try:
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.write_text("compiled\n")
        except OSError:
            continue  # a read-only install: the next folder
        return stamp
    return None  # nowhere: the next start compiles (or loads) again, with its lines


def compile_all(progress: Progress | None = None) -> list[str]:
    """Compile (or load from numba's disk cache) every kernel; the names, in order.

    ``progress(done, total, name)`` is called before each kernel and once
    with ``done == total`` at the end. Writes the stamp in the first folder of
    :func:`stamp_paths` that can be written.
    """
    total = len(KERNEL_NAMES)
    for done, name in enumerate(KERNEL_NAMES):
        if progress is not None:
            progress(done, total, name)
        _WARM_UPS[name]()
    if progress is not None:
        progress(total, total, "")
    _write_stamp()
    return list(KERNEL_NAMES)


def print_progress(stream: Any) -> Progress:
    """A progress callback writing ``compiling the solver's kernels, once: …`` lines."""

    def report(done: int, total: int, name: str) -> None:
        if done < total:
            print(
                f"compiling the solver's kernels, once: {done + 1}/{total} {name}…",
                file=stream,
                flush=True,
            )
        else:
            print(f"compiling the solver's kernels, once: done ({total})", file=stream, flush=True)

    return report


def compile_if_cold(progress: Progress | None = None) -> bool:
    """Compile every kernel when :func:`is_cold`; True when it did."""
    if not is_cold():
        return False
    compile_all(progress)
    return True
