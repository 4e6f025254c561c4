"""The command line as a person uses it: real processes, a real passphrase-guarded store."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tallei_desktop import cli
from tallei_desktop.core import Budgets, Database, MemoryService
from tests.mcp_server.conftest import open_store
from tests.support.fake_embedder import HashEmbedder


@pytest.fixture
def env(tmp_path: Path, model_dir: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("TALLEI_")}
    base.update(
        TALLEI_DATA_DIR=str(tmp_path / "data"),
        TALLEI_PASSPHRASE="correct horse battery staple",
        TALLEI_MODEL_DIR=str(model_dir),
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
    assert report["pending_embeddings"] == 0  # the save left it pending; the doctor finished it first
    assert out.stderr == ""


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


def test_a_search_right_after_a_save_finds_it_by_meaning(env: dict[str, str]) -> None:
    """Each command is its own short-lived process: the save leaves the embedding pending, and the
    search, which shares no word with the memory, finishes that work before it answers."""
    assert run(env, "save", "The build server is called hopper").returncode == 0
    saved = run(env, "save", "My sister lives near Lisbon", "--json")
    mid = json.loads(saved.stdout)["id"]

    found = run(env, "search", "family abroad Portugal", "--json")

    assert found.returncode == 0, found.stderr
    assert found.stderr == ""
    assert json.loads(found.stdout)[0]["memory"]["id"] == mid


@pytest.mark.parametrize("command", ["recall", "search", "list", "show", "doctor", "conflicts"])
def test_every_read_command_finishes_pending_work_first(env: dict[str, str], command: str) -> None:
    saved = run(env, "save", "The spare key is under the blue flowerpot", "--json")
    mid = json.loads(saved.stdout)["id"]
    with open_store(env) as store:
        assert store.status().pending_embeddings == 1  # a save alone never embeds: fire and forget
    args = {"search": ("search", "spare key"), "show": ("show", mid)}.get(command, (command,))

    result = run(env, *args)

    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    with open_store(env) as store:
        assert store.status().pending_embeddings == 0


def test_a_read_command_that_runs_out_of_time_says_what_it_may_miss(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    embedder = HashEmbedder(gated=True)
    service = MemoryService(
        Database(tmp_path / "tallei.db", bytes(range(32)), key_source="test key"),
        embedder,  # type: ignore[arg-type]
        budgets=Budgets(preference=1_500, long_term=4_800, short_term=1_700, short_term_days=60),
    )
    try:
        for text in (
            "The boat is moored at pier 4",
            "The car is parked on level 2",
            "The bike is in the shed",
        ):
            service.save(text)

        cli._finish_pending(service, timeout=0.2)
        gave_up = capsys.readouterr().err

        embedder.open_gate()
        cli._finish_pending(service, timeout=30.0)
        finished = capsys.readouterr().err
    finally:
        embedder.open_gate()
        service.close()
    assert gave_up == "tallei-desktop: 3 memories are still being indexed; results may miss them.\n"
    assert finished == ""


#: Each command with the arguments it needs, to parse it with the global options around them.
COMMAND_ARGS: dict[str, list[str]] = {
    **{name: [] for name in ("recall", "list", "conflicts", "doctor", "mcp", "serve", "token")},
    **{name: ["0123456789ab"] for name in ("forget", "restore", "pin", "unpin", "show", "purge")},
    "save": ["text"],
    "search": ["words"],
    "resolve": ["c0123456789ab", "keep_both"],
    "connect": ["cursor"],
}


def test_global_options_mean_the_same_before_and_after_every_command(tmp_path: Path) -> None:
    parser = cli._parser()
    options = [
        "--data-dir",
        str(tmp_path / "d"),
        "--model-dir",
        str(tmp_path / "m"),
        "--config",
        "c.toml",
        "-v",
    ]
    commands = COMMAND_ARGS
    for name, rest in commands.items():
        before = parser.parse_args([*options, name, *rest])
        after = parser.parse_args([name, *rest, *options])
        split = parser.parse_args([*options[:4], name, *rest, *options[4:]])
        assert vars(before) == vars(after) == vars(split), name
        assert before.data_dir == tmp_path / "d" and before.verbose is True, name
        bare = parser.parse_args([name, *rest])
        assert (bare.data_dir, bare.model_dir, bare.config, bare.verbose) == (None, None, None, False), name


def test_every_command_accepts_the_global_options() -> None:
    parser = cli._parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(COMMAND_ARGS) <= set(sub.choices)
    for name, command in sub.choices.items():
        flags = {flag for action in command._actions for flag in action.option_strings}
        assert {"--data-dir", "--model-dir", "--config", "-v", "--verbose"} <= flags, name


def test_options_after_the_command_reach_the_store(env: dict[str, str], tmp_path: Path) -> None:
    chosen = tmp_path / "chosen"
    no_dir = {k: v for k, v in env.items() if k != "TALLEI_DATA_DIR"}

    saved = run(no_dir, "save", "Kept in the chosen folder", "--data-dir", str(chosen), "--json")
    listed = run(no_dir, "--data-dir", str(chosen), "list")

    assert saved.returncode == 0, saved.stderr
    assert json.loads(saved.stdout)["id"] in listed.stdout
    assert (chosen / "tallei.db").is_file()
