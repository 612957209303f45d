"""The compliant pair list: a pair apart is its full contact's gap and normal rate, bit for bit.

:meth:`solver.compliance.CompliantSet._every_pair` gives a pair apart and not
pressing as an :class:`~solver.compliance.Apart` (its gap and normal rate
only); every other pair gets the full contact. Here, at random states of two
wheels and a bead near a slanted segment, its corners and an arc, with
compliant body–body contacts, every entry is compared with the full contact
made independently (:func:`~solver.geometry.disk_feature_contact`,
:func:`~solver.geometry.disk_disk_contact`): the same None, the same gap and
rate bits, a full contact wherever the gap is not positive or the pair presses
(and on an arc, whose gap has no float route of its own here).
"""

from __future__ import annotations

import numpy as np

from solver.compliance import Apart
from solver.geometry import Arc, DiskContact, disk_disk_contact, disk_feature_contact
from solver.scene import parse_scene
from solver.system import System

LAW = {"stiffness": 1e5, "damping": 2.0, "exponent": 1.5}


def system() -> System:
    wheel = {"type": "wheel", "mass": 1.0, "inertia": 0.01, "radius": 0.1}
    return System(
        parse_scene(
            {
                "format": "impactgui-scene",
                "version": 2,
                "gravity": [0.0, -9.81],
                "contact": {"restitution": 0.5, "friction": 0.3, "compliance": LAW},
                "boundaries": [
                    {"id": "s", "type": "segment", "a": [-0.7, 0.1], "b": [0.9, -0.3]}
                    | {"compliance": LAW},
                    {"id": "arc", "type": "arc", "center": [0.0, 0.0], "radius": 1.5}
                    | {"start_deg": 200.0, "end_deg": 340.0, "compliance": LAW},
                ],
                "bodies": [
                    wheel | {"id": "w1", "position": [0.0, 0.3]},
                    wheel | {"id": "w2", "position": [0.3, 0.3]},
                    {"id": "b", "type": "bead", "mass": 0.5, "radius": 0.05}
                    | {"rail_y": 0.0, "x": 0.5},
                ],
                "solver": {"method": "event-driven", "t_end": 1.0, "dt_out": 0.01},
            }
        )
    )


def full(pairs, k: int, f: int, q: np.ndarray, v: np.ndarray):
    """Pair ``(k, f)``'s full contact, made here from the geometry's own functions."""
    s = pairs.system
    c, cd, om = s.centres(q), s.centre_velocities(v), s.angular_velocities(v)
    if f < len(pairs.features):
        return disk_feature_contact(pairs.features[f][1], c[k], cd[k], s.radii[k], om[k])
    j = f - len(pairs.features)
    return disk_disk_contact(c[k], cd[k], s.radii[k], om[k], c[j], cd[j], s.radii[j], om[j])


def test_a_pair_apart_is_its_full_contacts_gap_and_rate_bit_for_bit():
    sys_ = system()
    pairs = sys_.compliance.for_system(sys_)
    rng = np.random.default_rng(22)
    kinds = {"apart": 0, "full": 0, "none": 0}
    for trial in range(1500):
        q = sys_.q0 + rng.normal(scale=0.3, size=sys_.N)
        v = rng.normal(size=sys_.N)
        every = pairs._every_pair(q, v)
        # half the trials with every overlapping pair pressing
        pairs.engaged = None
        if trial % 2:
            pairs.engaged = frozenset((k, f) for k, f, dc in every if dc is not None and dc.g <= 0)
        for k, f, dc in pairs._every_pair(q, v):
            expected = full(pairs, k, f, q, v)
            if expected is None:
                assert dc is None
                kinds["none"] += 1
            elif isinstance(dc, Apart):
                assert expected.g > 0.0 and (pairs.engaged is None or (k, f) not in pairs.engaged)
                assert (dc.g, dc.u_n) == (expected.g, expected.u_n)
                assert np.float64(dc.g).tobytes() == np.float64(expected.g).tobytes()
                assert np.float64(dc.u_n).tobytes() == np.float64(expected.u_n).tobytes()
                kinds["apart"] += 1
            else:
                assert isinstance(dc, DiskContact)
                arc = f < len(pairs.features) and isinstance(pairs.features[f][1], Arc)
                pressing = pairs.engaged is not None and (k, f) in pairs.engaged
                assert not (expected.g > 0.0) or pressing or arc  # an arc's: always full
                assert (dc.g, dc.u_n, dc.u_t) == (expected.g, expected.u_n, expected.u_t)
                kinds["full"] += 1
    assert min(kinds.values()) > 100, kinds
