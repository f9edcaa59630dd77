"""The dual subroutine compiled: :mod:`primaldual.dual.reference`'s functions under ``numba.njit(cache=True)``.
The same mechanism compiles OASiS-LR's slot (:mod:`primaldual.oasis.lr.reference`): any module of plain loops
with a ``KERNEL_FUNCTIONS`` tuple, under the one switch ``PRIMALDUAL_KERNEL``.

:func:`functions` returns the namespace :func:`primaldual.dual.subroutine.best_schedule` calls. By default
(``auto``) a search of at most :data:`AUTO_LIMIT` cells (window slots x worker counts x servers) runs the
reference's plain Python until the process first needs the compiled functions for a larger one, and every
search runs compiled from then on: the two give the same bytes (a hypothesis test checks it), and a small
search costs less in Python than numba's import and cache load, which a process pays once; so a run of small
instances never loads numba, and a large run pays Python for at most its first few small searches.
``PRIMALDUAL_KERNEL=reference`` or ``compiled`` (or :func:`using`) fixes one for every call, for debugging and
for the tests that compare them. The compiled ones are copies of the reference's
code objects whose globals name each other's compiled versions, so a compiled caller calls compiled callees
and the reference module itself stays plain Python. ``cache=True`` keeps the machine code beside the source
(``__pycache__``): only the first process after an install or an edit compiles (docs/measurements.md); an edit
of any file a compiled function draws code from counts (:func:`stamped`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pathlib
import types

from primaldual.core.errors import InputError
from primaldual.dual import reference

#: ``PRIMALDUAL_KERNEL``'s values.
MODES = ("auto", "compiled", "reference")
#: Under ``auto``, the largest search (window slots x worker counts x servers) run as Python before the first
#: compiled one (a 20-slot ``small`` search has at most 800 cells).
AUTO_LIMIT = 1024

_compiled: dict[str, types.SimpleNamespace] = {}  # per reference module, by its name
_override: list[str] = []  # modes set by :func:`using`, innermost last


def mode() -> str:
    """The kernel this process runs: the innermost :func:`using`, else ``PRIMALDUAL_KERNEL`` (default
    ``auto``)."""
    value = _override[-1] if _override else os.environ.get("PRIMALDUAL_KERNEL", "auto")
    if value not in MODES:
        raise InputError(f"PRIMALDUAL_KERNEL: must be one of {MODES}, got {value!r}")
    return value


def compiled(module: types.ModuleType = reference) -> types.SimpleNamespace:
    """``module``'s ``KERNEL_FUNCTIONS`` compiled by numba (each compiled on its first call, then cached on
    disk)."""
    if module.__name__ not in _compiled:
        import numba  # only here: the reference runs without numba's import cost

        namespace = dict(vars(module))
        if hasattr(module, "kernel_globals"):  # Python objects the compiled copy replaces (its callees)
            namespace.update(module.kernel_globals())
        stamp = sources_stamp(module)
        for name in module.KERNEL_FUNCTIONS:
            plain = getattr(module, name)
            copy = types.FunctionType(plain.__code__, namespace, name, plain.__defaults__)
            copy.__qualname__, copy.__module__ = plain.__qualname__, plain.__module__
            namespace[name] = stamped(numba.njit(cache=True)(copy), stamp)
        _compiled[module.__name__] = types.SimpleNamespace(**{name: namespace[name]
                                                              for name in module.KERNEL_FUNCTIONS})
    return _compiled[module.__name__]


def kernel_sources(module: types.ModuleType) -> list[str]:
    """The files ``module``'s compiled functions may draw code from: its own, and those of the functions and
    modules its namespace names (for OASiS-LR's slot: the block search and the dual subroutine)."""
    files = {module.__file__}
    for value in vars(module).values():
        code = getattr(value, "__code__", None)
        source = code.co_filename if code is not None else getattr(value, "__file__", None)
        if source and "primaldual" in source:
            files.add(source)
    return sorted(files)


def sources_stamp(module: types.ModuleType) -> str:
    """A digest of the source of every file of :func:`kernel_sources`."""
    digest = hashlib.sha256()
    for path in kernel_sources(module):
        digest.update(pathlib.Path(path).read_bytes())
    return digest.hexdigest()


def stamped(dispatcher, stamp: str):
    """``dispatcher`` whose disk cache is valid only for these sources (:func:`sources_stamp`). numba keys a
    cached function on its own file alone, while a compiled copy here links functions of other files
    (``offer`` calls the dual subroutine's ``search``): an edit of one of those would leave stale machine code.
    The stamp is numba's own check of freshness, extended; where numba's internals differ, its own stays."""
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    if cache_file is not None and hasattr(cache_file, "_source_stamp"):
        cache_file._source_stamp = (cache_file._source_stamp, stamp)
    return dispatcher


def loaded() -> bool:
    """Whether this process has compiled (or loaded from the disk cache) any kernel: numba's import is paid."""
    return bool(_compiled)


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


def functions(cells: int | None = None,
              module: types.ModuleType = reference) -> types.SimpleNamespace | types.ModuleType:
    """What :func:`primaldual.dual.subroutine.best_schedule` calls for a search of ``cells`` (module docstring):
    ``module`` (the reference, or :mod:`primaldual.dual.typed`) compiled, or as Python."""
    chosen = mode()
    small = module.__name__ not in _compiled and cells is not None and cells <= AUTO_LIMIT
    return module if chosen == "reference" or (chosen == "auto" and small) else compiled(module)


__all__ = ["AUTO_LIMIT", "MODES", "compiled", "functions", "kernel_sources", "loaded", "mode", "sources_stamp",
           "stamped", "using"]
