"""export, import, backup and restore as a person runs them: real processes on passphrase-guarded stores."""

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
        TALLEI_EXPORT_PASSPHRASE="an export passphrase",
        TALLEI_MODEL_DIR=str(MODEL_DIR),
        TALLEI_CONFIG=str(tmp_path / "absent.toml"),
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
    )
    return base


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tallei_desktop", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("tallei-desktop: "), result.stderr
    return result.stderr


def test_export_then_import_into_another_store_and_again(env: dict[str, str], tmp_path: Path) -> None:
    assert run(env, "save", "The build server is called hopper", "--platform", "claude").returncode == 0
    assert run(env, "save", "I prefer answers in British English", "--platform", "chatgpt").returncode == 0
    out = tmp_path / "memories.tallei"
    exported = run(env, "export", "--out", str(out))
    assert exported.returncode == 0, exported.stderr
    assert "exported 2 memories and 0 conflicts" in exported.stdout and "encrypted" in exported.stdout
    assert b"hopper" not in out.read_bytes()

    other = {**env, "TALLEI_DATA_DIR": str(tmp_path / "other")}
    first = run(other, "import", str(out))
    assert first.returncode == 0, first.stderr
    assert "2 added, 0 confirmed, 0 skipped" in first.stdout
    again = run(other, "import", str(out))
    assert "0 added, 0 confirmed, 2 skipped" in again.stdout
    assert "hopper" in run(other, "list").stdout


def test_import_finishes_the_conflict_checks_before_it_returns(env: dict[str, str], tmp_path: Path) -> None:
    other = {**env, "TALLEI_DATA_DIR": str(tmp_path / "other")}
    assert run(other, "save", "I prefer spaces for indentation", "--platform", "chatgpt").returncode == 0
    assert run(other, "list").returncode == 0  # a read command: the save is embedded and checked
    assert run(env, "save", "I prefer tabs for indentation", "--platform", "claude").returncode == 0
    out = tmp_path / "tabs.json"
    assert run(env, "export", "--plain", "--out", str(out)).returncode == 0

    imported = run(other, "import", str(out))
    assert imported.returncode == 0 and "1 added" in imported.stdout, imported.stderr
    # export runs no background work of its own, so what it shows is what import left behind.
    after = tmp_path / "after.json"
    assert run(other, "export", "--plain", "--out", str(after)).returncode == 0
    document = json.loads(after.read_text(encoding="utf-8"))
    [conflict] = document["conflicts"]
    assert conflict["status"] == "open"


def test_plain_export_is_readable_json_and_never_overwritten_without_force(
    env: dict[str, str], tmp_path: Path
) -> None:
    run(env, "save", "The staging database lives in Frankfurt")
    out = tmp_path / "plain.json"
    assert run(env, "export", "--plain", "--out", str(out)).returncode == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["format"] == "tallei-desktop-export"
    assert document["memories"][0]["content"] == "The staging database lives in Frankfurt"
    assert "already exists" in one_line_error(run(env, "export", "--plain", "--out", str(out)))
    assert out.read_text(encoding="utf-8") == json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    assert run(env, "export", "--plain", "--force", "--out", str(out)).returncode == 0


def test_export_without_any_passphrase_is_a_one_line_error(env: dict[str, str], tmp_path: Path) -> None:
    bare = {k: v for k, v in env.items() if k not in {"TALLEI_PASSPHRASE", "TALLEI_EXPORT_PASSPHRASE"}}
    out = tmp_path / "never.tallei"
    assert "TALLEI_EXPORT_PASSPHRASE" in one_line_error(run(bare, "export", "--out", str(out)))
    assert not out.exists()


def test_import_of_a_foreign_or_wrongly_sealed_file_changes_nothing(
    env: dict[str, str], tmp_path: Path
) -> None:
    run(env, "save", "The only memory here")
    foreign = tmp_path / "notes.json"
    foreign.write_text('{"format": "something-else", "version": 1}', encoding="utf-8")
    assert "not a Tallei export" in one_line_error(run(env, "import", str(foreign)))
    sealed = tmp_path / "sealed.tallei"
    assert run(env, "export", "--out", str(sealed)).returncode == 0
    wrong = {**env, "TALLEI_EXPORT_PASSPHRASE": "not the one"}
    assert "passphrase" in one_line_error(run(wrong, "import", str(sealed)))
    assert "No such file" in one_line_error(run(env, "import", str(tmp_path / "missing.tallei")))
    listed = run(env, "list").stdout.strip().splitlines()
    assert len(listed) == 1 and "The only memory here" in listed[0]


