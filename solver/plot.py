"""``python -m solver plot``: draw runs' CSV files into one figure file.

::

    python -m solver plot RUN_DIR [RUN_DIR …] --what x,vx,phi,omega,lambda,tau,energy
        [--body ID] --out FIG.png|svg|pdf

Each ``RUN_DIR`` holds the files of ``python -m solver run`` (``trajectory.csv``,
``contacts.csv``). One panel per quantity of ``--what``, stacked over a
shared time axis; the runs overlaid, one colour each, with a legend of
their scene titles (the ``title`` of a scene file ``*.json`` in the run's
folder when there is one, else the folder's name).

Quantities: a trajectory column's name after the body id (``x``, ``y``,
``phi``, ``vx``, ``vy``, ``omega``, a bead's ``x`` and ``vx``, an axle cart's
``xC`` …), one line per body that has it (``--body`` picks one); a contact
column of ``contacts.csv`` (``lambda``, ``tau``, ``u_n``, ``u_t``), one
series per contact; ``energy`` (the total) or an energy column
(``E_kin``, ``E_pot``, ``E_spring``, ``E_total``, ``E_dissipated``,
``E_input``). Exit 0 on success, 2 on invalid input (one line naming the
option or argument).
"""

from __future__ import annotations

import argparse
import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np

EXIT_OK = 0
EXIT_INVALID_INPUT = 2
FORMATS = ("png", "svg", "pdf")
CONTACT_QUANTITIES = ("lambda", "tau", "u_n", "u_t")
ENERGIES = ("E_kin", "E_pot", "E_spring", "E_total", "E_dissipated", "E_input")
UNITS = {
    "x": "m",
    "y": "m",
    "xC": "m",
    "yC": "m",
    "phi": "rad",
    "thetaA": "rad",
    "thetaB": "rad",
    "vx": "m/s",
    "vy": "m/s",
    "vxC": "m/s",
    "vyC": "m/s",
    "omega": "rad/s",
    "omegaA": "rad/s",
    "omegaB": "rad/s",
    "lambda": "N",
    "tau": "",
    "u_n": "m/s",
    "u_t": "m/s",
    "energy": "J",
    **{name: "J" for name in ENERGIES},
}


@dataclass
class RunFiles:
    """One run's folder read back: its title and CSV columns."""

    folder: Path
    title: str
    trajectory: dict[str, np.ndarray]
    contacts: list[dict[str, str]]


def add_plot_parser(commands: Any) -> argparse.ArgumentParser:
    """Add the ``plot`` command to ``python -m solver``'s sub-parsers."""
    plot = commands.add_parser(
        "plot",
        help="draw runs' CSV files (several overlaid) into FIG.png, .svg or .pdf",
        description=(
            "Draw the quantities of --what from each RUN_DIR (the files of `python -m solver "
            "run`), one panel per quantity, the runs overlaid with a legend of their scene "
            "titles. Quantities: trajectory columns by name (x, y, phi, vx, vy, omega, …), "
            "contact columns (lambda, tau, u_n, u_t), energy or E_kin, E_pot, E_spring, "
            "E_total, E_dissipated, E_input. Exit 0 on success, 2 on invalid input."
        ),
    )
    plot.add_argument("runs", metavar="RUN_DIR", nargs="+", help="folder of a run's CSV files")
    plot.add_argument("--what", metavar="Q1,Q2,…", required=True, help="quantities to draw")
    plot.add_argument("--body", metavar="ID", help="draw only this body's (or contact's) series")
    plot.add_argument("--out", metavar="FIG.png|svg|pdf", required=True, help="figure file")
    return plot


def _read_trajectory(path: Path) -> dict[str, np.ndarray]:
    with path.open(newline="") as stream:
        reader = csv.reader(stream)
        header = next(reader)
        rows = list(reader)
    columns: dict[str, np.ndarray] = {}
    for k, name in enumerate(header):
        if name == "kind":
            continue
        columns[name] = np.array([float(row[k]) if row[k] else np.nan for row in rows])
    return columns


def _title(folder: Path) -> str:
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("format") == "impactgui-scene" and data.get("title"):
            return str(data["title"])
    return folder.name


def read_run(folder: Path) -> RunFiles:
    """Read ``folder``'s ``trajectory.csv`` and ``contacts.csv`` (``ValueError`` if unreadable)."""
    trajectory_file = folder / "trajectory.csv"
    if not trajectory_file.is_file():
        raise ValueError(f"RUN_DIR: no trajectory.csv in {folder}")
    try:
        trajectory = _read_trajectory(trajectory_file)
        contacts_file = folder / "contacts.csv"
        contacts: list[dict[str, str]] = []
        if contacts_file.is_file():
            with contacts_file.open(newline="") as stream:
                contacts = list(csv.DictReader(stream))
    except (OSError, ValueError, IndexError, StopIteration) as error:
        raise ValueError(f"RUN_DIR: cannot read the CSV files of {folder}: {error}") from error
    if "t" not in trajectory:
        raise ValueError(f"RUN_DIR: {trajectory_file} has no column t")
    return RunFiles(folder, _title(folder), trajectory, contacts)


