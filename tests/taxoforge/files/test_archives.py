"""Archives from outside: zip members that escape the folder, links, zip bombs, size limits
and damaged members refuse the archive before anything is written; compressed files are
recognised by their magic bytes; macOS metadata is never a member to read; two candidates are
an error, never a guess."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import tarfile
import zipfile
from pathlib import Path

import pytest

from taxoforge.files.archives import (
    ArchiveError,
    is_macos_metadata,
    is_tar,
    member_path,
    open_decompressed,
    safe_extract_zip,
    single_member,
)


def _zip(out: Path, members: dict[str, bytes | str]) -> Path:
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return out


def test_members_are_extracted_where_their_names_say(tmp_path):
    z = _zip(tmp_path / "ok.zip", {"a.tsv": "x\n", "data/b.tsv": "y\n", "data/c.tsv": "z\n"})
    root = safe_extract_zip(z, tmp_path / "out", members=["a.tsv", "data/b.tsv"])
    assert member_path(root, "data/b.tsv").read_text() == "y\n" and (root / "a.tsv").read_text() == "x\n"
    assert not (root / "data" / "c.tsv").exists()  # only what was asked for
    assert sorted(p.name for p in root.rglob("*")) == ["a.tsv", "b.tsv", "data"]  # no .part left
    with pytest.raises(ArchiveError, match=r"ok\.zip: no member\(s\) \['nope\.tsv'\]"):
        safe_extract_zip(z, tmp_path / "out2", members=["nope.tsv"])


@pytest.mark.parametrize("member", ["../evil.tsv", "/tmp/evil.tsv", "a/../../evil.tsv", "C:/evil.tsv", "..\\evil.tsv"])
def test_a_member_escaping_the_folder_refuses_the_whole_archive(tmp_path, member):
    z = _zip(tmp_path / "bad.zip", {"taxon.tsv": "ID\n", member: "pwned"})
    dest = tmp_path / "out" / "inner"
    with pytest.raises(ArchiveError, match=r"bad\.zip: member .* refusing the archive"):
        safe_extract_zip(z, dest, members=["taxon.tsv"])  # even when the bad member is not asked for
    assert not (tmp_path / "out" / "evil.tsv").exists() and not (tmp_path / "evil.tsv").exists()
    assert list(dest.iterdir()) == []  # nothing extracted at all


def test_a_symbolic_link_refuses_the_archive(tmp_path):
    z = tmp_path / "link.zip"
    with zipfile.ZipFile(z, "w") as zf:
        info = zipfile.ZipInfo("taxon.tsv")
        info.external_attr = 0o120777 << 16
        zf.writestr(info, "/etc/passwd")
    with pytest.raises(ArchiveError, match="'taxon.tsv' is a symbolic link; refusing the archive"):
        safe_extract_zip(z, tmp_path / "x")
    assert list((tmp_path / "x").iterdir()) == []


def test_a_zip_bomb_is_refused_by_its_ratio_before_a_byte_is_written(tmp_path):
    z = _zip(tmp_path / "bomb.zip", {"small.tsv": "a\tb\n", "name.tsv": b"n1\tEsox\tgenus\n" * (200 * 2**20 // 14)})
    assert z.stat().st_size < 500_000
    dest = tmp_path / "out"
    with pytest.raises(ArchiveError, match=r"bomb\.zip: member 'name\.tsv' would expand .*\(ratio \d+, more than "
                                           r"max_ratio=100\)"):
        safe_extract_zip(z, dest)
    assert list(dest.iterdir()) == []
    root = safe_extract_zip(z, dest, members=["small.tsv"])  # the bomb, not asked for, is never opened
    assert (root / "small.tsv").read_text() == "a\tb\n" and not (root / "name.tsv").exists()


def test_the_total_size_limit(tmp_path):
    z = _zip(tmp_path / "big.zip", {"a.tsv": "x" * 30, "b.tsv": "y" * 30})
    with pytest.raises(ArchiveError, match=r"big\.zip: the members to extract hold 60 bytes, more than "
                                           r"max_extract_bytes=40"):
        safe_extract_zip(z, tmp_path / "out", max_bytes=40)
    assert safe_extract_zip(z, tmp_path / "out", max_bytes=60).joinpath("b.tsv").stat().st_size == 30


def test_a_damaged_member_is_named(tmp_path):
    z = _zip(tmp_path / "dmg.zip", {"taxon.tsv": "ID\tparentID\n" + "t1\t\n" * 500})
    raw = bytearray(z.read_bytes())
    with zipfile.ZipFile(z) as zf:
        info = zf.getinfo("taxon.tsv")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    for i in range(start + 5, start + 25):  # scramble the compressed data
        raw[i] ^= 0x5A
    z.write_bytes(bytes(raw))
    with pytest.raises(ArchiveError, match=r"dmg\.zip: member 'taxon\.tsv' is damaged or truncated"):
        safe_extract_zip(z, tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []  # the partial member is removed
    (tmp_path / "not.zip").write_text("hello")
    with pytest.raises(ArchiveError, match=r"not\.zip: not a readable zip archive"):
        safe_extract_zip(tmp_path / "not.zip", tmp_path / "out")


@pytest.mark.parametrize("kind,compress", [("gzip", gzip.compress), ("bzip2", bz2.compress), ("xz", lzma.compress),
                                           ("file", lambda b: b)])
def test_compressed_files_are_recognised_by_their_magic_bytes_not_their_names(tmp_path, kind, compress):
    path = tmp_path / "data.json"  # the name says nothing
    path.write_bytes(compress(b'{"categories": []}'))
    fh, got = open_decompressed(path)
    with fh:
        assert fh.read() == b'{"categories": []}' and got == kind
    assert not is_tar(path)


def test_tar_archives_by_name_or_by_their_mark(tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        data = b"{}"
        info = tarfile.TarInfo("train.json")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    unnamed = tmp_path / "archive.bin"
    unnamed.write_bytes(buf.getvalue())
    assert is_tar(unnamed) and is_tar(tmp_path / "x.tar.gz")
    damaged = tmp_path / "cut.bin"
    damaged.write_bytes(buf.getvalue()[:20])
    assert not is_tar(damaged)


def test_macos_metadata_and_single_members():
    assert is_macos_metadata("__MACOSX/data/._Taxon.tsv") and is_macos_metadata("._train.json")
    assert is_macos_metadata("data/.DS_Store") and not is_macos_metadata("data/Taxon.tsv")
    assert single_member("a.zip", ["data/Taxon.tsv", "__MACOSX/data/._Taxon.tsv"], "Taxon tables") == "data/Taxon.tsv"
    assert single_member("a.zip", [], "Taxon tables") is None
    with pytest.raises(ArchiveError, match=r"^a\.zip: holds 2 Taxon tables \(Taxon\.tsv, data/Taxon\.tsv\); refusing "
                                           r"to guess: keep one$"):
        single_member("a.zip", ["data/Taxon.tsv", "Taxon.tsv"], "Taxon tables", "keep one")
    with pytest.raises(ArchiveError, match="holds 2"):  # the same name twice (an appended tar) is two members
        single_member("a.tar", ["train.json", "train.json"], "annotation files")
