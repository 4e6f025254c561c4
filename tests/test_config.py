"""Reading and writing the settings file."""

from __future__ import annotations

import math
import stat
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tallei_desktop.config import dump_toml, load_settings, save_settings
from tallei_desktop.core.errors import InvalidInput, KnownError


def test_saved_settings_are_what_the_next_load_reads(tmp_path: Path) -> None:
    config = tmp_path / "conf" / "config.toml"

    written = save_settings(
        {"start_at_login": True, "notify_conflicts": "no", "http_port": "9000", "model_dir": tmp_path / "m"},
        config_path=config,
    )

    settings = load_settings(environ={}, config_path=config)
    assert written == config
    assert settings.start_at_login is True
    assert settings.notify_conflicts is False
    assert settings.http_port == 9000
    assert settings.model_dir == tmp_path / "m"


def test_new_settings_have_defaults_and_environment_variables(tmp_path: Path) -> None:
    none = tmp_path / "none.toml"

    defaults = load_settings(environ={}, config_path=none)
    from_env = load_settings(
        environ={"TALLEI_START_AT_LOGIN": "yes", "TALLEI_NOTIFY_CONFLICTS": "0"}, config_path=none
    )

    assert (defaults.start_at_login, defaults.notify_conflicts) == (False, True)
    assert (from_env.start_at_login, from_env.notify_conflicts) == (True, False)
    with pytest.raises(InvalidInput, match="TALLEI_START_AT_LOGIN: start_at_login must be true or false"):
        load_settings(environ={"TALLEI_START_AT_LOGIN": "maybe"}, config_path=none)


def test_saving_keeps_entries_it_does_not_change_including_unknown_ones(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('http_port = 8800\nshort_term_days = 30\nfuture_option = "kept"\n', encoding="utf-8")

    save_settings({"short_term_days": 45}, config_path=config)

    assert tomllib.loads(config.read_text(encoding="utf-8")) == {
        "http_port": 8800,
        "short_term_days": 45,
        "future_option": "kept",
    }


def test_none_removes_a_setting_so_its_default_applies(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    save_settings({"http_port": 9001, "start_at_login": True}, config_path=config)

    save_settings({"http_port": None}, config_path=config)

    settings = load_settings(environ={}, config_path=config)
    assert settings.http_port == 8765
    assert settings.start_at_login is True


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"http_port": 70000}, "http_port is out of range"),
        ({"short_term_days": "soon"}, "short_term_days must be a whole number"),
        ({"notify_conflicts": "perhaps"}, "notify_conflicts must be true or false"),
        ({"model_dir": ""}, "model_dir must be a folder path"),
        ({"no_such_setting": 1}, "Unknown setting 'no_such_setting'"),
        ({"passphrase": "secret"}, "passphrase is never written"),
    ],
)
def test_bad_values_are_refused_and_the_file_is_unchanged(
    tmp_path: Path, changes: dict[str, object], message: str
) -> None:
    config = tmp_path / "config.toml"
    before = "# mine\nhttp_port = 8800\n"
    config.write_text(before, encoding="utf-8")

    with pytest.raises(InvalidInput, match=message):
        save_settings({"start_at_login": True, **changes}, config_path=config)

    assert config.read_text(encoding="utf-8") == before
    assert [p.name for p in tmp_path.iterdir()] == ["config.toml"]


def test_an_unreadable_existing_file_is_refused_not_overwritten(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("http_port = = 1\n", encoding="utf-8")

    with pytest.raises(InvalidInput, match="Cannot read the settings file"):
        save_settings({"start_at_login": True}, config_path=config)

    assert config.read_text(encoding="utf-8") == "http_port = = 1\n"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")
def test_the_file_is_private_and_no_temporary_file_is_left(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("http_port = 8800\n", encoding="utf-8")
    config.chmod(0o644)

    save_settings({"notify_conflicts": False}, config_path=config)

    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["config.toml"]


def test_an_unwritable_location_is_a_known_error_and_changes_nothing(tmp_path: Path) -> None:
    # A file where the folder should be: refused for every user, root included.
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("mine\n", encoding="utf-8")

    with pytest.raises(KnownError, match="Cannot write the settings file"):
        save_settings({"http_port": 8801}, config_path=blocker / "config.toml")

    assert blocker.read_text(encoding="utf-8") == "mine\n"
    assert [p.name for p in tmp_path.iterdir()] == ["not-a-folder"]


def test_a_path_with_quotes_and_backslashes_round_trips(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    odd = tmp_path / 'a "quoted" \\ folder\twith tab'

    save_settings({"data_dir": odd}, config_path=config)

    assert load_settings(environ={}, config_path=config).data_dir == odd


_scalars = st.one_of(
    st.text(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.booleans(),
    st.floats(allow_nan=False),
)


@given(st.dictionaries(st.text(min_size=1), st.one_of(_scalars, st.lists(_scalars, max_size=4))))
def test_dump_toml_round_trips_through_tomllib(table: dict[str, object]) -> None:
    assert tomllib.loads(dump_toml(table)) == table


def test_dump_toml_writes_nan_and_refuses_nested_tables() -> None:
    assert math.isnan(tomllib.loads(dump_toml({"x": math.nan}))["x"])
    with pytest.raises(InvalidInput, match="'nested' holds a dict"):
        dump_toml({"nested": {"a": 1}})
