"""Errors the command line turns into a clear message and exit code 2 (bad input)."""

from __future__ import annotations


class InputError(ValueError):
    """Bad input: a file, a flag or a value that the package refuses.

    ``problems`` holds one message per problem, each naming the field, e.g.
    ``jobs[3].worker_demand.gpu: must be >= 0, got -1``.
    """

    def __init__(self, problems: str | list[str], source: str | None = None):
        if isinstance(problems, str):
            problems = [problems]
        self.problems = list(problems)
        self.source = source
        prefix = f"{source}: " if source else ""
        super().__init__("\n".join(prefix + p for p in self.problems))
