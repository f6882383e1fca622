"""``fs/*`` served by corral stays inside the project root: ``..``, symlinks and absolute paths
that lead outside are refused; reads and writes inside work."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corral.adapters._acp_fs import RESOURCE_NOT_FOUND, OutsideRoot, ProjectFiles
from corral.errors import JsonRpcError


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "project"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (root / "inside.txt").write_text("one\ntwo\nthree\n")
    return root, outside


def test_read_inside(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    files = ProjectFiles(root)
    assert files.read(str(root / "inside.txt")) == {"content": "one\ntwo\nthree\n"}
    assert files.read("inside.txt", line=2, limit=1) == {"content": "two\n"}


def test_write_inside_creates_parents(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    ProjectFiles(root).write(str(root / "sub" / "new.txt"), "hi")
    assert (root / "sub" / "new.txt").read_text() == "hi"


def test_missing_file_is_resource_not_found(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    with pytest.raises(JsonRpcError) as info:
        ProjectFiles(root).read(str(root / "nope.txt"))
    assert info.value.code == RESOURCE_NOT_FOUND
    assert "Resource not found" in info.value.rpc_message  # what gemini's client matches on


@pytest.mark.parametrize(
    "path",
    [
        "../outside/secret.txt",
        "{root}/../outside/secret.txt",
        "{root}/sub/../../outside/secret.txt",
        "{outside}/secret.txt",
        "/etc/passwd",
    ],
)
def test_dotdot_and_absolute_outside_refused(layout: tuple[Path, Path], path: str) -> None:
    root, outside = layout
    files = ProjectFiles(root)
    target = path.format(root=root, outside=outside)
    with pytest.raises(OutsideRoot):
        files.read(target)
    with pytest.raises(OutsideRoot):
        files.write(target, "pwned")
    assert (outside / "secret.txt").read_text() == "secret"


def test_symlinked_file_outside_refused(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    (root / "link.txt").symlink_to(outside / "secret.txt")
    files = ProjectFiles(root)
    with pytest.raises(OutsideRoot):
        files.read(str(root / "link.txt"))
    with pytest.raises(OutsideRoot):
        files.write(str(root / "link.txt"), "pwned")
    assert (outside / "secret.txt").read_text() == "secret"


def test_symlinked_directory_outside_refused(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    (root / "escape").symlink_to(outside, target_is_directory=True)
    files = ProjectFiles(root)
    with pytest.raises(OutsideRoot):
        files.read(str(root / "escape" / "secret.txt"))
    with pytest.raises(OutsideRoot):
        files.write(str(root / "escape" / "new.txt"), "pwned")
    assert not (outside / "new.txt").exists()


def test_dangling_symlink_to_outside_refused(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    (root / "dangling").symlink_to(outside / "created-by-write.txt")
    with pytest.raises(OutsideRoot):
        ProjectFiles(root).write(str(root / "dangling"), "pwned")
    assert not (outside / "created-by-write.txt").exists()


def test_root_reached_through_a_symlink_still_works(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    alias = tmp_path / "alias"
    alias.symlink_to(real, target_is_directory=True)
    files = ProjectFiles(alias)
    files.write(str(alias / "a.txt"), "ok")
    assert (real / "a.txt").read_text() == "ok"
    assert files.read(os.path.join(str(alias), "a.txt")) == {"content": "ok"}


def test_invalid_paths_refused(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    files = ProjectFiles(root)
    for bad in ("", "a\0b"):
        with pytest.raises(JsonRpcError):
            files.read(bad)
