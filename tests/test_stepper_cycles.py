"""A dropped event-driven stepper is freed by its reference count: it leaves no cycle behind.

The stepper's parts call each other back (the Zeno summer its handler, the
affine scan its locator, the gap roots the affine scan) and the contact
kinematics keeps a dict of its pairs that asks it for new ones. Held
strongly, each of those made every run a reference cycle, left to the
garbage collector: on a bouncing ball (about 1 ms a run) the collections it
brought cost 20 % of the run. The back-edges are weak; these tests find any
object of the solver that only the collector could free after a run of the
faster phase kinds (bounce trains and free flights, a Zeno end, stop phases,
a cradle's impacts). The general phase still makes cycles inside scipy
(``brentq``'s counting wrapper, ``OdeSolver``'s closures), which hold its
pieces; they are not tested here.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from solver.scene import load_scene
from solver.simulation import make_stepper

SCENES = Path(__file__).resolve().parents[1] / "resources" / "scenes"


def solver_garbage(run) -> list[str]:
    """The types of the solver's objects that only the garbage collector frees after ``run()``."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        run()
        gc.collect()
        found = sorted(
            {type(o).__qualname__ for o in gc.garbage if type(o).__module__.startswith("solver")}
        )
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()
    return found


@pytest.mark.parametrize(
    "name",
    [
        "bouncing_ball",
        "four_balls",
        "forced_mass_between_stops",
        "newton_cradle_3_staged",
    ],
)
def test_a_finished_run_leaves_no_cycle(name):
    """The run's stepper, its parts, the compiled scene and its contact kinematics."""
    scene = load_scene(SCENES / f"{name}.json")

    def run() -> None:
        stepper = make_stepper(scene, t_end=1.0, dt_out=0.25)
        while stepper.status == "running":
            stepper.step()
        assert stepper.status == "finished"

    assert solver_garbage(run) == []


def test_a_compliant_run_frees_its_system_and_compliant_set():
    """System ↔ CompliantSet is no cycle: the set holds its system by a weak proxy.

    Both compiled scenes (the scene's System and the run's copy,
    ``System.for_one_run``) and their sets must go with their reference
    counts (they did not: 'CompliantSet', 'System', 'SystemContacts', the
    disks and features were the collector's). The elastic stop runs in
    closed form; its separation roots (``EventLocator.linear_scan``'s closures
    with ``brentq``) still leave the flow's objects in a cycle of their own,
    as DOP853's ``OdeSolver`` does for the general phase (the module's
    docstring), and are not asked about here — a scene integrated by DOP853
    cannot be asked at all, its solver's cycle holding the whole stepper.
    """
    scene = load_scene(SCENES / "elastic_stop.json")

    def run() -> None:
        stepper = make_stepper(scene, t_end=1.0, dt_out=0.25)
        while stepper.status == "running":
            stepper.step()
        assert stepper.status == "finished"

    garbage = solver_garbage(run)
    held = {"System", "SystemContacts", "CompliantSet", "CompliantEvents", "_Disk", "Segment"}
    assert held.isdisjoint(garbage), garbage
