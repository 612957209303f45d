"""The two kinds of failure the solver reports.

``InputError`` is bad input refused at the door (a ``ValueError``: the message
names the argument or JSON field and the problem). ``SolverError`` is a
failure in the middle of a run (no consistent contact mode, a sub-solver that
did not converge); the stepper turns it into an ``error`` event and keeps
everything computed so far.
"""


class InputError(ValueError):
    """An argument or field is invalid; the message names it and says why."""


class SolverError(RuntimeError):
    """The mechanics could not be continued (e.g. a Painlevé-type inconsistency)."""
