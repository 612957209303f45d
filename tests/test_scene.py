"""The scene model and file: validation messages, defaults, round trips, atomic save."""

import copy
import itertools
import json
import math
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from solver import scene as scene_module
from solver.errors import InputError
from solver.scene import (
    AxleCart,
    Bead,
    PolylineBoundary,
    Scene,
    SceneError,
    SegmentBoundary,
    Wheel,
    load_scene,
    parse_scene,
    save_scene,
    scene_to_dict,
)

SCENES = sorted((Path(__file__).parent.parent / "resources" / "scenes").glob("*.json"))


def curb_scene() -> dict:
    """The docs/CONTRACT.md example, extended by a second bead so body–body springs resolve."""
    return {
        "format": "impactgui-scene",
        "version": 1,
        "title": "Wheel against a curb",
        "gravity": [0.0, -9.81],
        "contact": {"restitution": 0.3, "friction": 0.4, "impact_law": "staged"},
        "boundaries": [
            {
                "id": "curb",
                "type": "polyline",
                "points": [[0, 0.6], [0, 0.05], [0.4, 0.05], [0.4, 0], [2, 0]],
            },
            {"id": "wall", "type": "segment", "a": [2, 0], "b": [2, 0.5], "restitution": 1.0},
            {
                "id": "bump",
                "type": "arc",
                "center": [1, 0],
                "radius": 0.1,
                "start_deg": 0,
                "end_deg": 180,
            },
        ],
        "bodies": [
            {
                "id": "wheel",
                "type": "wheel",
                "mass": 10,
                "inertia": 0.05,
                "radius": 0.1,
                "position": [0.8, 0.2],
                "angle": 0,
                "velocity": [-5, -3],
                "angular_velocity": 0,
            },
            {
                "id": "b1",
                "type": "bead",
                "rail_y": 0.5,
                "mass": 1,
                "radius": 0.05,
                "x": 0.3,
                "vx": 1,
            },
            {"id": "b2", "type": "bead", "rail_y": 0.5, "mass": 1, "radius": 0.05, "x": 0.5},
        ],
        "springs": [
            {"a": "b1", "b": "b2", "stiffness": 8000, "rest_length": 0.1, "damping": 0},
            {"a": "b1", "anchor": [0.0, 0.5], "stiffness": 8000, "rest_length": 0.3},
        ],
        "forces": [
            {"body": "b1", "type": "harmonic", "amplitude": [5, 0], "omega": 6.28, "phase": 0}
        ],
        "solver": {"method": "event-driven", "t_end": 1.0, "dt_out": 0.001},
    }


def problems_of(data: dict) -> list[str]:
    with pytest.raises(SceneError) as caught:
        parse_scene(data)
    return caught.value.problems


# ------------------------------------------------------------------ bundled scenes


def test_every_bundled_scene_is_present():
    names = {path.stem for path in SCENES}
    assert {
        "wheel_curb_e0",
        "wheel_curb_e03",
        "two_masses_plastic",
        "two_masses_elastic",
        "mass_between_stops",
        "mass_spring_stop_at_rest",
        "mass_spring_stop_offset",
        "chain_forced",
        "four_balls",
        "newton_cradle_3_staged",
        "newton_cradle_3_sequential",
        "newton_cradle_5_staged",
        "newton_cradle_5_sequential",
        "bouncing_ball",
        "axle_cart",
        "forced_mass_between_stops",
        "elastic_stop",
        "soft_floor_ball",
        "newton_cradle_5_hertz",
    } <= names


@pytest.mark.parametrize("path", SCENES, ids=[p.stem for p in SCENES])
def test_bundled_scene_loads_and_round_trips_exactly(path, tmp_path):
    scene = load_scene(path)
    assert scene.title and scene.description
    copy_path = tmp_path / path.name
    save_scene(scene, copy_path)
    again = load_scene(copy_path)
    assert again == scene
    assert scene_to_dict(again) == scene_to_dict(scene)
    assert copy_path.read_text() == path.read_text()


def test_bundled_curb_scene_is_the_paper_004_setup():
    scene = load_scene(next(p for p in SCENES if p.stem == "wheel_curb_e03"))
    wheel = scene.body("wheel")
    assert (wheel.mass, wheel.inertia, wheel.radius) == (10.0, 0.05, 0.1)
    assert wheel.position == (0.8, 0.2) and wheel.velocity == (-5.0, -3.0)
    assert scene.contact_params("curb#v2") == (0.3, 0.4)


