"""Finding the program's own files from source and from a built bundle (simulated by its attributes)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tallei_desktop.app import paths
from tallei_desktop.config import load_settings

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A bundle folder as PyInstaller lays it out, with this process posing as its windowed executable."""
    folder = tmp_path / "tallei-desktop"
    (folder / "_internal" / "resources").mkdir(parents=True)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(folder / "_internal"), raising=False)
    monkeypatch.setattr(sys, "executable", str(folder / paths.executable_name("Tallei")))
    return folder


def _model(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "model.onnx").write_bytes(b"onnx")
    return folder


def test_from_source_resources_are_the_repository_folder_and_there_is_no_bundle() -> None:
    assert not paths.is_frozen()
    assert paths.resources_dir() == REPO / "resources"
    assert (paths.resources_dir() / "tallei.svg").is_file()
    assert paths.bundle_dir() is None
    assert paths.bundled_model_dir() is None
    assert paths.console_executable() is None
    assert paths.windowed_executable() is None


def test_in_a_bundle_resources_and_executables_are_found_inside_it(bundle: Path) -> None:
    assert paths.is_frozen()
    assert paths.bundle_dir() == bundle / "_internal"
    assert paths.resources_dir() == bundle / "_internal" / "resources"
    assert paths.console_executable() == bundle / paths.executable_name("tallei-desktop")
    assert paths.windowed_executable() == bundle / paths.executable_name("Tallei")


def test_executable_names_get_exe_only_on_windows() -> None:
    assert paths.executable_name("Tallei", platform="win32") == "Tallei.exe"
    assert paths.executable_name("Tallei", platform="darwin") == "Tallei"
    assert paths.executable_name("tallei-desktop", platform="linux") == "tallei-desktop"


def test_a_bundle_built_without_a_model_has_none(bundle: Path, tmp_path: Path) -> None:
    (bundle / "_internal" / "model").mkdir()  # a folder without model.onnx is not a model

    assert paths.bundled_model_dir() is None
    assert load_settings(environ={}, config_path=tmp_path / "none.toml").model_dir is None


def test_a_bundled_model_is_used_when_no_model_folder_is_chosen(bundle: Path, tmp_path: Path) -> None:
    model = _model(bundle / "_internal" / "model")

    settings = load_settings(environ={}, config_path=tmp_path / "none.toml")

    assert paths.bundled_model_dir() == model
    assert settings.model_dir == model


def test_a_chosen_model_folder_or_another_model_name_wins_over_the_bundled_one(
    bundle: Path, tmp_path: Path
) -> None:
    _model(bundle / "_internal" / "model")
    chosen = _model(tmp_path / "chosen")
    none = tmp_path / "none.toml"

    by_folder = load_settings(environ={"TALLEI_MODEL_DIR": str(chosen)}, config_path=none)
    by_name = load_settings(environ={"TALLEI_MODEL_NAME": "BAAI/bge-small-en-v1.5"}, config_path=none)

    assert by_folder.model_dir == chosen
    assert by_name.model_dir is None


def test_downloads_go_to_our_user_cache_folder_never_fastembeds_temporary_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import platformdirs

    from tallei_desktop.core.errors import ModelUnavailable
    from tallei_desktop.factory import build_embedder

    cache = tmp_path / "cache"
    monkeypatch.setattr(platformdirs.PlatformDirs, "user_cache_dir", property(lambda _self: str(cache)))
    settings = load_settings(
        environ={"TALLEI_ALLOW_MODEL_DOWNLOAD": "no"}, config_path=tmp_path / "none.toml"
    )

    embedder = build_embedder(settings)
    with pytest.raises(ModelUnavailable):
        embedder.load()

    assert settings.model_cache_dir == cache / "models"
    assert f"not in the model cache in {cache / 'models'}" in embedder.status.detail
