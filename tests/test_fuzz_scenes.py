"""Fuzzing scene files: mutated bundled scenes through the loader and the command line.

Mutations: a value of another type, a magnitude from 1e-320 to 1e320, deep
nesting, long lists and strings, degenerate geometry (zero-length walls,
coinciding bodies, tiny radii), tiny time steps, deleted and unknown keys,
text that cannot be saved. Every file must load or be refused with lines
naming a JSON path; every run must end with exit 0, 2 or 3 and no traceback,
and a run that computed something writes finite numbers. CI runs a fixed
(derandomized) set within about a minute; bench/fuzz.py runs 10 000.
"""

from __future__ import annotations

import copy
import io
import json
import math
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from solver import cli
from solver.record import csv_set_problems
from solver.scene import SceneError, load_scene

SCENES = sorted((Path(__file__).resolve().parents[1] / "resources" / "scenes").glob("*.json"))
BASES = [json.loads(path.read_text(encoding="utf-8")) for path in SCENES]

odd_values = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=5),
    st.sampled_from(["\ud800", [], {}, [1, 2, 3], {"k": 1}, 10**400]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**70), 2**70),
)


def _paths(node, path=()):
    if path:
        yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*path, index))


def _parent(data, path):
    for part in path[:-1]:
        data = data[part]
    return data


@st.composite
def mutated_scenes(draw) -> str:
    """The JSON text of a bundled scene after one to three mutations."""
    data = copy.deepcopy(draw(st.sampled_from(BASES)))
    deep = 0
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(data))
        path = draw(st.sampled_from(paths))
        parent, key = _parent(data, path), path[-1]
        kind = draw(
            st.sampled_from(
                ["type", "scale", "nest", "size", "degenerate", "delete", "unknown", "solver"]
            )
        )
        if kind == "type":
            parent[key] = draw(odd_values)
        elif kind == "scale" and isinstance(parent[key], (int, float)):
            parent[key] = float(parent[key] or 1.0) * 10.0 ** draw(st.integers(-320, 308))
        elif kind == "nest":
            deep = max(deep, draw(st.sampled_from([17, 100, 5000, 200_000])))
        elif kind == "size":
            section = draw(st.sampled_from(["bodies", "boundaries", "springs", "title"]))
            if section == "title":
                data["title"] = "t" * draw(st.sampled_from([10_001, 100_000]))
            elif isinstance(data.get(section), list) and 0 < len(data[section]) <= 100:
                data[section] = data[section] * draw(
                    st.sampled_from([2, 50, 10_001 // len(data[section]) + 1])
                )
        elif kind == "degenerate":
            # an earlier mutation may have made a section or an item another type
            boundaries = data.get("boundaries")
            for boundary in boundaries if isinstance(boundaries, list) else []:
                if isinstance(boundary, dict) and "a" in boundary:
                    boundary["b"] = list(boundary["a"])
            bodies = data.get("bodies")
            bodies = [b for b in bodies if isinstance(b, dict)] if isinstance(bodies, list) else []
            if len(bodies) > 1 and "position" in bodies[0] and "position" in bodies[1]:
                bodies[1]["position"] = list(bodies[0]["position"])
            elif bodies and "radius" in bodies[0]:
                bodies[0]["radius"] = draw(st.sampled_from([0.0, 1e-300, 1e-7, 1e7]))
        elif kind == "delete" and isinstance(parent, dict):
            del parent[key]
        elif kind == "unknown":
            data["surprise"] = 1
        elif kind == "solver":
            solver = data.setdefault("solver", {})
            field = draw(st.sampled_from(["dt", "dt_out", "t_end"]))
            solver[field] = draw(st.sampled_from([1e-12, 1e-9, 1e-7, 1e7, 0.0, -1.0]))
            if field == "dt":
                solver["method"] = "time-stepping"
    text = json.dumps(data, ensure_ascii=True)
    if deep:
        text = text.replace('"title": ', '"title": ' + "[" * deep + "1" + "]" * deep + ', "x": ', 1)
    return text


@settings(max_examples=400)
@given(mutated_scenes())
def test_a_mutated_scene_loads_or_is_refused_with_json_paths(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("scene") / "scene.json"
    path.write_text(text, encoding="utf-8")
    try:
        scene = load_scene(path)
    except SceneError as error:
        assert error.problems
        for line in error.problems:
            head, _, reason = line.partition(": ")
            assert head and reason, line
        return
    assert all(math.isfinite(body.mass) for body in scene.bodies if hasattr(body, "mass"))


@settings(max_examples=60)
@given(mutated_scenes())
def test_a_mutated_scene_run_ends_in_exit_0_2_or_3_with_finite_files(tmp_path_factory, text):
    directory = tmp_path_factory.mktemp("run")
    path = directory / "scene.json"
    path.write_text(text, encoding="utf-8")
    out = directory / "out"
    stderr = io.StringIO()
    status = cli.main(["run", str(path), "--out", str(out), "--t-end", "0.02"], stderr=stderr)
    assert status in (0, 2, 3), stderr.getvalue()
    assert "Traceback" not in stderr.getvalue()
    if status == 2:
        assert not out.exists() or not any(out.iterdir())
    else:
        assert csv_set_problems(out) == []