def test_four_balls_scene_starts_touching_with_the_paper_velocities():
    scene = load_scene(next(p for p in SCENES if p.stem == "four_balls"))
    balls = scene.bodies
    assert [b.vx for b in balls] == [1.0, 0.0, 0.0, 1 / 3]
    gaps = [b.x - a.x - a.radius - b.radius for a, b in itertools.pairwise(balls)]
    assert gaps == [0.0, 0.0, 0.0]


# ------------------------------------------------------------------ defaults, accessors


def test_missing_optional_keys_take_the_documented_defaults():
    scene = parse_scene(
        {
            "format": "impactgui-scene",
            "version": 1,
            "boundaries": [{"id": "floor", "type": "segment", "a": [-1, 0], "b": [1, 0]}],
            "bodies": [
                {
                    "id": "w",
                    "type": "wheel",
                    "mass": 1,
                    "inertia": 0.1,
                    "radius": 0.1,
                    "position": [0, 1],
                },
                {"id": "b", "type": "bead", "rail_y": 2, "mass": 1, "radius": 0.1, "x": 0},
            ],
            "springs": [{"a": "b", "anchor": [1, 2], "stiffness": 10, "rest_length": 1}],
            "forces": [{"body": "w", "amplitude": [1, 0], "omega": 2}],
        }
    )
    assert scene.title == "Untitled" and scene.description == "" and scene.view == "side"
    assert scene.gravity == (0.0, -9.81)
    assert (scene.contact.restitution, scene.contact.friction) == (0.5, 0.0)
    assert scene.contact.impact_law == "staged"
    wheel = scene.body("w")
    assert (wheel.angle, wheel.velocity, wheel.angular_velocity) == (0.0, (0.0, 0.0), 0.0)
    assert scene.body("b").vx == 0.0
    assert scene.springs[0].damping == 0.0 and scene.springs[0].b is None
    assert (scene.forces[0].type, scene.forces[0].phase) == ("harmonic", 0.0)
    assert scene.impulses == ()
    solver = scene.solver
    assert (solver.method, solver.t_end, solver.dt_out, solver.dt) == (
        "event-driven",
        1.0,
        0.001,
        1e-4,
    )
    assert solver.rtol is None and solver.atol is None
    assert scene.boundary("floor").restitution is None


def test_top_view_defaults_to_no_gravity_and_cart_rates_to_zero():
    scene = parse_scene(
        {
            "format": "impactgui-scene",
            "version": 1,
            "view": "top",
            "bodies": [
                {
                    "id": "cart",
                    "type": "axle_cart",
                    "axle_mass": 1,
                    "half_length": 0.1,
                    "wheel_mass": 1,
                    "wheel_radius": 0.1,
                    "position": [0, 0],
                }
            ],
        }
    )
    cart = scene.body("cart")
    assert isinstance(cart, AxleCart)
    assert scene.gravity == (0.0, 0.0)
    assert cart.wheel_angles == (0.0, 0.0) and cart.wheel_rates == (0.0, 0.0)


def test_contact_params_resolve_boundary_overrides_and_fall_back_to_defaults():
    scene = parse_scene(curb_scene())
    assert scene.contact_params("wall") == (1.0, 0.4)
    assert scene.contact_params(scene.boundary("curb")) == (0.3, 0.4)
    assert scene.contact_params("curb#s1") == (0.3, 0.4)
    assert scene.contact_params(None) == (0.3, 0.4)
    assert scene.contact_params("b2") == (0.3, 0.4)


def test_accessors_find_bodies_and_boundaries_by_id():
    scene = parse_scene(curb_scene())
    assert isinstance(scene.body("wheel"), Wheel)
    assert isinstance(scene.body("b1"), Bead)
    assert isinstance(scene.boundary("curb"), PolylineBoundary)
    assert isinstance(scene.boundary("wall#v1"), SegmentBoundary)
    with pytest.raises(KeyError):
        scene.body("nobody")
    with pytest.raises(KeyError):
        scene.boundary("nowhere")


def test_scene_is_immutable():
    scene = parse_scene(curb_scene())
    with pytest.raises(Exception, match="frozen"):
        scene.title = "changed"
    with pytest.raises(Exception, match="frozen"):
        scene.body("wheel").mass = 1.0


