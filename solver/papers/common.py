"""What every paper's regeneration shares: table rows, runs of bundled scenes, figures.

A paper module (``solver.papers.paper_NNN``) has a function ``build(out)``
that returns a :class:`PaperOutput`: its rows (one per scalar the paper
prints or plots) and the figures it drew into ``out`` (each as PNG and SVG,
through :func:`save_figure`). Figures are drawn with matplotlib's
object-oriented API on the Agg canvas — no pyplot state, no GUI toolkit.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from solver.atomic_file import atomic_write
from solver.scene import Scene, load_scene
from solver.scene_paths import with_values
from solver.simulation import simulate

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from solver.record import Trajectory

TABLE_FILE = "table.csv"
TABLE_COLUMNS = ("item", "quantity", "printed", "computed", "difference", "note")
SCENES = Path(__file__).resolve().parents[2] / "resources" / "scenes"
"""The bundled scenes the papers' runs start from."""
MATCH_TOL = 1e-9
"""A row matches when ``|difference| ≤ MATCH_TOL · max(1, |printed|)``."""
FIGURE_FORMATS = ("png", "svg")
SVG_TEXT = {"svg.fonttype": "none"}
"""SVG text stays text (searchable, editable), not glyph outlines."""


@dataclass(frozen=True)
class Row:
    """One scalar of a paper: what it prints and what the program computes.

    ``printed`` is ``None`` where the paper prints no number (then the row
    shows what the program computes for a figure or formula); ``computed``
    is ``None`` where the program does not yet compute it (``note`` says
    why). ``note`` is non-empty where the paper slips.
    """

    item: str
    quantity: str
    printed: float | None
    computed: float | None
    note: str = ""
    scene: str = ""
    """The bundled scene whose run makes the row (its name without ``.json``), if any."""

    @property
    def difference(self) -> float | None:
        if self.printed is None or self.computed is None:
            return None
        return self.computed - self.printed

    @property
    def matches(self) -> bool:
        """The printed value is reproduced (or there is none to reproduce)."""
        d = self.difference
        if d is None:
            return self.computed is not None or bool(self.note)
        return abs(d) <= MATCH_TOL * max(1.0, abs(self.printed or 0.0))


@dataclass
class PaperOutput:
    """A paper's regenerated table and figures.

    ``figures`` lists ``(stem, caption)``: the files ``stem.png`` and
    ``stem.svg`` in the paper's folder.
    """

    number: str
    title: str
    rows: list[Row] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)
    figure_scenes: dict[str, str] = field(default_factory=dict)
    """The bundled scene each figure (by stem) is redrawn from, where there is one."""


def vector_rows(
    item: str,
    name: str,
    printed: Sequence[float] | None,
    computed: Sequence[float] | None,
    note: str | Sequence[str] = "",
) -> list[Row]:
    """One row per component, ``name[k]``; ``note`` one for all or one per component."""
    size = len(printed) if printed is not None else len(computed or ())
    notes = [note] * size if isinstance(note, str) else list(note)
    return [
        Row(
            item,
            f"{name}[{k}]",
            None if printed is None else float(printed[k]),
            None if computed is None else float(computed[k]),
            notes[k],
        )
        for k in range(size)
    ]


def with_scene(rows: list[Row], scene: str) -> list[Row]:
    """``rows`` marked as made by a run of the bundled scene ``scene``."""
    return [replace(row, scene=scene) for row in rows]


def _number(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def write_table(rows: Iterable[Row], path: Path) -> None:
    """``table.csv``: the columns ``item,quantity,printed,computed,difference,note``."""
    with atomic_write(path, newline="") as stream:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(TABLE_COLUMNS)
        for row in rows:
            writer.writerow(
                [
                    row.item,
                    row.quantity,
                    _number(row.printed),
                    _number(row.computed),
                    _number(row.difference),
                    row.note,
                ]
            )


# ----------------------------------------------------------------------------- runs


def bundled(name: str, values: dict[str, Any] | None = None) -> Scene:
    """The bundled scene ``name`` (without ``.json``), with fields changed by path.

    ``values`` maps scene paths to values, as sweeps name them
    (``{"contact.restitution": 0.3}``, :func:`solver.scene_paths.with_values`).
    """
    scene = load_scene(SCENES / f"{name}.json")
    return with_values(scene, values) if values else scene


@dataclass(frozen=True)
class Run:
    """A finished run: its scene, trajectory and columns by ``ID.name``."""

    scene: Scene
    trajectory: Trajectory
    columns: dict[str, np.ndarray]

    @property
    def t(self) -> np.ndarray:
        return self.columns["t"]

    def impacts(self) -> list[Any]:
        return [event for event in self.trajectory.events if event.type == "impact"]

    def events(self, kind: str) -> list[Any]:
        return [event for event in self.trajectory.events if event.type == kind]


def trajectory_columns(trajectory: Trajectory) -> dict[str, np.ndarray]:
    """``t``, every coordinate and rate (``ID.x``, ``ID.vx``…) and the energies, as arrays."""
    from solver.record import ENERGY_COLUMNS

    labels = trajectory.system.dof_labels
    names = [f"{body}.{c}" for body, coords, _ in labels for c in coords]
    names += [f"{body}.{r}" for body, _, rates in labels for r in rates]
    states = trajectory.states()
    columns = {"t": np.asarray(trajectory.times(), dtype=float)}
    for k, name in enumerate(names):
        columns[name] = states[:, k]
    energies = trajectory.energies()
    for k, name in enumerate(ENERGY_COLUMNS):
        columns[name] = energies[:, k]
    return columns


def run(scene: Scene, t_end: float | None = None, dt_out: float | None = None) -> Run:
    """Simulate ``scene`` (event-driven unless the scene says otherwise)."""
    trajectory = simulate(scene, t_end=t_end, dt_out=dt_out)
    if trajectory.status == "failed":
        raise RuntimeError(f"{scene.title}: {trajectory.message}")
    return Run(scene, trajectory, trajectory_columns(trajectory))


# -------------------------------------------------------------------------- figures


def new_figure(rows: int = 1, cols: int = 1, size: tuple[float, float] = (7.0, 4.2)) -> Figure:
    """A matplotlib figure on the Agg canvas (no pyplot, no GUI)."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=size, layout="constrained")
    figure.subplots(rows, cols, squeeze=False)
    return figure


def save_figure(figure: Figure, folder: Path, stem: str) -> list[Path]:
    """Write ``stem.png`` (120 dpi) and ``stem.svg`` into ``folder``."""
    from matplotlib import rc_context

    paths = []
    with rc_context(SVG_TEXT):
        for fmt in FIGURE_FORMATS:
            path = folder / f"{stem}.{fmt}"
            figure.savefig(path, dpi=120 if fmt == "png" else None, metadata=_metadata(fmt))
            paths.append(path)
    return paths


def _metadata(fmt: str) -> dict[str, Any]:
    # reproducible files: no creation date in the SVG
    return {"Date": None} if fmt == "svg" else {}
