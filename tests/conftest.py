"""Test-wide settings: Qt offscreen unless told otherwise, hypothesis profiles."""

import os

import pytest
from hypothesis import HealthCheck, settings

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# CI runs the same 1000 examples per property every time (derandomize): a failure
# there is reproducible, never luck; run with HYPOTHESIS_PROFILE=explore to search afresh.
settings.register_profile(
    "ci",
    max_examples=1000,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.register_profile(
    "dev",
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.register_profile(
    "explore",
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session", autouse=True)
def _stop_phase_loop_compiled() -> None:
    """Compile numba's loop of phases between stops (or load it from numba's disk cache) once.

    On a fresh clone its first compile takes 4-13 s; without this it would fall
    inside whichever test first runs a bead-between-stops scene (a GUI test
    waiting 10 s for the first frames, say) and time that test out. Nothing
    without numba.
    """
    from solver import kernels
    from solver.stop_closing import load_compiled

    load_compiled()
    # every kernel compiled (or loaded) once, before any test: a cold cache then
    # never adds "compiling the solver's kernels" lines to a run's stderr
    kernels.compile_if_cold()