def test_backup_then_restore_refused_while_served_then_done(env: dict[str, str], tmp_path: Path) -> None:
    run(env, "save", "Before the backup")
    made = run(env, "backup")
    assert made.returncode == 0, made.stderr
    backup = Path(made.stdout.strip())
    assert backup.is_file() and backup.parent == tmp_path / "data" / "backups"
    run(env, "save", "After the backup")

    server = subprocess.Popen(
        [sys.executable, "-m", "tallei_desktop", "mcp"],
        env={**env, "TALLEI_ALLOW_MODEL_DOWNLOAD": "0"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        # The server has the store open once it answers initialize.
        assert server.stdin is not None and server.stdout is not None
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        }
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        # A tool call is answered only once the store is open (initialize may come first).
        status = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "memory_status", "arguments": {}},
        }
        for message in (init, initialized, status):
            server.stdin.write((json.dumps(message) + "\n").encode())
        server.stdin.flush()
        answers = [json.loads(server.stdout.readline()) for _ in range(2)]
        assert [a.get("id") for a in answers] == [1, 2] and "result" in answers[1]
        assert "open in another program" in one_line_error(run(env, "restore", "--yes"))
    finally:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.close()
        server.wait(timeout=60)
        server.stdout.close()

    unconfirmed = run(env, "restore")
    assert unconfirmed.returncode == 2 and "--yes" in one_line_error(unconfirmed)
    assert "After the backup" in run(env, "list").stdout  # nothing replaced

    restored = run(env, "restore", "--yes")
    assert restored.returncode == 0, restored.stderr
    assert str(backup) in restored.stdout and "tallei.db.replaced-" in restored.stdout
    listed = run(env, "list").stdout
    assert "Before the backup" in listed and "After the backup" not in listed


def test_restore_with_a_memory_id_still_brings_back_a_forgotten_memory(env: dict[str, str]) -> None:
    mid = json.loads(run(env, "save", "Forgotten then restored", "--json").stdout)["id"]
    assert run(env, "forget", mid).returncode == 0
    back = run(env, "restore", mid)
    assert back.returncode == 0, back.stderr
    assert "Forgotten then restored" in run(env, "list").stdout


def test_damaged_store_names_the_newest_backup(env: dict[str, str], tmp_path: Path) -> None:
    for text in ("The build server is called hopper", "Standup is at nine"):
        assert run(env, "save", text).returncode == 0
    backup = Path(run(env, "backup").stdout.strip())
    store = tmp_path / "data" / "tallei.db"
    data = bytearray(store.read_bytes())
    for i in range(200, 232):
        data[i] ^= 0xFF
    store.write_bytes(bytes(data))
    message = one_line_error(run(env, "list"))
    assert "damaged" in message and str(backup) in message and "tallei-desktop restore" in message


class _Terminal:
    """Stands in for a person at a terminal: answers each getpass prompt in turn."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []

    def __call__(self, prompt: str = "") -> str:
        self.prompts.append(prompt)
        return self.answers.pop(0)


@pytest.mark.parametrize(
    ("answers", "twice", "outcome"),
    [
        (("typed secret", "typed secret"), True, "typed secret"),
        (("typed secret", "typo secret"), True, "differ"),
        (("",), True, "empty"),
        (("typed secret",), False, "typed secret"),
    ],
)
def test_passphrase_is_asked_on_a_terminal_twice_for_export(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, answers: tuple[str, ...], twice: bool, outcome: str
) -> None:
    from tallei_desktop import cli
    from tallei_desktop.config import Settings
    from tallei_desktop.core.errors import InvalidInput

    terminal = _Terminal(*answers)
    monkeypatch.setattr(cli.getpass, "getpass", terminal)
    monkeypatch.setattr(cli.sys, "stdin", type("Tty", (), {"isatty": staticmethod(lambda: True)})())
    settings = Settings(data_dir=tmp_path, log_dir=tmp_path)
    if outcome == "typed secret":
        assert cli._export_passphrase(settings, twice=twice) == "typed secret"
        assert len(terminal.prompts) == (2 if twice else 1)
    else:
        with pytest.raises(InvalidInput, match=outcome):
            cli._export_passphrase(settings, twice=twice)


def test_settings_take_the_export_passphrase_and_backup_count_from_the_environment(tmp_path: Path) -> None:
    from tallei_desktop.config import load_settings
    from tallei_desktop.core.errors import InvalidInput

    absent = tmp_path / "absent.toml"
    settings = load_settings(
        environ={"TALLEI_EXPORT_PASSPHRASE": "hunter2-export", "TALLEI_BACKUP_KEEP": "3"}, config_path=absent
    )
    assert settings.export_passphrase == "hunter2-export" and settings.backup_keep == 3
    assert "hunter2" not in repr(settings) and "export_passphrase=set" in repr(settings)
    assert load_settings(environ={}, config_path=absent).backup_keep == 7
    with pytest.raises(InvalidInput, match="backup_keep"):
        load_settings(environ={"TALLEI_BACKUP_KEEP": "0"}, config_path=absent)
    secret_file = tmp_path / "config.toml"
    secret_file.write_text('export_passphrase = "in a file"\n', encoding="utf-8")
    with pytest.raises(InvalidInput, match="unknown setting"):
        load_settings(environ={}, config_path=secret_file)
    kept = tmp_path / "keep.toml"
    kept.write_text("backup_keep = 14\n", encoding="utf-8")
    assert load_settings(environ={}, config_path=kept).backup_keep == 14
