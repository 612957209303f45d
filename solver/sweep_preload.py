"""Imported by a sweep's fork server: what its workers should find loaded when forked.

The solver (:mod:`solver.sweep`) and the compiled loop of phases of beads
between stops (:func:`solver.stop_closing.load_compiled`): each worker would
otherwise load the loop at its first phase, about 0.8 s per worker and sweep.
"""

from solver import sweep as _sweep  # noqa: F401  (the solver, imported once for all workers)
from solver.stop_closing import load_compiled

load_compiled()
