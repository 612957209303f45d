"""bench/fuzz.py's own mutator: it must never stop the run it drives.

Seed 2026's long run (issue 24) stopped at scene 7700 with an OverflowError in
the harness, not in the program: a "scale" mutation met an int too large for a
float, put in the scene by an earlier mutation, and ``float()`` of it raised.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

FUZZ = Path(__file__).resolve().parents[1] / "bench" / "fuzz.py"


def _fuzz_module():
    spec = importlib.util.spec_from_file_location("bench_fuzz", FUZZ)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _ScaleFirstLeaf:
    """An rng that picks the "scale" mutation, the first number and the exponent 0."""

    def choice(self, options):
        assert "scale" in options
        return "scale"

    def integers(self, low, high=None):
        return 0 if high is None else max(low, 0)


def test_scaling_an_int_past_the_floats_gives_infinity_not_an_overflow():
    fuzz = _fuzz_module()
    data = {"solver": {"t_end": 10**400}}
    assert fuzz._mutate_once(data, _ScaleFirstLeaf()) == "scale"
    assert data["solver"]["t_end"] == math.inf


def test_scaling_an_ordinary_number_multiplies_it_by_the_drawn_power_of_ten():
    fuzz = _fuzz_module()
    data = {"solver": {"t_end": 2.5}}
    fuzz._mutate_once(data, _ScaleFirstLeaf())
    assert data["solver"]["t_end"] == 2.5


def test_a_run_creeping_by_ulps_makes_no_progress_for_the_hang_count():
    # the stiff plastic pair of seed 2026 (scene 2698) crept on by 1.6e-14 s a phase
    fuzz = _fuzz_module()
    progress = fuzz._Progress.__new__(fuzz._Progress)  # without wrapping Watchdog.check
    progress.t, progress.at = -math.inf, -1.0
    progress.note(0.586570969495)
    first = progress.at
    assert progress.t == 0.586570969495 and first >= 0.0
    t = progress.t
    for _ in range(10_000):  # 1.6e-10 s in all: less than 1e-9 s
        t += 1.6e-14
        progress.note(t)
    assert progress.t == 0.586570969495 and progress.at == first
    progress.note(0.586570969495 + 2e-9)  # a real step forward
    assert progress.t == 0.586570969495 + 2e-9
    progress.note(1e6)
    progress.note(1e6 + 1e-4)  # 1e-10 relative at 1e6 s: still creeping
    assert progress.t == 1e6
