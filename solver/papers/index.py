"""``index.html``: every paper's table and figures on one page, opened from disk."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from solver.atomic_file import atomic_write
from solver.papers.common import FIGURE_FORMATS, TABLE_COLUMNS, TABLE_FILE, PaperOutput, Row

INDEX_FILE = "index.html"

_STYLE = """
body { font-family: sans-serif; margin: 1.5em; max-width: 1200px; }
table { border-collapse: collapse; font-size: 12px; margin-bottom: 1em; }
th, td { border: 1px solid #bbb; padding: 2px 6px; text-align: left; vertical-align: top; }
td.num { font-family: monospace; text-align: right; white-space: nowrap; }
tr.note td { background: #fff6d8; }
tr.off td { background: #fbd9d9; }
.figures { display: flex; flex-wrap: wrap; gap: 1%; }
figure { margin: 0.5em 0; width: 49%; }
figure img { width: 100%; border: 1px solid #ddd; }
summary { cursor: pointer; margin: 0.5em 0; }
figcaption { font-size: 13px; color: #333; }
nav a { margin-right: 1em; }
"""


def _cell(value: float | None) -> str:
    return "" if value is None else f"{value:.15g}"


def _table(rows: Sequence[Row]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in TABLE_COLUMNS)
    body = []
    for row in rows:
        kind = "note" if row.note else ("" if row.matches else "off")
        cells = [
            f"<td>{html.escape(row.item)}</td>",
            f"<td>{html.escape(row.quantity)}</td>",
            f'<td class="num">{_cell(row.printed)}</td>',
            f'<td class="num">{_cell(row.computed)}</td>',
            f'<td class="num">{_cell(row.difference)}</td>',
            f"<td>{html.escape(row.note)}</td>",
        ]
        body.append(f'<tr class="{kind}">{"".join(cells)}</tr>')
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _summary(output: PaperOutput) -> str:
    compared = [r for r in output.rows if r.difference is not None]
    matched = [r for r in compared if r.matches and not r.note]
    flagged = [r for r in output.rows if r.note]
    largest = max((abs(r.difference or 0.0) for r in matched), default=0.0)
    return (
        f"{len(output.rows)} rows: {len(matched)} printed values reproduced "
        f"(largest difference {largest:.2g}), {len(flagged)} with a note, "
        f"{len(output.figures)} figures."
    )


def write_index(outputs: Sequence[PaperOutput], out: Path) -> Path:
    """Write ``out/index.html`` linking each paper's table and figures (relative paths)."""
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        "<title>impactgui — the papers regenerated</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>The papers regenerated</h1>",
        "<p>Each paper's printed values against what the program computes "
        "(<code>python -m solver papers</code>); rows in yellow carry a note where the "
        "paper slips or where the row is what a formula or figure shows, rows in red "
        "differ without one. Figures are redrawn from runs, the closed form overlaid "
        "where one exists.</p>",
        "<nav>"
        + "".join(f'<a href="#paper-{o.number}">paper {o.number}</a>' for o in outputs)
        + "</nav>",
    ]
    for output in outputs:
        folder = f"paper-{output.number}"
        parts.append(f'<h2 id="{folder}">{html.escape(output.title)}</h2>')
        parts.append(
            f"<p>{html.escape(_summary(output))} "
            f'<a href="{folder}/{TABLE_FILE}">{folder}/{TABLE_FILE}</a></p>'
        )
        noted = [row for row in output.rows if row.note or not row.matches]
        if noted:
            parts.append("<h3>Where the paper slips, or the row needs a word</h3>")
            parts.append(_table(noted))
        parts.append(
            f"<details><summary>All {len(output.rows)} rows of {folder}/{TABLE_FILE}</summary>"
            f"{_table(output.rows)}</details>"
        )
        if not output.figures:
            parts.append("<p>No figures: the paper's figures are drawings, not plots.</p>")
        parts.append('<div class="figures">')
        for stem, caption in output.figures:
            links = " ".join(
                f'<a href="{folder}/{stem}.{fmt}">{fmt.upper()}</a>' for fmt in FIGURE_FORMATS
            )
            parts.append(
                f'<figure><img src="{folder}/{stem}.png" alt="{html.escape(stem)}">'
                f"<figcaption>{html.escape(caption)} {links}</figcaption></figure>"
            )
        parts.append("</div>")
    parts.append("</body></html>")
    path = out / INDEX_FILE
    with atomic_write(path) as stream:
        stream.write("\n".join(parts) + "\n")
    return path
