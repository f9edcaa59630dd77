"""``--gpu-types TYPE:SERVERS,...`` of ``generate`` and ``trace import`` (issue 64; primaldual/core/gpu_types.py).

The list is read by :func:`~primaldual.commands._lists.comma_list` (no empty entry, no spaces, no entry twice);
each entry is ``TYPE:SERVERS``, SERVERS an ASCII integer; then
:func:`~primaldual.core.gpu_types.check_type_counts` refuses an unknown type, a type listed twice (``v100:1,v100:2``)
and a count that is not a positive integer, each in one line naming the flag. Cost O(length).
"""

from __future__ import annotations

from primaldual.commands._lists import comma_list
from primaldual.core.gpu_types import parse_type_counts

FLAG = "--gpu-types"
HELP = ("TYPE:SERVERS,... worker servers of each GPU type (v100, p100, k80), e.g. v100:2,p100:1,k80:1: a "
        "heterogeneous cluster (docs/formats.md)")


def gpu_types(text: str | None) -> list[tuple[str, int]] | None:
    """``[(type, servers), ...]`` in the order given, or None without the flag."""
    if text is None:
        return None
    return parse_type_counts(comma_list(text, FLAG), FLAG)


__all__ = ["FLAG", "HELP", "gpu_types"]
