"""What the tight tolerances of compliant phases cost, and what they buy.

Run with ``python bench/compliant_tolerance.py``. For the bundled compliant
presets and a Hertz stop scene, the CPU time and the energy balance
(``E_total + E_dissipated − E_input``, its spread over the frames relative to
the run's energy scale) with the ODE options of compliant scenes as they are
(:meth:`solver.compliance.CompliantSet.ode_options`: rtol ≤ 2.5e-14, a short
first step) and as they were (the run's own tolerances, 1e-10 / 1e-12, only
the step bound kept), and the time ratio. Prints, asserts nothing.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from solver.compliance import CompliantSet
from solver.scene import parse_scene
from solver.simulation import simulate

SCENES = Path(__file__).resolve().parents[1] / "resources" / "scenes"
ROUNDS = 3


def hertz_stop() -> Any:
    """A bead between two Hertz stops, a spring to an anchor and a harmonic force."""
    law = {"stiffness": 1e7, "damping": 5.0, "exponent": 1.5}
    return parse_scene(
        {
            "format": "impactgui-scene",
            "version": 2,
            "gravity": [0.0, 0.0],
            "boundaries": [
                {"id": f"s{j}", "type": "segment", "a": [x, -1.0], "b": [x, 1.0], "compliance": law}
                for j, x in enumerate((-0.5, 0.5))
            ],
            "bodies": [
                {"id": "b", "type": "bead", "mass": 2.0, "radius": 0.1, "x": 0.0, "vx": 1.5}
                | {"rail_y": 0.0}
            ],
            "springs": [{"a": "b", "anchor": [-0.5, 0.0], "stiffness": 30.0, "rest_length": 0.3}],
            "forces": [{"body": "b", "amplitude": [4.0, 0.0], "omega": 7.0}],
            "solver": {"t_end": 2.0, "dt_out": 0.01},
        }
    )


def measure(scene: Any) -> tuple[float, float]:
    """Median CPU time (s) of a run and its balance's spread relative to its energy scale."""
    cpu = []
    for _ in range(ROUNDS):
        start = time.process_time()
        run = simulate(scene)
        cpu.append(time.process_time() - start)
    energies = [f.energy for f in run.frames]
    balance = [e.kinetic + e.potential + e.spring + e.dissipated - e.input for e in energies]
    scale = max(e.kinetic + abs(e.potential) + e.spring + abs(e.input) for e in energies)
    return float(np.median(cpu)), float(np.ptp(balance)) / scale


def as_before(self: CompliantSet, q: Any, v: Any, rtol: float, atol: float, max_step: float):
    """The options before: the run's own tolerances, the step bound of a pressing contact."""
    return {"rtol": rtol, "atol": atol, "max_step": min(max_step, self.max_step(q, v))}


def main() -> None:
    scenes = {
        name: parse_scene(json.loads((SCENES / f"{name}.json").read_text()))
        for name in ("soft_floor_ball", "newton_cradle_5_hertz", "elastic_stop")
    }
    scenes["hertz_stop (forced, spring)"] = hertz_stop()
    now = CompliantSet.ode_options
    print(
        f"{'scene':30s} {'cpu now':>9s} {'cpu before':>11s} {'ratio':>6s} "
        f"{'balance now':>12s} {'before':>9s}"
    )
    for name, scene in scenes.items():
        cpu_now, balance_now = measure(scene)
        CompliantSet.ode_options = as_before  # type: ignore[method-assign]
        try:
            cpu_before, balance_before = measure(scene)
        finally:
            CompliantSet.ode_options = now  # type: ignore[method-assign]
        print(
            f"{name:30s} {cpu_now:9.3f} {cpu_before:11.3f} {cpu_now / cpu_before:6.2f} "
            f"{balance_now:12.1e} {balance_before:9.1e}"
        )


if __name__ == "__main__":
    main()
