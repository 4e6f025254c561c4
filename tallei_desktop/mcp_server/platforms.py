"""Which assistant platform a client is, from the ``clientInfo.name`` it sends at initialize."""

from __future__ import annotations

import re

__all__ = ["UNKNOWN_PLATFORM", "platform_for_client"]

UNKNOWN_PLATFORM = "unknown"

# Checked in order against the lowercased name: Cursor announces itself as "cursor-vscode", so it
# must be recognised before VS Code is.
_KNOWN: tuple[tuple[str, str], ...] = (
    ("claude", "claude"),
    ("chatgpt", "chatgpt"),
    ("openai", "chatgpt"),
    ("gemini", "gemini"),
    ("cursor", "cursor"),
    ("visual studio code", "vscode"),
    ("vs code", "vscode"),
    ("vscode", "vscode"),
)
_NOT_NAME = re.compile(r"[^a-z0-9._-]+")
_MAX_NAME = 64


def platform_for_client(name: str | None) -> str:
    """``claude``, ``chatgpt``, ``gemini``, ``cursor`` or ``vscode`` for the clients we know.

    Any other client keeps its own name, lowercased and reduced to letters, digits, dots, dashes and
    underscores (a hostile or empty name becomes ``unknown``), so it never fails a save.
    """
    if not name:
        return UNKNOWN_PLATFORM
    lowered = name.strip().lower()
    for needle, platform in _KNOWN:
        if needle in lowered:
            return platform
    cleaned = _NOT_NAME.sub("-", lowered).strip("-")[:_MAX_NAME].strip("-")
    return cleaned or UNKNOWN_PLATFORM
