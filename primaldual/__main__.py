"""``python -m primaldual``: the command line, as the ``primaldual`` script."""

import sys

from primaldual.cli import main

if __name__ == "__main__":
    sys.exit(main())
