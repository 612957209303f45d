"""Free beads in a bead model: closed-form parabolas, never one huge cluster of the general flow.

A bead with no spring moves along its rail under a constant force and the
scene's harmonic forces: ``x = x0 + v0 t + f t² / (2 m) − (a / (m Ω²))
(sin(Ω t + φ) − sin φ − Ω t cos φ)``. In the modal form
(solver/modal_flow.py) such a bead is a mode of ``ω = 0``; at 4ecf194 every
such mode went to one general :class:`solver.linear_flow.LinearFlow`, whose
``2 × free`` zero eigenvalues form ONE nilpotent cluster: the bundled
two-mass scene with 200 free beads spent 30 s in one projection map and the
CLI gave no answer in 300 s. The checks below count structure (the largest
cluster any general flow decomposes), never seconds.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest

import solver.linear_flow as linear_flow_module
from solver.linear_bead_model import LinearBeadModel
from solver.linear_flow import LinearFlow
from solver.modal_flow import ModalFlow
from solver.scene import parse_scene
from solver.simulation import make_stepper

SCENES = Path(__file__).resolve().parents[1] / "resources" / "scenes"
EPS = float(np.finfo(float).eps)


def two_masses_plus_free(beads: int, t_end: float, name: str = "two_masses_elastic") -> dict:
    """A bundled two-mass scene and ``beads`` free 100 kg beads in a row after it (fuzz pattern)."""
    scene = json.loads((SCENES / f"{name}.json").read_text())
    last = scene["bodies"][-1]
    x = max(b["x"] for b in scene["bodies"]) + 4 * last["radius"]
    for k in range(beads):
        bead = copy.deepcopy(last)
        bead.update(id=f"extra{k}", x=x, vx=0.0)
        scene["bodies"].append(bead)
        x += 3 * bead["radius"]
    scene["solver"].update(t_end=t_end, dt_out=0.01)
    return scene


def test_free_beads_are_parabolas_with_the_forcing_particular_part():
    # 3 anchored beads in a chain and 9 free ones, a constant force and a harmonic force
    # on a free bead and on a chained one: the free beads against the closed form above
    n = 12
    masses = np.linspace(1.0, 3.0, n)
    K = np.zeros((n, n))
    for i in range(2):
        K[i : i + 2, i : i + 2] += 50.0 * np.array([[1.0, -1.0], [-1.0, 1.0]])
    K[0, 0] += 80.0
    f0 = np.linspace(-2.0, 3.0, n)
    a_free, a_chain, omega, phase = np.zeros(n), np.zeros(n), 3.0, 0.7
    a_free[7] = 4.0
    a_chain[2] = 5.0
    flow = ModalFlow(
        np.diag(masses), np.zeros((n, n)), K, f0,
        [(a_free, omega, phase), (a_chain, 11.0, 0.2)], (0.0, 0.0),
    )  # fmt: skip
    assert len(flow._special) == 0  # no general flow at all
    assert len(flow._free) == n - 3
    rng = np.random.default_rng(5)
    q0, v0, t0 = rng.normal(size=n), rng.normal(size=n), 0.4
    phase_motion = flow.start(t0, q0, v0)
    ts = np.linspace(t0, t0 + 3.0, 7)
    q, v, acc = phase_motion.kinematics(ts)
    tau = ts - t0
    for i in range(3, n):
        a = a_free[i] / masses[i]
        s0, c0 = math.sin(omega * t0 + phase), math.cos(omega * t0 + phase)
        x = (
            q0[i] + v0[i] * tau + 0.5 * f0[i] / masses[i] * tau**2
            - a / omega**2 * (np.sin(omega * ts + phase) - s0 - omega * tau * c0)
        )  # fmt: skip
        xd = v0[i] + f0[i] / masses[i] * tau - a / omega * (np.cos(omega * ts + phase) - c0)
        xdd = f0[i] / masses[i] + a * np.sin(omega * ts + phase)
        scale = 1.0 + np.abs(x).max() + np.abs(xd).max() + np.abs(xdd).max()
        assert np.abs(q[:, i] - x).max() <= 64 * EPS * scale
        assert np.abs(v[:, i] - xd).max() <= 64 * EPS * scale
        assert np.abs(acc[:, i] - xdd).max() <= 64 * EPS * scale
        # a free bead's curvature bound holds its acceleration
        rows = np.zeros((1, n))
        rows[0, i] = 1.0
        bound = phase_motion.curvature_bounds(rows, t0, t0 + 3.0)[0]
        assert np.abs(xdd).max() <= bound * (1 + 1e-12)


def _largest_cluster(monkeypatch, scene: dict) -> tuple[int, list]:
    """Run ``scene``; the largest eigenvalue cluster any general flow decomposed, and the run."""
    largest = [0]
    original = linear_flow_module._decompose

    def spy(G):
        found = original(G)
        largest[0] = max([largest[0], *(len(idx) for idx, _, _ in found.clusters)])
        return found

    monkeypatch.setattr(linear_flow_module, "_decompose", spy)
    stepper = make_stepper(parse_scene(scene))
    frames, events, steps = [], [], 0
    while stepper.status == "running":
        out = stepper.step()
        frames += out.frames
        events += out.events
        steps += 1
    assert stepper.status == "finished"
    return largest[0], [frames, events]


@pytest.mark.parametrize("beads", [40])
def test_free_beads_never_reach_the_general_flow_as_one_cluster(monkeypatch, beads):
    # at 4ecf194 the 40 free beads' 80 zero eigenvalues were one cluster (81 with the
    # constant force's); now no general flow sees more than a few coordinates
    largest, (frames, events) = _largest_cluster(monkeypatch, two_masses_plus_free(beads, 0.56))
    assert largest <= 4
    impacts = [e for e in events if e.type == "impact"]
    # m1–m2, then the momentum handed down the row of equal free beads (e = 1)
    assert [(e.body, e.other) for e in impacts][:4] == [
        ("m1", "m2"), ("m2", "extra0"), ("extra0", "extra1"), ("extra1", "extra2"),
    ]  # fmt: skip
    # between two impacts a free bead moves at constant speed: the gap 0.05 m between
    # extra0 and extra1 closes in 0.05 / v with v the speed extra0 took from m2 (equal
    # masses, e = 1: all of it)
    t_hit = [e.t for e in impacts]
    frame = next(f for f in frames if t_hit[1] < f.t < t_hit[2])
    v = frame.v[2]
    assert v > 0.0
    assert abs((t_hit[2] - t_hit[1]) - 0.05 / v) <= 1e-12 * (t_hit[2] - t_hit[1])
    assert abs((t_hit[3] - t_hit[2]) - 0.05 / v) <= 1e-12 * (t_hit[3] - t_hit[2])


def test_beads_held_by_a_contact_move_apart_from_the_free_ones(monkeypatch):
    # two_masses_plastic: m1 and m2 stick (e = 0), a persistent contact; at 4ecf194 its
    # constrained general flow held the 40 free beads too (an 81-eigenvalue cluster; 200
    # beads: 401, a 3.5 s step; 400 beads: one step of 61 s)
    largest, (frames, events) = _largest_cluster(
        monkeypatch, two_masses_plus_free(40, 1.0, "two_masses_plastic")
    )
    assert largest <= 4
    kinds = [(e.type, e.body, e.other) for e in events]
    assert kinds[:3] == [("impact", "m1", "m2"), ("impact", "m1", "m2"), ("liftoff", "m1", "m2")]
    assert all(np.all(f.v[2:] == 0.0) for f in frames)  # never struck: at rest exactly


def test_a_split_flow_equals_the_whole_constrained_flow():
    # beads 0–2 on anchor springs, 1 and 2 held together by a contact row, 3–9 a free
    # anchored chain and free beads, a forced free bead: the split flow against the one
    # general flow of all ten beads
    n = 10
    masses = np.linspace(1.0, 2.0, n)
    K = np.zeros((n, n))
    K[0, 0] = K[1, 1] = 40.0
    for i, j in ((0, 1), (4, 5), (5, 6)):
        K[np.ix_([i, j], [i, j])] += 30.0 * np.array([[1.0, -1.0], [-1.0, 1.0]])
    K[4, 4] += 20.0
    f0 = np.linspace(-1.0, 2.0, n)
    amp = np.zeros(n)
    amp[8] = 3.0
    A = np.zeros((1, n))
    A[0, 1], A[0, 2] = -1.0, 1.0
    rng = np.random.default_rng(2)
    q0 = rng.normal(size=n)
    q0[2] = q0[1] + 0.1
    v0 = rng.normal(size=n)
    v0[2] = v0[1]
    b = A @ q0

    harmonics = (linear_flow_module.Harmonic(amp, 2.5, 0.3),)
    model = LinearBeadModel(masses, np.zeros((n, n)), K, f0, harmonics, np.zeros((0, n)), [])
    from solver.modal_flow import SplitFlow, split_flow  # new at this commit

    split = split_flow(model, A, b)
    assert isinstance(split, SplitFlow)
    assert list(split.held) == [0, 1, 2]
    whole = LinearFlow(model.M, model.C, K, f0, model.harmonics, A, b)
    ts = np.linspace(0.3, 2.3, 9)
    mine, ref = split.start(0.3, q0, v0), whole.start(0.3, q0, v0)
    for got, want in zip(mine.kinematics(ts), ref.kinematics(ts), strict=True):
        assert np.abs(got - want).max() <= 1e-12 * (1.0 + np.abs(want).max())
    assert np.abs(mine.reaction(ts) - ref.reaction(ts)).max() <= 1e-11
    rows = np.zeros((2, n))
    rows[0, [2, 3]] = -1.0, 1.0  # a gap across the two parts
    rows[1, [7, 8]] = -1.0, 1.0
    proj = mine.projections(rows)
    q = ref.state(ts)[0]
    for k in range(2):
        got = [proj.value(k, t) for t in ts]
        assert np.abs(np.array(got) - q @ rows[k]).max() <= 1e-12 * (1.0 + np.abs(q).max())