def _series(
    run: RunFiles, quantity: str, body: str | None
) -> list[tuple[str, np.ndarray, np.ndarray, bool]]:
    """``(label, t, values, points)`` per series of ``quantity`` in ``run``."""
    t = run.trajectory["t"]
    if quantity == "energy":
        quantity = "E_total"
    if quantity in ENERGIES:
        return (
            [(quantity, t, run.trajectory[quantity], False)] if quantity in run.trajectory else []
        )
    if quantity in CONTACT_QUANTITIES:
        key = "lambda" if quantity == "lambda" else quantity
        groups: dict[str, list[tuple[float, float]]] = {}
        for row in run.contacts:
            if body is not None and body not in (row["body"], row["other"].split("#")[0]):
                continue
            groups.setdefault(f"{row['body']}–{row['other']}", []).append(
                (float(row["t"]), float(row[key]))
            )
        return [
            (label, np.array([p[0] for p in pts]), np.array([p[1] for p in pts]), True)
            for label, pts in groups.items()
        ]
    out = []
    for name, values in run.trajectory.items():
        owner, _, column = name.rpartition(".")
        if column == quantity and owner and (body is None or owner == body):
            out.append((owner, t, values, False))
    return out


def known_quantities(runs: list[RunFiles]) -> set[str]:
    names = {"energy", *ENERGIES, *CONTACT_QUANTITIES}
    for run in runs:
        names |= {name.rpartition(".")[2] for name in run.trajectory if "." in name}
    return names


def draw(runs: list[RunFiles], quantities: list[str], body: str | None, out: Path) -> None:
    """Draw ``quantities`` of ``runs`` into ``out`` (format from its suffix)."""
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7.5, 2.2 + 1.9 * len(quantities)), layout="constrained")
    axes = figure.subplots(len(quantities), 1, sharex=True, squeeze=False)[:, 0]
    styles = ("-", "--", ":", "-.")
    for ax, quantity in zip(axes, quantities, strict=True):
        for k, run in enumerate(runs):
            colour = f"C{k % 10}"
            for j, (label, t, values, points) in enumerate(_series(run, quantity, body)):
                name = run.title if j == 0 else None
                text = f"{name} ({label})" if name and len(runs) == 1 else name
                if points:
                    ax.plot(t, values, ".", ms=2, color=colour, label=text)
                else:
                    ax.plot(t, values, styles[j % 4], color=colour, lw=1.2, label=text)
        unit = UNITS.get(quantity, "")
        ax.set_ylabel(f"{quantity}, {unit}" if unit else quantity)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    axes[-1].set_xlabel("t, s")
    with rc_context({"svg.fonttype": "none"}):  # SVG text stays text
        figure.savefig(out, dpi=150, metadata={"Date": None} if out.suffix == ".svg" else None)


def run_plot_command(args: argparse.Namespace, stderr: TextIO) -> int:
    """Run the parsed ``plot`` command; return the exit status."""
    problems: list[str] = []
    out = Path(args.out)
    if out.suffix.lower().lstrip(".") not in FORMATS:
        problems.append(f"--out: the file must end in .png, .svg or .pdf, got {args.out!r}")
    elif out.parent != Path("") and not out.parent.is_dir():
        problems.append(f"--out: no such folder: {out.parent}")
    runs: list[RunFiles] = []
    for text in args.runs:
        folder = Path(text)
        if not folder.is_dir():
            problems.append(f"RUN_DIR: not a folder: {text}")
            continue
        try:
            runs.append(read_run(folder))
        except ValueError as error:
            problems.append(str(error))
    quantities = [q.strip() for q in args.what.split(",") if q.strip()]
    if not quantities:
        problems.append("--what: name at least one quantity (x, vx, phi, omega, lambda, energy, …)")
    if runs and not problems:
        known = known_quantities(runs)
        for q in quantities:
            if q not in known:
                problems.append(
                    f"--what: unknown quantity {q!r}; these runs have {', '.join(sorted(known))}"
                )
        if args.body is not None and not any(
            name.startswith(f"{args.body}.") for run in runs for name in run.trajectory
        ):
            problems.append(f"--body: no body {args.body!r} in these runs")
        if not problems and not any(_series(run, q, args.body) for run in runs for q in quantities):
            problems.append("--what: nothing to draw for these quantities and runs")
    if problems:
        for line in problems:
            print(line, file=stderr)
        return EXIT_INVALID_INPUT
    try:
        draw(runs, quantities, args.body, out)
    except OSError as error:
        print(f"--out: cannot write {args.out}: {error.strerror or error}", file=stderr)
        return EXIT_INVALID_INPUT
    return EXIT_OK
