"""Figures render with the file-only backend, whatever the machine's display."""

import matplotlib

matplotlib.use("Agg")
