"""The five papers regenerated: every printed value against the program, every figure redrawn.

``python -m solver papers [000 001 …] --out DIR`` (:mod:`solver.papers.command`)
writes, per paper, ``DIR/paper-NNN/table.csv`` (columns
``item,quantity,printed,computed,difference,note``: one row per scalar the
paper prints or plots, a vector one row per component) and its figures as
PNG and SVG, then ``DIR/index.html`` showing them all (no server needed).

Each paper has its module ``solver.papers.paper_NNN`` with ``build(folder)``
returning a :class:`~solver.papers.common.PaperOutput`.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path

from solver.papers.common import TABLE_FILE, PaperOutput, write_table
from solver.papers.index import write_index

PAPERS = ("000", "001", "002", "003", "004")
"""The papers, by number (the files ``000_….txt`` … ``004_….txt`` of the project's sources)."""


def build_paper(number: str, out: Path) -> PaperOutput:
    """Regenerate paper ``number`` into ``out/paper-NNN`` (table and figures)."""
    folder = out / f"paper-{number}"
    folder.mkdir(parents=True, exist_ok=True)
    module = importlib.import_module(f"solver.papers.paper_{number}")
    output = module.build(folder)
    write_table(output.rows, folder / TABLE_FILE)
    return output


def generate(numbers: Sequence[str], out: Path) -> list[PaperOutput]:
    """Regenerate the papers ``numbers`` (all when empty) and write ``out/index.html``."""
    out.mkdir(parents=True, exist_ok=True)
    outputs = [build_paper(number, out) for number in (numbers or PAPERS)]
    write_index(outputs, out)
    return outputs
