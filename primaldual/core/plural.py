"""Counts in messages: "1 job", "2 jobs", "0 jobs", never "1 jobs".

:func:`counted` puts a count before a noun; :func:`by_count` fills a message's ``[plural|singular]`` choices,
for phrases where more than the noun agrees with the count ("1 job arrives", "2 jobs arrive"). Both take the
singular exactly when the count is 1, English's rule for whole numbers.
"""

from __future__ import annotations

import re

_CHOICE = re.compile(r"\[([^|\]]*)\|([^\]]*)\]")


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``"{count} {noun}"``, the noun in the plural (``plural``, default ``noun + "s"``) unless ``count == 1``."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def by_count(count: int, text: str) -> str:
    """``text`` with every ``[plural|singular]`` replaced by its form for ``count`` (singular iff ``count == 1``)."""
    return _CHOICE.sub(lambda match: match.group(2 if count == 1 else 1), text)


__all__ = ["by_count", "counted"]
