"""One scheduler order, one colour and one marker per scheduler, for every figure of the package.

The order is :func:`primaldual.sweep.distributions.ordered` (the numbers use it too): OASiS and its variants
first (the paper's algorithm and this package's subject), then the baselines, then any other name
alphabetically. A name outside the table gets a colour from its name's checksum, so it is the same in every figure whatever
other schedulers appear beside it.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Iterable

#: A fixed colour per scheduler: reds for OASiS and its variants, distinct hues for the baselines.
COLOURS = {
    "oasis": "#d62728", "oasis-lr": "#8b0000", "oasis-p": "#f08080", "greedy": "#ff7f0e", "fifo": "#1f77b4",
    "drf": "#2ca02c", "rrh": "#9467bd", "dorm": "#8c564b", "OPT": "#000000",
}
#: A fixed marker per scheduler, so that curves stay apart in grey print and for colour-blind readers.
MARKERS = {
    "oasis": "o", "oasis-lr": "s", "oasis-p": "^", "greedy": "v", "fifo": "D", "drf": "P", "rrh": "X",
    "dorm": "*", "OPT": "_",
}
#: Colours and markers for names outside the table, chosen by checksum (never a colour of the table).
SPARE_COLOURS = ("#17becf", "#bcbd22", "#7f7f7f", "#e377c2", "#393b79", "#637939", "#843c39", "#7b4173")
SPARE_MARKERS = ("h", "p", "<", ">", "d", "8")


def _checksum(name: str) -> int:
    return zlib.crc32(name.encode("utf-8"))


def colour(name: str) -> str:
    """The colour of scheduler ``name`` in every figure."""
    if name in COLOURS:
        return COLOURS[name]
    return SPARE_COLOURS[_checksum(name) % len(SPARE_COLOURS)]


def marker(name: str) -> str:
    """The marker of scheduler ``name`` in every figure."""
    if name in MARKERS:
        return MARKERS[name]
    return SPARE_MARKERS[_checksum(name) % len(SPARE_MARKERS)]


def line_width(name: str) -> float:
    """OASiS's variants are drawn thicker: they are what the figures are about."""
    return 2.0 if name.startswith("oasis") else 1.3


def use_agg() -> None:
    """Select the file-only backend unless a notebook or the user already chose an interactive one."""
    import matplotlib

    if "inline" not in matplotlib.get_backend().lower():
        matplotlib.use("Agg")


def save(fig, path: Path) -> Path:
    """Write ``fig`` (legends outside the axes are kept) and close it."""
    import matplotlib.pyplot as plt

    from primaldual.core.output import replacing

    try:
        with replacing(path, "--out") as temporary:
            fig.savefig(temporary, dpi=110, bbox_inches="tight")
    finally:
        plt.close(fig)
    return path


def seeds_note(counts: Iterable[int]) -> str:
    """``"5 seeds"`` or ``"3-5 seeds"``: how many instances stand behind each point of a figure."""
    values = sorted(set(int(c) for c in counts))
    if not values:
        return "no seeds"
    if len(values) == 1:
        return f"{values[0]} seed" + ("" if values[0] == 1 else "s")
    return f"{values[0]}-{values[-1]} seeds"


__all__ = [
    "COLOURS", "MARKERS", "colour", "line_width", "marker", "save", "seeds_note", "use_agg",
]