# ------------------------------------------------------------------ field errors


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda d: d["bodies"][0].update(mass=-1), "bodies[0].mass: must be > 0, got -1"),
        (lambda d: d["bodies"][2].update(radius=0), "bodies[2].radius: must be > 0, got 0"),
        (lambda d: d["bodies"][0].update(inertia=0.0), "bodies[0].inertia: must be > 0, got 0.0"),
        (
            lambda d: d["contact"].update(restitution=1.5),
            "contact.restitution: must be <= 1, got 1.5",
        ),
        (
            lambda d: d["boundaries"][1].update(restitution=1.5),
            "boundaries[1].restitution: must be <= 1, got 1.5",
        ),
        (lambda d: d["contact"].update(friction=-0.1), "contact.friction: must be >= 0, got -0.1"),
        (lambda d: d["bodies"][0].update(colour="red"), "bodies[0].colour: unknown key"),
        (lambda d: d.update(author="me"), "author: unknown key"),
        (
            lambda d: d["contact"].update(impact_law="foo"),
            "contact.impact_law: must be one of staged, poisson, sequential, newton, got 'foo'",
        ),
        (
            lambda d: d["boundaries"][1].update(type="circle"),
            "boundaries[1].type: must be one of segment, polyline, arc, got 'circle'",
        ),
        (lambda d: d["bodies"][1].pop("type"), "bodies[1].type: required key is missing"),
        (lambda d: d["bodies"][0].pop("mass"), "bodies[0].mass: required key is missing"),
        (
            lambda d: d["bodies"][0].update(position=[1, 2, 3]),
            "bodies[0].position: must be a pair [x, y], got [1, 2, 3]",
        ),
        (
            lambda d: d["bodies"][0].update(velocity=["a", 0]),
            "bodies[0].velocity[0]: must be a number, got 'a'",
        ),
        (lambda d: d["bodies"][1].update(x=True), "bodies[1].x: must be a number, got true"),
        (
            lambda d: d["bodies"][1].update(x=float("nan")),
            "bodies[1].x: must be a finite number, got nan",
        ),
        (
            lambda d: d["boundaries"][0].update(points=[[0, 0]]),
            "boundaries[0].points: must have at least 2 items, got 1",
        ),
        (
            lambda d: d["bodies"][0].update(id="w#1"),
            "bodies[0].id: must be a non-empty name without '#', got 'w#1'",
        ),
        (
            lambda d: d["solver"].update(method="rk4"),
            "solver.method: must be one of event-driven, time-stepping, got 'rk4'",
        ),
        (lambda d: d["solver"].update(t_end=0), "solver.t_end: must be > 0, got 0"),
        (lambda d: d.update(view="front"), "view: must be one of side, top, got 'front'"),
    ],
)
def test_bad_field_is_reported_with_its_json_path(edit, expected):
    data = curb_scene()
    edit(data)
    assert expected in problems_of(data)


def test_every_problem_is_reported_at_once_and_str_joins_them():
    data = curb_scene()
    data["bodies"][0]["mass"] = -1
    data["bodies"][2]["radius"] = 0
    with pytest.raises(SceneError) as caught:
        parse_scene(data)
    assert caught.value.problems == [
        "bodies[0].mass: must be > 0, got -1",
        "bodies[2].radius: must be > 0, got 0",
    ]
    assert str(caught.value) == "\n".join(caught.value.problems)
    assert isinstance(caught.value, InputError) and isinstance(caught.value, ValueError)


def test_spring_needs_exactly_one_other_end():
    data = curb_scene()
    data["springs"][0]["anchor"] = [0, 0]
    assert problems_of(data) == [
        "springs[0]: give exactly one of 'b' (a body id) or 'anchor' (a point [x, y])"
    ]


# ------------------------------------------------------------------ physical errors


def test_overlap_with_a_boundary_names_both_and_the_penetration():
    data = curb_scene()
    data["bodies"][0]["position"] = [0.8, 0.088]
    assert problems_of(data) == [
        "bodies[0]: overlaps boundary 'curb' at t = 0 (penetration 0.012 m)"
    ]


def test_overlap_of_two_bodies_names_both():
    data = curb_scene()
    data["bodies"][2]["x"] = 0.38
    assert problems_of(data) == ["bodies[2]: overlaps body 'b1' at t = 0 (penetration 0.02 m)"]


def test_beads_on_different_rails_still_collide_as_disks():
    data = curb_scene()
    data["bodies"][2].update(x=0.3, rail_y=0.55)
    assert problems_of(data) == ["bodies[2]: overlaps body 'b1' at t = 0 (penetration 0.05 m)"]


