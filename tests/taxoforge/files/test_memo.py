"""Content-keyed memo tables (:mod:`taxoforge.files.memo`): what one call stores the next reads,
only while the bytes are the ones this user's runs wrote."""

from __future__ import annotations

import polars as pl

from taxoforge.files.memo import ContentMemo, source_fingerprint


def _rows(texts, base=0):
    return pl.DataFrame({"text": texts, "value": [base + i for i in range(len(texts))]},
                        schema={"text": pl.String, "value": pl.Int64})


def test_what_one_call_stores_the_next_reads(tmp_path):
    memo = ContentMemo("demo", {"tree": "abc"}, ["text"], cache_dir=tmp_path)
    assert memo.load() is None and memo.lookup(_rows(["a"])) is None
    assert memo.save(_rows(["a", "b"]))
    later = ContentMemo("demo", {"tree": "abc"}, ["text"], cache_dir=tmp_path)  # another call
    found = later.lookup(_rows(["b", "x", "a"]))
    assert found["_found"].to_list() == [True, False, True]
    assert found["value"].to_list() == [1, None, 0]
    assert later.save(_rows(["x"], base=7))
    again = ContentMemo("demo", {"tree": "abc"}, ["text"], cache_dir=tmp_path)
    assert sorted(again.load().rows()) == [("a", 0), ("b", 1), ("x", 7)]


def test_a_table_that_is_one_result_is_replaced_not_merged(tmp_path):
    memo = ContentMemo("whole", {"file": "f"}, ["text"], cache_dir=tmp_path, merge=False)
    assert memo.save(_rows(["a", "b"]))
    later = ContentMemo("whole", {"file": "f"}, ["text"], cache_dir=tmp_path, merge=False)
    assert later.save(_rows(["c"], base=5))
    assert ContentMemo("whole", {"file": "f"}, ["text"], cache_dir=tmp_path).load().rows() == [("c", 5)]


def test_values_put_are_found_at_once_and_written_in_one_flush(tmp_path):
    memo = ContentMemo("values", {"k": 1}, ["key"], cache_dir=tmp_path)
    assert memo.get("a") is None and not memo.flush()
    memo.put("a", "1")
    memo.put("b", "2")
    assert memo.get("a") == "1" and not memo.path.exists()
    assert memo.flush() and not memo.flush()
    later = ContentMemo("values", {"k": 1}, ["key"], cache_dir=tmp_path)
    assert (later.get("a"), later.get("b"), later.get("c")) == ("1", "2", None)


def test_another_key_reads_another_table(tmp_path):
    ContentMemo("demo", {"tree": "abc"}, ["text"], cache_dir=tmp_path).save(_rows(["a"]))
    other = ContentMemo("demo", {"tree": "abd"}, ["text"], cache_dir=tmp_path)
    assert other.load() is None and other.lookup(_rows(["a"])) is None


def test_a_changed_or_foreign_table_is_never_read(tmp_path):
    memo = ContentMemo("demo", {"tree": "abc"}, ["text"], cache_dir=tmp_path)
    memo.save(_rows(["a", "b"]))
    # someone rewrites the table with other results (valid Parquet): ignored
    _rows(["a", "b"], base=100).write_parquet(memo.path)
    assert ContentMemo("demo", {"tree": "abc"}, ["text"], cache_dir=tmp_path).load() is None
    # a table under a key this user never wrote: ignored
    foreign = ContentMemo("demo", {"tree": "zzz"}, ["text"], cache_dir=tmp_path)
    foreign.path.parent.mkdir(parents=True, exist_ok=True)
    _rows(["a"]).write_parquet(foreign.path)
    assert ContentMemo("demo", {"tree": "zzz"}, ["text"], cache_dir=tmp_path).load() is None
    # computing again writes it anew, and it is read again
    fresh = ContentMemo("demo", {"tree": "abc"}, ["text"], cache_dir=tmp_path)
    assert fresh.save(_rows(["a", "b"]))
    assert ContentMemo("demo", {"tree": "abc"}, ["text"], cache_dir=tmp_path).load().rows() == [("a", 0), ("b", 1)]


def test_a_full_table_keeps_the_last_calls_rows(tmp_path):
    memo = ContentMemo("demo", {}, ["text"], cache_dir=tmp_path, max_rows=3)
    memo.save(_rows(["a", "b"]))
    ContentMemo("demo", {}, ["text"], cache_dir=tmp_path, max_rows=3).save(_rows(["c", "d"], base=5))
    assert ContentMemo("demo", {}, ["text"], cache_dir=tmp_path).load().rows() == [("c", 5), ("d", 6)]


def test_a_cache_folder_that_cannot_be_written_costs_only_the_speed(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    memo = ContentMemo("demo", {}, ["text"], cache_dir=blocker)
    assert memo.save(_rows(["a"])) is False  # no error: the results are computed again next time
    assert memo.load() is None


def test_source_fingerprint_follows_the_source(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    one = source_fingerprint(tmp_path / "pkg")
    assert one == source_fingerprint(tmp_path / "pkg")
    (tmp_path / "pkg" / "a.py").write_text("x = 2\n")
    assert source_fingerprint(tmp_path / "pkg") != one


def test_a_fifo_in_place_of_the_table_is_refused_not_waited_on(tmp_path):
    import os

    memo = ContentMemo("demo", {}, ["text"], cache_dir=tmp_path)
    memo.save(_rows(["a"]))
    memo.path.unlink()
    os.mkfifo(memo.path)
    assert ContentMemo("demo", {}, ["text"], cache_dir=tmp_path).load() is None


def test_a_value_is_computed_once_per_digest_of_its_inputs(tmp_path):
    import numpy as np

    from taxoforge.files.memo import inputs_digest

    a = np.arange(6, dtype=np.float64)
    key = inputs_digest(["sum", {"p": 1}], a)
    assert key == inputs_digest(["sum", {"p": 1}], a.copy())
    assert key != inputs_digest(["sum", {"p": 2}], a) != inputs_digest(["sum", {"p": 1}], a.reshape(2, 3))
    assert key != inputs_digest(["sum", {"p": 1}], a.astype(np.float32))
    calls = []
    memo = ContentMemo("values", {"k": 1}, ["key"], cache_dir=tmp_path)
    assert memo.json_value(key, lambda: calls.append(1) or {"s": 15.0}) == {"s": 15.0}
    memo.flush()
    later = ContentMemo("values", {"k": 1}, ["key"], cache_dir=tmp_path)
    assert later.json_value(key, lambda: calls.append(1) or {"s": -1.0}) == {"s": 15.0} and calls == [1]
