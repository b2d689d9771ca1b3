"""Atomic writes: whole file or nothing, the caller's umask, deterministic Parquet."""

from __future__ import annotations

import hashlib
import os
import stat

import polars as pl
import pytest

from taxoforge.files import (
    atomic_directory,
    atomic_writer,
    make_private_dir,
    write_bytes_atomic,
    write_parquet_atomic,
    write_text_atomic,
)


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    p = tmp_path / "a" / "f.txt"
    write_text_atomic(p, "old\n")
    with pytest.raises(RuntimeError):
        with atomic_writer(p, "w", encoding="utf-8") as f:
            f.write("half of the new")
            raise RuntimeError("killed")
    assert p.read_text() == "old\n"
    assert sorted(x.name for x in p.parent.iterdir()) == ["f.txt"]
    assert write_bytes_atomic(p, b"new").read_bytes() == b"new"


def test_files_get_the_callers_umask_not_0600(tmp_path):
    old = os.umask(0o022)
    try:
        for p in (write_bytes_atomic(tmp_path / "b", b"x"), write_text_atomic(tmp_path / "t", "x"),
                  write_parquet_atomic(pl.DataFrame({"a": [1]}), tmp_path / "p.parquet")):
            assert stat.S_IMODE(p.stat().st_mode) == 0o644, p
        assert stat.S_IMODE(make_private_dir(tmp_path).stat().st_mode) == 0o755
        os.umask(0o077)
        assert stat.S_IMODE(write_bytes_atomic(tmp_path / "private", b"x").stat().st_mode) == 0o600
    finally:
        os.umask(old)


def test_parquet_bytes_depend_on_content_only(tmp_path):
    df = pl.DataFrame({"node_id": ["a", "b"], "depth": [0, 1]})
    a = write_parquet_atomic(df, tmp_path / "a.parquet").read_bytes()
    b = write_parquet_atomic(df.clone(), tmp_path / "b.parquet").read_bytes()
    assert a == b and hashlib.sha256(a).hexdigest() == hashlib.sha256(b).hexdigest()
    assert pl.read_parquet(tmp_path / "a.parquet").equals(df)


def test_atomic_directory_replaces_a_folder_whole_or_not_at_all(tmp_path):
    target = tmp_path / "corpus"
    with atomic_directory(target) as d:
        (d / "one").write_text("1")
    with pytest.raises(ValueError):
        with atomic_directory(target) as d:
            (d / "two").write_text("2")
            raise ValueError("interrupted")
    assert sorted(p.name for p in target.iterdir()) == ["one"]
    with atomic_directory(target) as d:
        (d / "two").write_text("2")
    assert sorted(p.name for p in target.iterdir()) == ["two"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]
