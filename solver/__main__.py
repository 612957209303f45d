"""``python -m solver``: the command line of ``solver.cli``."""

import sys

from solver.cli import main

if __name__ == "__main__":
    sys.exit(main())
