"""Paths from outside names stay inside their folder."""

from __future__ import annotations

import os

import pytest

from taxoforge.files import UnsafePath, path_inside


def test_names_that_climb_out_or_are_absolute_are_refused(tmp_path):
    assert path_inside(tmp_path, "demo", "v1") == tmp_path / "demo" / "v1"
    for parts in (("..", "x"), ("demo", "../../x"), ("/etc/passwd",), ("demo", "/tmp/x")):
        with pytest.raises(UnsafePath, match="leaves"):
            path_inside(tmp_path, *parts)


def test_a_symlink_out_of_the_folder_is_refused(tmp_path):
    (tmp_path / "root").mkdir()
    os.symlink(tmp_path, tmp_path / "root" / "link")
    with pytest.raises(UnsafePath):
        path_inside(tmp_path / "root", "link", "x")


def test_the_user_data_folder_follows_xdg_and_never_the_working_folder(tmp_path, monkeypatch):
    from taxoforge.files import user_data_dir

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert user_data_dir() == tmp_path / "xdg" / "taxoforge"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/path")  # not absolute: ignored, as the XDG rule says
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_data_dir() == tmp_path / "home" / ".local" / "share" / "taxoforge"
    monkeypatch.chdir(tmp_path)
    assert user_data_dir().is_absolute()
