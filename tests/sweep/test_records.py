"""The results file: strict reading (line numbers), cut-short last lines, repair before appending."""

from __future__ import annotations

import json

import pytest

from primaldual.core.errors import InputError
from primaldual.sweep.records import ResultsFile, ResultsFileError, dumps_record, read_records


def write_lines(path, records, tail: str = ""):
    path.write_text("".join(dumps_record(r) + "\n" for r in records) + tail, encoding="utf-8")


def test_roundtrip_in_file_order(tmp_path):
    path = tmp_path / "r.jsonl"
    records = [{"key": k, "value": n} for n, k in enumerate("cab")]
    with ResultsFile(path) as results:
        for record in records:
            results.append(record)
    assert list(read_records(path)) == ["c", "a", "b"]
    assert read_records(path)["a"] == {"key": "a", "value": 1}
    assert path.read_text().count("\n") == 3


def test_missing_file_is_empty(tmp_path):
    assert read_records(tmp_path / "none.jsonl") == {}


@pytest.mark.parametrize(
    "bad, message",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"value": 1}', 'no string "key"'),
    ],
)
def test_malformed_line_in_the_middle_names_file_and_line(tmp_path, bad, message):
    path = tmp_path / "r.jsonl"
    good = [dumps_record({"key": "a"}), dumps_record({"key": "b"})]
    path.write_text("\n".join([good[0], "", bad, good[1]]) + "\n", encoding="utf-8")
    with pytest.raises(ResultsFileError) as caught:
        read_records(path)
    text = str(caught.value)
    assert f"{path}: line 3:" in text and message in text
    assert isinstance(caught.value, InputError)  # the CLI turns it into exit 2


def test_duplicate_key_is_an_error_naming_both_lines(tmp_path):
    path = tmp_path / "r.jsonl"
    write_lines(path, [{"key": "a"}, {"key": "b"}, {"key": "a"}])
    with pytest.raises(ResultsFileError, match=r"line 3: key a already appeared on line 1"):
        read_records(path)


def test_cut_short_last_line_is_skipped_then_repaired(tmp_path):
    path = tmp_path / "r.jsonl"
    cut = dumps_record({"key": "c", "value": 3})[:-5]
    write_lines(path, [{"key": "a"}, {"key": "b"}], tail=cut)
    assert list(read_records(path)) == ["a", "b"]
    with ResultsFile(path) as results:
        results.append({"key": "c", "value": 3})
    lines = path.read_text().splitlines()
    assert [json.loads(line)["key"] for line in lines] == ["a", "b", "c"]


def test_cut_short_only_line(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"key": "a", "val', encoding="utf-8")
    assert read_records(path) == {}
    with ResultsFile(path) as results:
        results.append({"key": "a"})
    assert path.read_text() == dumps_record({"key": "a"}) + "\n"


def test_complete_last_line_without_newline_is_kept(tmp_path):
    path = tmp_path / "r.jsonl"
    write_lines(path, [{"key": "a"}], tail=dumps_record({"key": "b"}))
    assert list(read_records(path)) == ["a", "b"]
    with ResultsFile(path) as results:
        results.append({"key": "c"})
    assert list(read_records(path)) == ["a", "b", "c"]


def test_cut_multibyte_character_at_the_end(tmp_path):
    path = tmp_path / "r.jsonl"
    full = json.dumps({"key": "b", "name": "\u00e9\u00e9"}, ensure_ascii=False).encode("utf-8")
    path.write_bytes(dumps_record({"key": "a"}).encode() + b"\n" + full[: full.index(b"\xc3") + 1])
    assert list(read_records(path)) == ["a"]


def test_records_never_hold_nan(tmp_path):
    with pytest.raises(ValueError):
        dumps_record({"key": "a", "x": float("nan")})
