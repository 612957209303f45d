"""The family of admissible answers to one impact, plotted beside the stage table.

Paper 000 §4: momentum, admissibility and the energy do not fix an impact of
several contacts; for three equal balls (its example 4) the answers that
keep the energy form a one-parameter family from the sequential law's
``[0, 0, 1]`` to the staged law's ``[−1/3, 2/3, 2/3]``. For the impact
selected in the stage table, :class:`FamilyDialog` samples that family
(:func:`solver.impact_family.admissible_family`, with the share of the
energy the run's own answer kept) and plots it in the plane of the first two
contacts' impulses, the staged and sequential answers (and the run's) marked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QDialog, QLabel, QVBoxLayout, QWidget

from impactgui.grid import show_grid
from solver.impact import resolve_impact
from solver.impact_family import Family, admissible_family
from solver.stages import impact_jacobian

if TYPE_CHECKING:
    from solver.frames import Event
    from solver.system import System


@dataclass(frozen=True)
class ImpactFamily:
    """An impact's family of answers and the laws' answers to it (impulses per contact, N·s)."""

    family: Family
    run_impulse: np.ndarray
    staged: np.ndarray
    sequential: np.ndarray
    restitution: float


def impact_family(event: Event, events: list[Event], system: System) -> ImpactFamily | None:
    """The family of ``event``'s impact (None without stages or with one contact)."""
    if event.v_minus is None or event.v_plus is None:
        return None
    v_minus = np.asarray(event.v_minus, dtype=float)
    G = impact_jacobian(event, events, len(v_minus))
    if G is None or G.shape[1] < 2:
        return None
    M = np.asarray(system.M_diag, dtype=float)
    v_plus = np.asarray(event.v_plus, dtype=float)
    T_minus = 0.5 * float(v_minus @ (M * v_minus))
    T_plus = 0.5 * float(v_plus @ (M * v_plus))
    ratio = min(max(T_plus / T_minus, 0.0), 1.0) if T_minus > 0 else 1.0
    # the run's impulses: M(v⁺ − v⁻) = GΛ, in the least-squares sense
    run_impulse = np.linalg.lstsq(G, M * (v_plus - v_minus), rcond=None)[0]
    e = float(system.scene.contact.restitution)
    staged = resolve_impact(M, G, v_minus, e, law="staged").impulse
    sequential = resolve_impact(M, G, v_minus, e, law="sequential").impulse
    family = admissible_family(M, G, v_minus, energy_ratio=ratio)
    return ImpactFamily(family, run_impulse, staged, sequential, e)


class FamilyDialog(QDialog):
    """The family of one impact in the plane of its first two impulses."""

    def __init__(self, data: ImpactFamily, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Family of admissible answers — {title}")
        self.data = data
        self.plot = pg.PlotWidget(background="w")
        show_grid(self.plot, "w", alpha=0.2)
        self.plot.addLegend(offset=(-5, 5), labelTextSize="8pt")
        self.plot.setLabel("bottom", "impulse of contact 1 (N·s)")
        self.plot.setLabel("left", "impulse of contact 2 (N·s)")
        impulses = data.family.impulse
        self.family_curve = self.plot.plot(
            impulses[:, 0],
            impulses[:, 1],
            pen=None,
            symbol="o",
            symbolSize=4,
            symbolBrush=pg.mkBrush(21, 101, 192, 160),
            symbolPen=None,
            name=f"admissible, keeping {data.family.energy_ratio:.4g} of the energy",
        )
        for name, value, symbol, size in (
            ("staged law", data.staged, "star", 16),
            ("sequential law", data.sequential, "s", 11),
            ("this run", data.run_impulse, "x", 12),
        ):
            self.plot.plot(
                [value[0]],
                [value[1]],
                pen=None,
                symbol=symbol,
                symbolSize=size,
                symbolBrush=pg.mkBrush("k") if symbol != "s" else None,
                symbolPen=pg.mkPen("k", width=1.5),
                name=name,
            )
        count = len(impulses)
        self.summary = QLabel(
            f"{count} sampled answers (paper 000 §4, eqs. 36–39): each keeps the momentum "
            "balance and leaves no contact approaching. "
            f"Staged: {np.array2string(data.staged, precision=4)}, sequential: "
            f"{np.array2string(data.sequential, precision=4)} N·s (restitution "
            f"{data.restitution:g})."
        )
        self.summary.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.summary)
        self.resize(640, 520)
