"""Checking a request's fields: each reader returns the value or raises :class:`BadField` in one plain line.

Fields a type does not define are ignored, so an extension newer than the host still gets answers
to the fields both know.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from tallei_desktop.core import MemoryType

__all__ = [
    "PLATFORMS",
    "SOURCES",
    "BadField",
    "boolean",
    "limit",
    "memory_type",
    "platform",
    "source",
    "text",
    "text_list",
]

#: The sites the extension runs on, named as their assistants' platforms.
PLATFORMS: Final = ("chatgpt", "claude", "gemini")
#: How a page's text reached a save.
SOURCES: Final = ("selection", "capture", "import")


class BadField(Exception):
    """A request field is missing or of the wrong kind or size; the message names it."""


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, str):
        return "text"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _get(message: Mapping[str, Any], name: str, required: bool) -> Any:
    if name not in message:
        if required:
            raise BadField(f'The field "{name}" is missing.')
        return None
    return message[name]


def text(
    message: Mapping[str, Any], name: str, *, max_chars: int, min_chars: int = 0, required: bool = True
) -> str | None:
    """A string field of at most ``max_chars`` characters (``min_chars`` counted after trimming spaces)."""
    value = _get(message, name, required)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise BadField(f'The field "{name}" must be text, not {_kind(value)}.')
    if len(value) > max_chars:
        raise BadField(f'The field "{name}" is {len(value):,} characters; the limit is {max_chars:,}.')
    if len(value.strip()) < min_chars:
        raise BadField(f'The field "{name}" is empty.')
    if "\x00" in value:
        raise BadField(f'The field "{name}" holds a NUL character.')
    return value


def boolean(message: Mapping[str, Any], name: str, *, default: bool | None = None) -> bool:
    value = _get(message, name, default is None)
    if value is None and default is not None:
        return default
    if not isinstance(value, bool):
        raise BadField(f'The field "{name}" must be true or false, not {_kind(value)}.')
    return value


def limit(message: Mapping[str, Any], *, default: int = 10, most: int = 50) -> int:
    value = _get(message, "limit", False)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadField(f'The field "limit" must be a whole number, not {_kind(value)}.')
    if not 1 <= value <= most:
        raise BadField(f'The field "limit" must be between 1 and {most}, not {value}.')
    return value


def _one_of(message: Mapping[str, Any], name: str, choices: tuple[str, ...], required: bool) -> str | None:
    value = _get(message, name, required)
    if value is None and not required:
        return None
    if not isinstance(value, str) or value not in choices:
        shown = repr(value[:40]) if isinstance(value, str) else _kind(value)
        raise BadField(f'The field "{name}" must be one of {", ".join(choices)}, not {shown}.')
    return value


def platform(message: Mapping[str, Any]) -> str:
    value = _one_of(message, "platform", PLATFORMS, True)
    assert value is not None
    return value


def source(message: Mapping[str, Any]) -> str:
    value = _one_of(message, "source", SOURCES, True)
    assert value is not None
    return value


def memory_type(message: Mapping[str, Any]) -> str | None:
    """A save's explicit memory type: ``"type"`` names the message itself, so it travels as ``memory_type``."""
    return _one_of(message, "memory_type", tuple(t.value for t in MemoryType), False)


def text_list(message: Mapping[str, Any], name: str, *, most: int, max_chars: int) -> list[str]:
    """A list of 1..``most`` strings, each 1..``max_chars`` characters."""
    value = _get(message, name, True)
    if not isinstance(value, list):
        raise BadField(f'The field "{name}" must be a list of texts, not {_kind(value)}.')
    if not 1 <= len(value) <= most:
        raise BadField(f'The field "{name}" must hold 1 to {most} texts, not {len(value)}.')
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise BadField(f'Item {i} of "{name}" must be text, not {_kind(item)}.')
        if len(item) > max_chars:
            raise BadField(f'Item {i} of "{name}" is {len(item):,} characters; the limit is {max_chars:,}.')
        if not item.strip():
            raise BadField(f'Item {i} of "{name}" is empty.')
        if "\x00" in item:
            raise BadField(f'Item {i} of "{name}" holds a NUL character.')
    return value
