"""Errors the command line turns into a clear message and exit code 2 (bad input)."""

from __future__ import annotations

#: At most this many problems are spelled out in the message; the rest are counted (``problems`` keeps all),
#: so a file with a million bad entries gives a readable answer.
SHOWN_PROBLEMS = 20


class InputError(ValueError):
    """Bad input: a file, a flag or a value that the package refuses.

    ``problems`` holds one message per problem, each naming the field, e.g.
    ``jobs[3].worker_demand.gpu: must be 0 or a number in [0.001, 1e9], got -1``.
    """

    def __init__(self, problems: str | list[str], source: str | None = None):
        if isinstance(problems, str):
            problems = [problems]
        self.problems = list(problems)
        self.source = source
        prefix = f"{source}: " if source else ""
        lines = [prefix + p for p in self.problems[:SHOWN_PROBLEMS]]
        if len(self.problems) > SHOWN_PROBLEMS:
            lines.append(f"{prefix}... and {len(self.problems) - SHOWN_PROBLEMS} more problems")
        super().__init__("\n".join(lines))
