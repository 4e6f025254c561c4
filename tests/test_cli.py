"""The command line as a person uses it: real processes, a real passphrase-guarded store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import MODEL_DIR


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("TALLEI_")}
    base.update(
        TALLEI_DATA_DIR=str(tmp_path / "data"),
        TALLEI_PASSPHRASE="correct horse battery staple",
        TALLEI_MODEL_DIR=str(MODEL_DIR),
        TALLEI_CONFIG=str(tmp_path / "absent.toml"),
        # Never touch the developer's real keyring: the passphrase path is what these tests use.
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
    )
    return base


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tallei_desktop", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_save_recall_list_show_forget(env: dict[str, str]) -> None:
    saved = run(env, "save", "I prefer answers in British English", "--platform", "claude", "--json")
    assert saved.returncode == 0, saved.stderr
    mid = json.loads(saved.stdout)["id"]
    assert json.loads(saved.stdout)["type"] == "preference"
    recall = run(env, "recall", "spelling")
    assert recall.returncode == 0 and "British English" in recall.stdout and f"id {mid}" in recall.stdout
    structured = json.loads(run(env, "recall", "spelling", "--json").stdout)
    assert structured["preferences"][0]["memory"]["id"] == mid
    listed = run(env, "list", "--bucket", "preference")
    assert mid in listed.stdout
    shown = run(env, "show", mid)
    assert "saved by claude" in shown.stdout
    assert run(env, "forget", mid).returncode == 0
    assert mid not in run(env, "list").stdout


def test_doctor_reports_store_key_model_and_pending(env: dict[str, str]) -> None:
    run(env, "save", "The build server is called hopper")
    out = run(env, "doctor", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["key_source"].startswith("passphrase")
    assert report["semantic_search"] is True
    assert report["model_state"].startswith("ready")
    assert report["counts"]["long_term"] == 1
    assert report["pending_embeddings"] == 1  # a short-lived save leaves the embedding to the next process


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("save", ""), "empty"),
        (("save", "x" * 40_000), "limit"),
        (("save", "text", "--type", "opinion"), "invalid choice"),
        (("show", "not-an-id"), "not a memory id"),
        (("forget", "0123456789ab"), "No memory has the id"),
        (("list", "--status", "gone"), "Unknown status"),
        (("resolve", "c0123456789ab", "keep_first"), "No conflict has the id"),
    ],
)
def test_bad_input_gets_one_line_error_and_changes_nothing(
    env: dict[str, str], args: tuple[str, ...], needle: str
) -> None:
    assert run(env, "save", "Existing memory about the garden shed").returncode == 0
    before = run(env, "list", "--json").stdout
    result = run(env, *args)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], result.stderr
    assert run(env, "list", "--json").stdout == before


def test_wrong_passphrase_is_a_clear_error(env: dict[str, str]) -> None:
    assert run(env, "save", "a memory").returncode == 0
    wrong = run({**env, "TALLEI_PASSPHRASE": "nope"}, "list")
    assert wrong.returncode == 2
    assert "passphrase does not open" in wrong.stderr and len(wrong.stderr.strip().splitlines()) == 1
    assert "Set TALLEI_PASSPHRASE" in wrong.stderr


def test_without_model_the_cli_still_recalls(env: dict[str, str], tmp_path: Path) -> None:
    no_model = {**env, "TALLEI_MODEL_DIR": str(tmp_path / "nothing")}
    assert run(no_model, "save", "The wifi password hint is the dog's name").returncode == 0
    out = run(no_model, "recall", "wifi password")
    assert out.returncode == 0 and "wifi password hint" in out.stdout
    assert "Semantic search is off" in out.stdout
