"""``python -m solver``: the command line of ``solver.cli``."""

import sys

try:
    from solver.cli import main
except KeyboardInterrupt:  # Ctrl-C while the solver loads: nothing ran, nothing written
    sys.exit(130)

if __name__ == "__main__":
    sys.exit(main())
