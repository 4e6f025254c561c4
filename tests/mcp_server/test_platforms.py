"""The platform a save is recorded under, from the name a client announces."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tallei_desktop.mcp_server.platforms import platform_for_client


@pytest.mark.parametrize(
    ("name", "platform"),
    [
        ("claude-ai", "claude"),
        ("claude-code", "claude"),
        ("openai-mcp", "chatgpt"),
        ("ChatGPT", "chatgpt"),
        ("gemini-cli-mcp-client", "gemini"),
        ("cursor-vscode", "cursor"),
        ("Visual Studio Code", "vscode"),
        ("Visual Studio Code - Insiders", "vscode"),
        ("mcp-inspector", "mcp-inspector"),
        ("Zed  Editor!", "zed-editor"),
        ("", "unknown"),
        (None, "unknown"),
        ("🙂", "unknown"),
    ],
)
def test_known_clients_map_to_their_platform_and_others_keep_their_name(
    name: str | None, platform: str
) -> None:
    assert platform_for_client(name) == platform


@given(st.text(st.characters(exclude_categories=()), max_size=300))
def test_any_announced_name_gives_a_short_clean_platform(name: str) -> None:
    platform = platform_for_client(name)
    assert 1 <= len(platform) <= 64
    assert platform.encode("ascii")
    assert all(c.isalnum() or c in "._-" for c in platform)
