"""A run's record: the growing ``Trajectory`` buffer and its CSV export.

The stepper's ``StepOutput`` batches are appended to a ``Trajectory`` while
the GUI (another thread) reads it; ``write_csv`` turns a trajectory into the
three files of the public contract (docs/CONTRACT.md, "CSV"): ``trajectory.csv``,
``contacts.csv`` and ``events.csv``, and the stages of every impact,
``stages.csv``. The files are written as a set into a staging folder in the
target directory and renamed together, so a reader never sees a
half-written file nor a new file beside old ones, and the bytes depend only
on the trajectory, so a GUI export is identical to the command line's for the same run.
"""

from __future__ import annotations

import csv
import operator
import os
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from solver.atomic_file import atomic_write, replace_together
from solver.frames import Event, Frame, StepOutput
from solver.roundoff import RoundoffScales, clean, clean_array
from solver.stages import STAGES_FILE, write_stages_csv

if TYPE_CHECKING:
    from solver.system import System

ENERGY_COLUMNS = ("E_kin", "E_pot", "E_spring", "E_total", "E_dissipated", "E_input")
CONTACT_COLUMNS = ("t", "body", "other", "lambda", "tau", "u_n", "u_t", "mode")
EVENT_COLUMNS = (
    "t",
    "type",
    "body",
    "other",
    "normal_impulse",
    "tangent_impulse",
    "stages",
    "energy_change",
)
TRAJECTORY_FILE = "trajectory.csv"
CONTACTS_FILE = "contacts.csv"
EVENTS_FILE = "events.csv"

_INITIAL_CAPACITY = 256
STATE_BLOCK_ROWS = 4096
"""Frames per block of the state store (a block is allocated when the previous one is full)."""
STATE_BLOCK_BYTES = 32 * 2**20
"""Largest block of the state store (bytes): fewer rows a block for large systems."""
FEW_FRAMES = 8
"""Up to this many frames appended since the last read of the arrays are written one row at
a time (an event's ``pre`` and ``post``, a sample): array calls on a few rows cost more
than the rows."""
_ENERGY_TERMS = operator.attrgetter("kinetic", "potential", "spring", "dissipated", "input")
"""The stored terms of an EnergyBudget, in the order of ENERGY_COLUMNS without ``E_total``."""


