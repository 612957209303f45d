"""The ``python -m solver papers`` command.

::

    python -m solver papers [000 001 002 003 004 …] --out DIR

Regenerates the papers named (all five when none is named): per paper
``DIR/paper-NNN/table.csv`` and its figures (PNG and SVG), then
``DIR/index.html`` with every table and figure, opened from disk. Exit
status: 0 on success; 2 on invalid input (an unknown paper, an ``--out``
that is a file or cannot be written), one line naming it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from solver.papers import PAPERS, generate
from solver.papers.index import INDEX_FILE

EXIT_OK = 0
EXIT_INVALID_INPUT = 2


def add_papers_parser(commands: Any) -> argparse.ArgumentParser:
    """Add the ``papers`` command to ``python -m solver``'s sub-parsers."""
    papers = commands.add_parser(
        "papers",
        help="regenerate the five papers' tables and figures; write DIR/index.html",
        description=(
            "Regenerate every printed value and figure of the papers named (all of "
            f"{', '.join(PAPERS)} when none is): DIR/paper-NNN/table.csv (item, quantity, "
            "printed, computed, difference, note), its figures as PNG and SVG, and "
            "DIR/index.html showing them all. Exit 0 on success, 2 on invalid input."
        ),
    )
    papers.add_argument("papers", metavar="PAPER", nargs="*", help=f"one of {', '.join(PAPERS)}")
    papers.add_argument("--out", metavar="DIR", required=True, help="directory for the files")
    return papers


def run_papers_command(args: argparse.Namespace, stderr: TextIO) -> int:
    """Run the parsed ``papers`` command; return the exit status."""
    problems = [
        f"PAPER: unknown paper {name!r}; the papers are {', '.join(PAPERS)}"
        for name in args.papers
        if name not in PAPERS
    ]
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        problems.append(f"--out: not a directory: {args.out}")
    if problems:
        for line in problems:
            print(line, file=stderr)
        return EXIT_INVALID_INPUT
    numbers = list(dict.fromkeys(args.papers))
    try:
        outputs = generate(numbers, out)
    except OSError as error:
        print(f"--out: cannot write to {args.out}: {error.strerror or error}", file=stderr)
        return EXIT_INVALID_INPUT
    rows = sum(len(o.rows) for o in outputs)
    figures = sum(len(o.figures) for o in outputs)
    print(f"{len(outputs)} papers, {rows} rows, {figures} figures: {out / INDEX_FILE}", file=stderr)
    return EXIT_OK
