"""One rule for every output path (primaldual/core/output.py; docs/input-ranges.md, "Output paths"): missing parents
are created, an unwritable destination is exit 2 with one line naming the flag and the path before any work,
and a file is written beside its target and renamed, so a failed write leaves nothing partial."""

from __future__ import annotations

import errno
import os

import pytest

from primaldual.cli import main
from primaldual.core.errors import InputError
from primaldual.core.output import replacing, write_text


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    folder = tmp_path_factory.mktemp("outputs")
    assert main(["generate", "--preset", "tiny", "-o", str(folder / "i.json")]) == 0
    assert main(["run", str(folder / "i.json"), "--scheduler", "fifo", "-o", str(folder / "s.json")]) == 0
    return folder


@pytest.fixture()
def files(made, tmp_path, monkeypatch):
    for name in ("i.json", "s.json"):
        (tmp_path / name).write_bytes((made / name).read_bytes())
    (tmp_path / "afile").write_text("")
    monkeypatch.chdir(tmp_path)
    return tmp_path


WRITERS = [
    (["generate", "--preset", "tiny", "-o", "{out}.json"], "-o/--output"),
    (["run", "i.json", "--scheduler", "fifo", "-o", "{out}.json"], "-o"),
    (["solve", "i.json", "-o", "{out}.json"], "-o"),
    (["solve", "i.json", "--write-mps", "{out}.mps"], "--write-mps"),
    (["lbbsp", "generate", "--kind", "amplified", "--output", "{out}.csv"], "--output"),
    (["lbbsp", "replay", "--cov-job", "0", "--output", "{out}.json"], "--output"),
    (["plot", "schedule", "i.json", "s.json", "--out", "{out}.png"], "--out"),
    (["ratio", "--preset", "tiny", "--instances", "1", "--out", "{out}.jsonl"], "--out"),
    (["reproduce", "--quick", "--out", "{out}"], "--out"),
    (["trace", "import", "philly:0/795a4c", "-o", "{out}.json"], "-o/--output"),
]


@pytest.mark.parametrize("argv, flag", WRITERS, ids=[" ".join(a[:2]) for a, _ in WRITERS])
def test_a_parent_that_is_a_file_is_one_line_naming_the_flag(files, capsys, argv, flag):
    code = main([a.format(out="afile/x") for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert f"{flag}: cannot create folder afile" in err and "a file of that name is in the way" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("argv", [["generate", "--preset", "tiny", "-o", "new/a/i.json"],
                                  ["solve", "i.json", "--write-mps", "new/b/m.mps"]])
def test_missing_parents_are_created_by_every_writer(files, argv):
    assert main(argv) == 0
    assert (files / argv[-1]).is_file()
    assert [p.name for p in (files / argv[-1]).parent.iterdir()] == [os.path.basename(argv[-1])]  # no temp left


def test_a_failed_write_leaves_the_target_untouched_and_no_temporary(tmp_path):
    target = tmp_path / "t.json"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with replacing(target) as temporary:
            temporary.write_text("half")
            raise RuntimeError("interrupted")
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]
    write_text(target, "new")
    assert target.read_text() == "new" and oct(target.stat().st_mode & 0o777) != "0o600"


@pytest.mark.parametrize("code, words", [(errno.ENOSPC, "No space left on device"),
                                         (errno.EACCES, "Permission denied")])
def test_disk_full_or_read_only_at_write_time_is_exit_2_naming_the_path(files, capsys, monkeypatch, code, words):
    def failing(source, target):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "replace", failing)
    assert main(["generate", "--preset", "tiny", "-o", "full.json"]) == 2
    err = capsys.readouterr().err
    assert err == f"primaldual generate: error: cannot write full.json: {words}\n", err
    assert not (files / "full.json").exists() and not list(files.glob(".full.json.*"))
    with pytest.raises(InputError, match=f"--out: cannot write .*x.png: {words}"):
        with replacing(files / "x.png", "--out"):
            pass