class Trajectory:
    """Frames and events of one run, in time order, growing while it runs.

    One thread appends (the stepper's driver), any number of threads read.
    An append adds the frames and publishes the new length last. The
    arrays of ``times()``, ``states()`` and ``energies()`` are written when
    they are read: the first read after an append writes the rows of the
    frames appended since, all at once, under a lock that only readers take
    (a run whose arrays are never read, as the command line's, never writes
    them; the rows of a few frames cost more one append at a time than
    together). A buffer that has to grow is copied before it is swapped in,
    so a reader always sees a consistent prefix: ``frames``, ``times()``,
    ``states()`` and ``energies()`` taken one after another may differ in
    length (the later call can see more rows), never in content.

    The states, ``2 N`` numbers a frame (400 for a 200-bead chain), are kept
    in blocks of ``STATE_BLOCK_ROWS`` frames that are never copied: one
    growing buffer would copy (and page in) tens of megabytes at each
    doubling, a stall of 50–80 ms for the GUI thread that appends. A block
    holds at most ``STATE_BLOCK_BYTES``: a 100 000-bead chain's frame is
    1.6 MB, and 4096 of them would be reserved for its four frames. Times
    and energies, a few numbers a frame, stay one buffer each.

    Parameters
    ----------
    system : System, optional
        The compiled system the run belongs to; its ``dof_labels`` name the
        CSV columns. May be ``None`` for a bare buffer (no CSV export).

    Attributes
    ----------
    system : System or None
        As given.
    status : str
        ``"running"``, ``"finished"`` or ``"failed"`` — set by the driver of
        the run (``simulate``, the CLI, the GUI worker), copied from the
        stepper.
    message : str
        Why the run failed or finished, from the stepper.
    """

    def __init__(self, system: System | None = None) -> None:
        self.system = system
        self.status = "running"
        self.message = ""
        self._frames: list[Frame] = []
        self._events: list[Event] = []
        self._state_size = 0 if system is None else 2 * system.N
        self._block_rows = STATE_BLOCK_ROWS
        self._times = np.empty(0)
        self._state_blocks: list[np.ndarray] = []
        self._energies = np.empty((0, len(ENERGY_COLUMNS)))
        self._n_frames = 0
        self._n_events = 0
        self._written = 0  # frames whose rows the arrays hold (:meth:`_write_new_rows`)
        self._write_lock = threading.Lock()

    def append(self, step_output: StepOutput) -> None:
        """Add one ``StepOutput`` (its frames and events) at the end.

        Cost is O(frames appended): their rows are written by the next read
        of the arrays (:meth:`_write_new_rows`).
        """
        if step_output.frames:
            self._append_frames(step_output.frames)
        for event in step_output.events:
            self._events.append(event)
            self._n_events = len(self._events)

    def _append_frames(self, frames: list[Frame]) -> None:
        n, count = self._n_frames, len(frames)
        nq, nv = len(frames[0].q), len(frames[0].v)
        for frame in frames[1:]:  # a loop: a generator costs more than a few frames' checks
            if len(frame.q) != nq or len(frame.v) != nv:
                raise ValueError("the frames of one step output have states of different sizes")
        state_size = nq + nv
        if state_size != self._state_size:
            if n:
                raise ValueError(
                    f"frame state has {state_size} entries, earlier frames had {self._state_size}"
                )
            self._state_size = state_size
        if not n:
            self._block_rows = max(
                1, min(STATE_BLOCK_ROWS, STATE_BLOCK_BYTES // max(1, 8 * state_size))
            )
        self._frames += frames
        self._n_frames = n + count

    def _write_new_rows(self) -> int:
        """Write the rows of the frames appended since the last read; the number of frames.

        Buffers double when full; the rows of up to ``FEW_FRAMES`` frames are
        written one by one, more all at once. The lock orders readers of
        several threads; the appending thread never writes the arrays.
        """
        n = self._n_frames
        if self._written == n:  # published after its rows were written
            return n
        with self._write_lock:
            start = self._written
            if start < n:
                frames = self._frames[start:n]
                if n > len(self._times):
                    self._grow(start, n)
                if n - start <= FEW_FRAMES:
                    self._write_rows(start, frames, len(frames[0].q))
                else:
                    self._write_arrays(start, frames)
                self._written = n
        return n

    def _write_rows(self, n: int, frames: list[Frame], nq: int) -> None:
        """Write ``frames`` as rows ``n, n + 1, …`` one by one: what :meth:`_write_arrays` writes.

        E_total is summed as :attr:`EnergyBudget.total` sums it, in the same order.
        """
        energies, times, blocks, block_rows = (
            self._energies, self._times, self._state_blocks, self._block_rows
        )  # fmt: skip
        for k, frame in enumerate(frames, n):
            kinetic, potential, spring, dissipated, work_in = _ENERGY_TERMS(frame.energy)
            energies[k] = (
                kinetic, potential, spring, kinetic + potential + spring, dissipated, work_in
            )  # fmt: skip
            times[k] = frame.t
            block, offset = divmod(k, block_rows)
            if block == len(blocks):
                blocks.append(np.empty((block_rows, self._state_size)))
            states = blocks[block]
            states[offset, :nq] = frame.q  # one index each: no view of the row is made
            states[offset, nq:] = frame.v

    def _write_arrays(self, n: int, frames: list[Frame]) -> None:
        """Write ``frames`` as rows ``n, n + 1, …``, all at once (many frames)."""
        count = len(frames)
        # E_total as EnergyBudget.total sums it, in the same order
        self._energies[n : n + count] = [
            (kinetic, potential, spring, kinetic + potential + spring, dissipated, work_in)
            for kinetic, potential, spring, dissipated, work_in in map(
                _ENERGY_TERMS, (frame.energy for frame in frames)
            )
        ]
        q = np.array([frame.q for frame in frames], dtype=float)
        v = np.array([frame.v for frame in frames], dtype=float)
        self._store_states(n, np.concatenate((q, v), axis=1))
        self._times[n : n + count] = [frame.t for frame in frames]

    def _grow(self, n: int, rows: int) -> None:
        """Make room for ``rows`` times and energies (``n`` kept)."""
        capacity = max(_INITIAL_CAPACITY, 2 * len(self._times), rows)
        times = np.empty(capacity)
        energies = np.empty((capacity, len(ENERGY_COLUMNS)))
        if n:
            times[:n] = self._times[:n]
            energies[:n] = self._energies[:n]
        self._energies = energies
        self._times = times

    def _store_states(self, n: int, rows: np.ndarray) -> None:
        """Write ``rows`` as the states of frames ``n, n + 1, …`` (new blocks as needed)."""
        written = 0
        while written < len(rows):
            block, offset = divmod(n + written, self._block_rows)
            if block == len(self._state_blocks):
                self._state_blocks.append(np.empty((self._block_rows, self._state_size)))
            take = min(len(rows) - written, self._block_rows - offset)
            self._state_blocks[block][offset : offset + take] = rows[written : written + take]
            written += take

    def frame(self, index: int) -> Frame:
        """Frame number ``index`` (negative counts from the end), without copying the list."""
        n = self._n_frames
        if not -n <= index < n:
            raise IndexError(f"frame index {index} out of range for {n} frames")
        return self._frames[index % n]

    def __len__(self) -> int:
        """Number of frames recorded so far."""
        return self._n_frames

    @property
    def frames(self) -> list[Frame]:
        """The frames recorded so far (a snapshot list; safe to keep)."""
        return self._frames[: self._n_frames]

    @property
    def events(self) -> list[Event]:
        """The events recorded so far (a snapshot list; safe to keep)."""
        return self._events[: self._n_events]

    def times(self) -> np.ndarray:
        """Frame times, s: read-only view, shape ``(n_frames,)``."""
        n = self._write_new_rows()
        return _read_only(self._times[:n])

    def states(self) -> np.ndarray:
        """Frame states ``[q, v]`` per row: read-only copy, shape ``(n_frames, 2 N)``.

        Columns follow ``System.dof_labels`` (all coordinates, then all
        rates), in m, rad, m/s and rad/s. The blocks are joined at each call
        (O(frames); the GUI plots from ``frames``, ``times()`` and
        ``energies()``).
        """
        full, rest = divmod(self._write_new_rows(), self._block_rows)
        blocks = self._state_blocks[:full]
        if rest:
            blocks.append(self._state_blocks[full][:rest])
        if not blocks:
            return _read_only(np.empty((0, self._state_size)))
        return _read_only(np.concatenate(blocks))

    def energies(self) -> np.ndarray:
        """Energy budget per frame, J: read-only view, shape ``(n_frames, 6)``.

        Columns as ``ENERGY_COLUMNS``: kinetic, potential, spring, total,
        dissipated so far, input so far.
        """
        n = self._write_new_rows()
        return _read_only(self._energies[:n])


def _read_only(view: np.ndarray) -> np.ndarray:
    view.flags.writeable = False
    return view


def trajectory_columns(system: System) -> list[str]:
    """Header of ``trajectory.csv`` for ``system`` (docs/CONTRACT.md, "CSV").

    ``t,kind``, then per body in scene order ``ID.<coord>`` for its
    coordinates and ``ID.<rate>`` for its rates, then the energy columns.
    """
    columns = ["t", "kind"]
    for body_id, coord_names, rate_names in system.dof_labels:
        columns += [f"{body_id}.{name}" for name in (*coord_names, *rate_names)]
    return columns + list(ENERGY_COLUMNS)


def _number(x: float) -> str:
    """Shortest text that reads back as exactly the same float."""
    return repr(float(x))


def _trajectory_rows(trajectory: Trajectory) -> Iterable[list[str]]:
    slices = []
    start = 0
    for _body_id, coord_names, rate_names in trajectory.system.dof_labels:
        slices.append((slice(start, start + len(coord_names)), len(rate_names)))
        start += len(coord_names)
    scales = RoundoffScales.of(trajectory.system)
    column_scales = scales.trajectory_columns(trajectory.system.dof_labels)
    for frame in trajectory.frames:
        numbers: list[float] = []
        rate_start = 0
        for coords, n_rates in slices:
            numbers += [*frame.q[coords], *frame.v[rate_start : rate_start + n_rates]]
            rate_start += n_rates
        energy = frame.energy
        numbers += [
            energy.kinetic,
            energy.potential,
            energy.spring,
            energy.total,
            energy.dissipated,
            energy.input,
        ]
        yield [_number(frame.t), frame.kind, *map(_number, clean_array(numbers, column_scales))]


def _contact_rows(trajectory: Trajectory) -> Iterable[list[str]]:
    scales = RoundoffScales.of(trajectory.system)
    column_scales = (scales.force, scales.unit, scales.speed, scales.speed)
    for frame in trajectory.frames:
        if frame.kind != "sample":
            continue
        for contact in frame.contacts:
            yield [
                _number(frame.t),
                contact.body,
                contact.other,
                *map(
                    _number,
                    clean_array(
                        (contact.lam, contact.tau, contact.u_n, contact.u_t), column_scales
                    ),
                ),
                contact.mode,
            ]


def _event_rows(trajectory: Trajectory) -> Iterable[list[str]]:
    scales = RoundoffScales.of(trajectory.system)
    for event in trajectory.events:
        yield [
            _number(event.t),
            event.type,
            event.body,
            event.other,
            _number(clean(event.normal_impulse, scales.impulse)),
            _number(clean(event.tangent_impulse, scales.impulse)),
            str(int(event.stages)),
            _number(clean(event.energy_change, scales.energy)),
        ]


def write_csv_atomic(path: Path, header: Sequence[str], rows: Iterable[Sequence[str]]) -> None:
    """Write a CSV file so that ``path`` is either the old file or the complete new one.

    The rows go to a temporary file in the same directory, which is then
    renamed over ``path`` (``os.replace``); on any error the temporary file
    is removed and ``path`` is untouched.
    """
    with atomic_write(path, newline="") as stream:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def write_csv(trajectory: Trajectory, out_dir: str | os.PathLike[Any]) -> dict[str, Path]:
    """Export ``trajectory`` as the three CSV files of the public contract.

    Parameters
    ----------
    trajectory : Trajectory
        A recorded run; ``trajectory.system`` names the columns. Only the
        prefix recorded when each file is written is exported.
    out_dir : path-like
        Directory to write into; created (with parents) when missing.

    Returns
    -------
    dict of str to Path
        ``{"trajectory": ..., "contacts": ..., "events": ..., "stages": ...}``, the
        files written.

    Notes
    -----
    Numbers are written with ``repr`` (shortest round-tripping text), so
    ``float(text)`` gives back the exact value; SI units throughout. Round-off
    is written as ``0.0``, never ``-0.0`` (``solver.roundoff``: at most 1e-13
    of the scene's scale of that quantity).
    ``trajectory.csv`` has every frame (``kind`` ``sample``, ``pre``,
    ``post``); ``contacts.csv`` one row per active contact at each sample
    frame; ``events.csv`` one row per event; ``stages.csv`` one row per stage
    of each impact of ``events.csv`` (:mod:`solver.stages`).

    The files are written as a set (:func:`solver.atomic_file.replace_together`):
    all of them replace the old ones or none does, also when the disk fills
    or the process is killed while they are written.
    """
    if trajectory.system is None:
        raise ValueError("trajectory has no system: its CSV columns are unknown")
    system = trajectory.system
    written = replace_together(
        out_dir,
        {
            TRAJECTORY_FILE: lambda path: write_csv_atomic(
                path, trajectory_columns(system), _trajectory_rows(trajectory)
            ),
            CONTACTS_FILE: lambda path: write_csv_atomic(
                path, CONTACT_COLUMNS, _contact_rows(trajectory)
            ),
            EVENTS_FILE: lambda path: write_csv_atomic(
                path, EVENT_COLUMNS, _event_rows(trajectory)
            ),
            STAGES_FILE: lambda path: write_stages_csv(trajectory, path),
        },
    )
    return {
        "trajectory": written[TRAJECTORY_FILE],
        "contacts": written[CONTACTS_FILE],
        "events": written[EVENTS_FILE],
        "stages": written[STAGES_FILE],
    }


def csv_set_problems(out_dir: str | os.PathLike[Any]) -> list[str]:
    """What keeps the CSV set in ``out_dir`` from holding only finite numbers (empty: nothing).

    Every numeric cell of ``trajectory.csv``, ``contacts.csv`` and
    ``events.csv`` must be finite (docs/LIMITS.md): a run either writes
    numbers or fails with a message. Names a missing file, or the file, row
    (1 = first after the header) and column of the first non-finite number.
    """
    problems = []
    for name in (TRAJECTORY_FILE, CONTACTS_FILE, EVENTS_FILE):
        path = Path(out_dir) / name
        if not path.is_file():
            problems.append(f"{name}: missing")
            continue
        with path.open(newline="", encoding="utf-8") as stream:
            rows = csv.reader(stream)
            header = next(rows, [])
            for row_number, row in enumerate(rows, start=1):
                bad = [
                    column
                    for column, cell in zip(header, row, strict=False)
                    if _is_non_finite_number(cell)
                ]
                if bad:
                    problems.append(f"{name}: row {row_number}, column {bad[0]}: not finite")
                    break
    return problems


def _is_non_finite_number(cell: str) -> bool:
    """True for a cell that reads as a float but not a finite one (``inf``, ``nan``)."""
    try:
        return not np.isfinite(float(cell))
    except ValueError:
        return False
