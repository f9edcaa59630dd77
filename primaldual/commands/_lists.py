"""The one reader of comma-separated list flags (``--schedulers``, ``--vcs``, ``--sizes``, ``--seeds``,
``--sections``, ``--sets``, ``--restart-costs``, ``--growth-schedulers``; docs/input-ranges.md, "Lists").

Every such flag of every command is read here, by the flag check before any handler runs (so a list from an
experiment file too) and again by the handler that uses its entries:

- an empty list, an empty entry (``a,``, ``a,,b``) and an entry with spaces around it (``'a, b'``) are refused:
  they were dropped or stripped in silence by some commands and taken by others;
- an entry given twice is refused with the message ``compare --schedulers`` always gave (``listed twice: a``):
  other commands ran it twice or dropped the copy in silence.

Whether each entry names something (a scheduler, a VC, a section) is the handler's check. Cost O(length).
"""

from __future__ import annotations

from collections import Counter

from primaldual.core.errors import InputError
from primaldual.core.numerals import echo


def comma_list(text: str, flag: str) -> list[str]:
    """The entries of ``text`` in order; :class:`InputError` naming ``flag`` for the lists refused above."""
    if text == "":
        raise InputError(f"{flag}: an empty list; give at least one entry")
    entries = text.split(",")
    for entry in entries:
        if not entry.strip():
            raise InputError(f"{flag}: an empty entry in {echo(text)} (a comma at an end, or two in a row)")
        if entry != entry.strip():
            raise InputError(f"{flag}: {echo(entry)} has spaces around it; write the list without spaces (a,b)")
    duplicates = sorted(name for name, count in Counter(entries).items() if count > 1)
    if duplicates:
        raise InputError(f"{flag}: listed twice: {', '.join(duplicates)}")
    return entries


__all__ = ["comma_list"]
