"""Figures render with the file-only backend, whatever the machine's display; ``views_helpers`` is importable
whatever pytest's import mode."""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
