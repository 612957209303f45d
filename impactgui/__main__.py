"""Entry point of the ``impactgui`` console script."""

import sys


def main(argv: list[str] | None = None) -> int:
    from impactgui.app import main as app_main

    return app_main(argv)


if __name__ == "__main__":
    sys.exit(main())
