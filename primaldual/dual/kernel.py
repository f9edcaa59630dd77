"""The dual subroutine compiled: :mod:`primaldual.dual.reference`'s functions under ``numba.njit(cache=True)``.

:func:`functions` returns the namespace :func:`primaldual.dual.subroutine.best_schedule` calls: the compiled
functions, or the reference's plain Python ones when the environment sets ``PRIMALDUAL_KERNEL=reference``
(for debugging, and for the tests that compare the two). The compiled ones are copies of the reference's
code objects whose globals name each other's compiled versions, so a compiled caller calls compiled callees
and the reference module itself stays plain Python. ``cache=True`` keeps the machine code beside the source
(``__pycache__``): only the first process after an install or an edit compiles (docs/measurements.md).
"""

from __future__ import annotations

import contextlib
import os
import types

from primaldual.core.errors import InputError
from primaldual.dual import reference

#: ``PRIMALDUAL_KERNEL``'s values.
MODES = ("compiled", "reference")

_compiled: types.SimpleNamespace | None = None
_override: list[str] = []  # modes set by :func:`using`, innermost last


def mode() -> str:
    """The kernel this process runs: the innermost :func:`using`, else ``PRIMALDUAL_KERNEL`` (default
    ``compiled``)."""
    value = _override[-1] if _override else os.environ.get("PRIMALDUAL_KERNEL", "compiled")
    if value not in MODES:
        raise InputError(f"PRIMALDUAL_KERNEL: must be one of {MODES}, got {value!r}")
    return value


def compiled() -> types.SimpleNamespace:
    """The reference's functions compiled by numba (each compiled on its first call, then cached on disk)."""
    global _compiled
    if _compiled is None:
        import numba  # only here: the reference runs without numba's import cost

        namespace = dict(vars(reference))
        for name in reference.KERNEL_FUNCTIONS:
            plain = getattr(reference, name)
            copy = types.FunctionType(plain.__code__, namespace, name, plain.__defaults__)
            copy.__qualname__, copy.__module__ = plain.__qualname__, plain.__module__
            namespace[name] = numba.njit(cache=True)(copy)
        _compiled = types.SimpleNamespace(**{name: namespace[name] for name in reference.KERNEL_FUNCTIONS})
    return _compiled


@contextlib.contextmanager
def using(value: str):
    """Run the block with kernel ``value`` (the benchmark times both in one process)."""
    if value not in MODES:
        raise InputError(f"kernel: must be one of {MODES}, got {value!r}")
    _override.append(value)
    try:
        yield
    finally:
        _override.pop()


def functions() -> types.SimpleNamespace | types.ModuleType:
    """What :func:`primaldual.dual.subroutine.best_schedule` calls: compiled, or the reference as Python."""
    return reference if mode() == "reference" else compiled()


__all__ = ["MODES", "compiled", "functions", "mode", "using"]
