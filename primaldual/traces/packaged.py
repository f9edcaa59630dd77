"""The shipped Philly traces (``primaldual/traces/data/philly/``, README and MIT licence there) and trace sources.

A **source** is a file path or a packaged name ``philly:SEED/VC`` (``philly:0/6214e9``), or ``philly:VC`` with
the seed taken from the options (``--seed``, default 0; a seed in the name and a different ``--seed`` are refused, and so is ``--seed``
with a trace file, which has no seed). :func:`read_source` returns the source's text, its display name,
its format and, for packaged names, the seed and VC.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from primaldual.core.errors import InputError
from primaldual.core.paths import check_path
from primaldual.core.numerals import echo, read_integer

PREFIX = "philly:"
SEEDS = (0, 1)
#: A source file larger than this is refused before it is read (the largest shipped VC is ~0.4 MB).
MAX_SOURCE_BYTES = 200 * 1024 * 1024


@dataclass(frozen=True)
class Source:
    """A trace's text and where it came from."""

    text: str
    name: str
    format: str
    seed: int | None = None
    vc: str | None = None


def _data():
    return resources.files("primaldual.traces").joinpath("data", "philly")


def packaged_vcs(seed: int) -> tuple[str, ...]:
    """The VC names of one shipped seed, sorted."""
    folder = _data().joinpath(f"seed={seed}")
    return tuple(sorted(entry.name[:-len(".trace")] for entry in folder.iterdir() if entry.name.endswith(".trace")))


def _seed_and_vc(name: str, default_seed: int | None) -> tuple[int, str]:
    """``philly:SEED/VC`` or ``philly:VC`` split, each part checked: one slash at most, neither part empty, the
    seed ASCII decimal digits."""
    parts = name[len(PREFIX):].split("/")
    if len(parts) > 2 or not all(parts):
        raise InputError(f"SOURCE: {echo(name)}: expected philly:SEED/VC or philly:VC (one slash, no empty part)")
    if len(parts) == 1:
        return (0 if default_seed is None else default_seed), parts[0]
    seed = read_integer(parts[0])
    if seed is None:
        raise InputError(f"SOURCE: {echo(name)}: the seed {echo(parts[0])} must be an integer (philly:SEED/VC)")
    if default_seed is not None and default_seed != seed:
        raise InputError(f"--seed: {default_seed} disagrees with the seed {seed} named in {name}")
    return seed, parts[1]


def _packaged(name: str, default_seed: int | None) -> Source:
    seed, vc = _seed_and_vc(name, default_seed)
    if seed not in SEEDS:
        raise InputError(f"SOURCE: {name}: shipped seeds are {', '.join(map(str, SEEDS))}, got {seed}")
    if vc not in packaged_vcs(seed):
        raise InputError(f"SOURCE: {echo(name)}: no VC {echo(vc)} in seed {seed} (primaldual trace list shows them)")
    text = _data().joinpath(f"seed={seed}", f"{vc}.trace").read_text(encoding="utf-8")
    return Source(text=text, name=f"{PREFIX}{seed}/{vc}", format="gavel", seed=seed, vc=vc)


def _read_file(path: Path) -> str:
    """The text of the trace file ``path``; a missing path, a folder, a device or pipe, a file too large and
    text that is not UTF-8 are each one line naming the path."""
    try:
        if not path.exists():
            raise InputError(f"SOURCE: {echo(str(path))}: no such file (or a packaged name like philly:0/6214e9)")
        if path.is_dir():
            raise InputError(f"SOURCE: {echo(str(path))}: is a folder, expected a trace file")
        check_path(path, "SOURCE", write=False)  # a device or pipe: refused before it is opened
        if path.stat().st_size > MAX_SOURCE_BYTES:
            raise InputError(f"SOURCE: {echo(str(path))}: larger than {MAX_SOURCE_BYTES // 2**20} MB")
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{echo(str(path))}: not UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise InputError(f"SOURCE: {echo(str(path))}: cannot read: {error.strerror}") from None


def read_source(source: str | Path, format: str | None, default_seed: int | None = None) -> Source:
    """The text of ``source``: a packaged name or a file; ``format`` ``gavel``/``csv`` or ``None`` (a ``.csv``
    file is CSV, anything else Gavel)."""
    if format not in (None, "gavel", "csv"):
        raise InputError(f"--format: must be gavel or csv, got {format!r}")
    text_name = str(source)
    if text_name.startswith(PREFIX):
        if format == "csv":
            raise InputError(f"--format: {text_name} is a Gavel trace, not csv")
        return _packaged(text_name, default_seed)
    if default_seed is not None:
        raise InputError(f"--seed: applies to a packaged name (philly:VC) only; {echo(text_name)} is a file")
    path = Path(source)
    text = _read_file(path)
    chosen = format or ("csv" if path.suffix.lower() == ".csv" else "gavel")
    return Source(text=text, name=str(path), format=chosen)
