"""replace_file: the new bytes whole, or the old file untouched and no stray temporary file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tallei_desktop.core.files import replace_file


def test_replace_file_writes_the_bytes_with_the_mode_asked_for(tmp_path: Path) -> None:
    target = tmp_path / "settings.toml"
    target.write_bytes(b"old")
    replace_file(target, b"new", mode=0o640)
    assert target.read_bytes() == b"new"
    if os.name == "posix":
        assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.toml"]


def test_a_refusal_before_the_rename_leaves_the_old_file_and_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "key"
    target.write_bytes(b"old")

    def refuse() -> None:
        raise RuntimeError("changed meanwhile")

    with pytest.raises(RuntimeError, match="changed meanwhile"):
        replace_file(target, b"new", before_replace=refuse)
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["key"]


def test_a_missing_folder_is_an_os_error_and_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        replace_file(tmp_path / "absent" / "file", b"data")
    assert list(tmp_path.iterdir()) == []