def test_arc_runs_counter_clockwise_from_start_to_end_when_checking_overlap():
    data = curb_scene()
    data["bodies"][0]["position"] = [1.0, 0.15]
    assert problems_of(data) == [
        "bodies[0]: overlaps boundary 'bump' at t = 0 (penetration 0.05 m)"
    ]
    data["boundaries"][2].update(start_deg=180, end_deg=0)
    assert parse_scene(data).body("wheel").position == (1.0, 0.15)


def test_touching_chain_and_resting_wheel_are_allowed():
    beads = [
        {"id": f"b{i}", "type": "bead", "rail_y": 0, "mass": 1, "radius": 0.05, "x": 0.1 * i}
        for i in range(10)
    ]
    wheel = {
        "id": "w",
        "type": "wheel",
        "mass": 1,
        "inertia": 1,
        "radius": 0.3,
        "position": [0, 1.3],
    }
    floor = {"id": "floor", "type": "segment", "a": [-1, 1], "b": [1, 1]}
    scene = parse_scene(
        {
            "format": "impactgui-scene",
            "version": 1,
            "boundaries": [floor],
            "bodies": [*beads, wheel],
        }
    )
    assert len(scene.bodies) == 11


def test_duplicate_ids_across_bodies_and_boundaries_are_refused():
    data = curb_scene()
    data["bodies"][1]["id"] = "curb"
    data["springs"] = []
    data["forces"] = []
    assert "bodies[1].id: duplicate id 'curb' (also boundaries[0])" in problems_of(data)


def test_dangling_references_and_self_springs_are_refused():
    data = curb_scene()
    data["springs"][0]["b"] = "ghost"
    data["springs"][1]["a"] = "b1"
    data["springs"].append({"a": "b2", "b": "b2", "stiffness": 1, "rest_length": 0})
    data["forces"][0]["body"] = "nobody"
    assert problems_of(data) == [
        "springs[0].b: no body with id 'ghost'",
        "springs[2].b: a spring cannot join body 'b2' to itself",
        "forces[0].body: no body with id 'nobody'",
    ]


def test_degenerate_boundaries_are_refused():
    data = curb_scene()
    data["boundaries"][1]["b"] = [2, 0]
    data["boundaries"][0]["points"].insert(2, [0, 0.05])
    data["boundaries"][2]["end_deg"] = 0
    assert problems_of(data) == [
        "boundaries[0].points[2]: repeats the previous point [0.0, 0.05]",
        "boundaries[1].b: zero-length segment: b equals a = [2.0, 0.0]",
        "boundaries[2].end_deg: must differ from start_deg by > 0 and <= 360 degrees, got 0",
    ]


def test_views_and_body_types_must_agree():
    data = curb_scene()
    data["bodies"].append(
        {
            "id": "cart",
            "type": "axle_cart",
            "axle_mass": 1,
            "half_length": 0.1,
            "wheel_mass": 1,
            "wheel_radius": 0.1,
            "position": [5, 5],
        }
    )
    assert problems_of(data) == ['bodies[3].type: an axle cart needs "view": "top"']
    data["view"] = "top"
    assert problems_of(data) == [
        "gravity: must be [0, 0] in a top view, got [0.0, -9.81]",
        "bodies[0].type: a top view holds axle carts only, got 'wheel'",
        "bodies[1].type: a top view holds axle carts only, got 'bead'",
        "bodies[2].type: a top view holds axle carts only, got 'bead'",
        "boundaries: not supported in a top view (axle carts only)",
        "springs: not supported in a top view (axle carts only)",
        "forces: not supported in a top view (axle carts only)",
    ]


def test_impulses_act_on_existing_axle_carts_only():
    data = curb_scene()
    data["impulses"] = [{"time": 0.5, "body": "wheel", "point": [0, 0], "vector": [1, 0]}]
    assert problems_of(data) == ["impulses[0].body: impulses act on axle carts only, got a wheel"]
    data["impulses"][0]["body"] = "ghost"
    assert problems_of(data) == ["impulses[0].body: no body with id 'ghost'"]


