"""One scheduler order, one colour and one marker per scheduler, for every figure of the package.

The order is :func:`primaldual.sweep.distributions.ordered` (the numbers use it too): OASiS and its variants
first (the paper's algorithm and this package's subject), then the baselines, then any other name
alphabetically. A name outside the table gets a colour from its name's checksum, so it is the same in every figure whatever
other schedulers appear beside it.
"""

from __future__ import annotations

import zlib
from typing import Iterable

#: A fixed colour per scheduler: Paul Tol's "muted" scheme (nine hues chosen to stay distinct under the
#: common colour-vision deficiencies and in grey print), dark grey for the tenth, black for OPT.
COLOURS = {
    "oasis": "#882255", "oasis-lr": "#CC6677", "oasis-p": "#AA4499", "greedy": "#DDCC77", "fifo": "#332288",
    "drf": "#117733", "rrh": "#88CCEE", "rrh-full-reward": "#44AA99", "rrh-nonpreemptive": "#999933",
    "dorm": "#555555", "OPT": "#000000",
    # The field's baselines (issue 52): Paul Tol's "bright" blue and "vibrant" orange, teal and magenta.
    "tiresias": "#4477AA", "srtf": "#EE7733", "optimus": "#009988", "themis": "#EE3377",
}
#: A distinct filled marker per scheduler, so that the fourteen stay apart without colour (the field's four take
#: markers also in the spare list: only an unknown name can share one with them).
MARKERS = {
    "oasis": "o", "oasis-lr": "s", "oasis-p": "^", "greedy": "v", "fifo": "D", "drf": "P", "rrh": "X",
    "rrh-full-reward": "<", "rrh-nonpreemptive": ">", "dorm": "*", "OPT": "_",
    "tiresias": "8", "srtf": "p", "optimus": "h", "themis": "d",
}
#: Colours and markers for names outside the table, chosen by checksum (never a colour of the table).
SPARE_COLOURS = ("#0072B2", "#E69F00", "#56B4E9", "#009E73", "#D55E00", "#CC79A7", "#7f7f7f", "#393b79")
SPARE_MARKERS = ("h", "p", "d", "8", "H")


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


def seeds_note(counts: Iterable[int]) -> str:
    """``"5 seeds"`` or ``"3-5 seeds"``: how many instances stand behind each point of a figure."""
    values = sorted(set(int(c) for c in counts))
    if not values:
        return "no seeds"
    if len(values) == 1:
        return f"{values[0]} seed" + ("" if values[0] == 1 else "s")
    return f"{values[0]}-{values[-1]} seeds"


__all__ = [
    "COLOURS", "MARKERS", "colour", "line_width", "marker", "seeds_note", "use_agg",
]