# ------------------------------------------------------------------ format, version, JSON


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda d: d.update(format="other"),
            "format: must be 'impactgui-scene' (not an impactgui scene?), got 'other'",
        ),
        (
            lambda d: d.pop("format"),
            "format: must be 'impactgui-scene' (not an impactgui scene?), got nothing",
        ),
        (
            lambda d: d.update(version=3),
            "version: 3 is newer than this program reads (2); update impactgui",
        ),
        (lambda d: d.update(version=0), "version: must be a positive integer, got 0"),
        (lambda d: d.update(version="1"), "version: must be a positive integer, got '1'"),
        (
            lambda d: d.pop("version"),
            "version: required key is missing (this program writes 2)",
        ),
    ],
)
def test_wrong_format_or_version_is_refused_clearly(edit, expected):
    data = curb_scene()
    edit(data)
    assert problems_of(data) == [expected]


def test_a_non_object_is_refused():
    with pytest.raises(SceneError, match=r"\(scene\): must be a JSON object, got \[1, 2\]"):
        parse_scene([1, 2])


def test_json_syntax_error_is_reported_with_line_and_column(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{\n  "format": "impactgui-scene",\n  "version": 1\n  "title": "x"\n}\n')
    with pytest.raises(SceneError) as caught:
        load_scene(path)
    (problem,) = caught.value.problems
    assert problem == f"{path}: invalid JSON at line 4, column 3: Expecting ',' delimiter"


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(SceneError, match="cannot read the file"):
        load_scene(tmp_path / "absent.json")


# ------------------------------------------------------------------ save


def test_save_writes_every_default_and_drops_unset_overrides(tmp_path):
    path = tmp_path / "scene.json"
    save_scene(parse_scene(curb_scene()), path)
    written = json.loads(path.read_text())
    assert written["solver"] == {
        "method": "event-driven",
        "t_end": 1.0,
        "dt_out": 0.001,
        "dt": 1e-4,
    }
    assert written["impulses"] == [] and written["view"] == "side"
    assert "restitution" not in written["boundaries"][0]
    assert written["boundaries"][1]["restitution"] == 1.0


def test_failed_save_leaves_the_old_file_intact_and_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "scene.json"
    path.write_text("original contents")

    def fail_midway(fd):
        raise OSError("disk full")

    monkeypatch.setattr(scene_module.os, "fsync", fail_midway)
    with pytest.raises(OSError, match="disk full"):
        save_scene(parse_scene(curb_scene()), path)
    assert path.read_text() == "original contents"
    assert os.listdir(tmp_path) == ["scene.json"]


def test_failed_serialisation_touches_nothing(tmp_path, monkeypatch):
    path = tmp_path / "scene.json"
    path.write_text("original contents")

    def refuse(value, *args, **kwargs):
        raise TypeError("cannot serialise")

    monkeypatch.setattr(scene_module.json, "dumps", refuse)
    with pytest.raises(TypeError):
        save_scene(parse_scene(curb_scene()), path)
    assert path.read_text() == "original contents"
    assert os.listdir(tmp_path) == ["scene.json"]


finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
positive = st.floats(min_value=1e-6, max_value=1e6, allow_nan=False, allow_infinity=False)


@given(
    mass=positive,
    inertia=positive,
    radius=st.floats(min_value=1e-6, max_value=10),
    position=st.tuples(finite, finite),
    velocity=st.tuples(finite, finite),
    omega=finite,
    restitution=st.floats(min_value=0, max_value=1),
    t_end=st.floats(min_value=1e-6, max_value=1e3),  # at most 1e6 samples of 1 ms
)
def test_any_valid_wheel_scene_round_trips_exactly(
    tmp_path_factory, mass, inertia, radius, position, velocity, omega, restitution, t_end
):
    scene = Scene(
        bodies=(
            Wheel(
                id="w",
                mass=mass,
                inertia=inertia,
                radius=radius,
                position=position,
                velocity=velocity,
                angular_velocity=omega,
            ),
        ),
        contact={"restitution": restitution},
        solver={"t_end": t_end},
    )
    path = tmp_path_factory.mktemp("roundtrip") / "scene.json"
    save_scene(scene, path)
    again = load_scene(path)
    assert again == scene
    assert math.copysign(1.0, again.body("w").angular_velocity) == math.copysign(1.0, omega)


def test_editing_a_copy_leaves_the_original_scene_unchanged():
    scene = parse_scene(curb_scene())
    data = copy.deepcopy(scene_to_dict(scene))
    data["bodies"][0]["mass"] = 20.0
    edited = parse_scene(data)
    assert edited.body("wheel").mass == 20.0 and scene.body("wheel").mass == 10.0
