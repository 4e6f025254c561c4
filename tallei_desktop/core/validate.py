"""Checks on everything that enters the core from outside. Each failure is one plain sentence."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from tallei_desktop.core.errors import InvalidInput
from tallei_desktop.core.models import (
    MAX_CONTENT_BYTES,
    Bucket,
    MemoryFilter,
    MemoryStatus,
    MemoryType,
    SortKey,
)

__all__ = [
    "MAX_QUERY_CHARS",
    "clean_content",
    "clean_filter",
    "clean_id",
    "clean_platform",
    "clean_query",
    "parse_bucket",
    "parse_sort",
    "parse_status",
    "parse_type",
    "to_utc",
]

MAX_QUERY_CHARS = 2_000
_PLATFORM = re.compile(r"[^a-z0-9._-]+")
_ID = re.compile(r"^[a-z]?[0-9a-f]{12}$")


def _utf8(text: str, what: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"The {what} is not valid Unicode text (it holds a lone surrogate).") from None


def clean_content(content: object) -> str:
    if not isinstance(content, str):
        raise InvalidInput("The memory content must be text.")
    text = content.strip()
    if not text:
        raise InvalidInput("The memory content is empty; say what to remember.")
    if "\x00" in text:
        raise InvalidInput("The memory content holds a NUL character; send plain text.")
    size = len(_utf8(text, "memory content"))
    if size > MAX_CONTENT_BYTES:
        raise InvalidInput(
            f"The memory is {size:,} bytes; the limit is {MAX_CONTENT_BYTES:,}. Save a shorter summary."
        )
    return text


def clean_query(query: object) -> str:
    if not isinstance(query, str):
        raise InvalidInput("The query must be text.")
    _utf8(query, "query")
    text = " ".join(query.split())
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidInput(f"The query is {len(text):,} characters; the limit is {MAX_QUERY_CHARS:,}.")
    return text


def parse_type(value: object) -> MemoryType:
    try:
        return MemoryType(str(value).strip().lower())
    except ValueError:
        names = ", ".join(t.value for t in MemoryType)
        raise InvalidInput(f"Unknown memory type {str(value)[:40]!r}; use one of: {names}.") from None


def parse_bucket(value: object) -> Bucket:
    text = str(value).strip().lower().replace("-", "_")
    try:
        return Bucket(text)
    except ValueError:
        names = ", ".join(b.value for b in Bucket)
        raise InvalidInput(f"Unknown bucket {str(value)[:40]!r}; use one of: {names}.") from None


def clean_platform(value: object) -> str:
    if value is None:
        return "unknown"
    if not isinstance(value, str):
        raise InvalidInput("The platform must be text, such as 'claude' or 'chatgpt'.")
    _utf8(value, "platform")
    name = _PLATFORM.sub("-", value.strip().lower()).strip("-")[:64]
    return name or "unknown"


def clean_id(value: object, what: str = "memory") -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"The {what} id must be text.")
    text = value.strip().lower()
    if not _ID.match(text):
        raise InvalidInput(f"{value[:40]!r} is not a {what} id; ids look like '3f9a2c1d7b0e'.")
    return text


def to_utc(value: object) -> datetime:
    """A datetime between the years 1900 and 2200, in UTC; naive datetimes are taken as UTC."""
    if not isinstance(value, datetime):
        raise InvalidInput("The time must be a date and time, such as 2026-06-14T09:00:00Z.")
    if not 1900 <= value.year <= 2200:
        raise InvalidInput(
            f"The date {value.date().isoformat()} is out of range; use a year between 1900 and 2200."
        )
    try:
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except OverflowError:
        raise InvalidInput("The date is out of range; use a year between 1900 and 2200.") from None


def parse_sort(sort: object) -> SortKey:
    try:
        return SortKey(str(sort))
    except ValueError:
        names = ", ".join(k.value for k in SortKey)
        raise InvalidInput(f"Unknown sort {str(sort)[:40]!r}; use one of: {names}.") from None


def parse_status(value: object) -> MemoryStatus:
    name = str(value).strip().lower()
    if name == "forgotten":  # what the person sees the deleted status called
        return MemoryStatus.DELETED
    try:
        return MemoryStatus(name)
    except ValueError:
        names = ", ".join(s.value for s in MemoryStatus)
        raise InvalidInput(f"Unknown status {str(value)[:40]!r}; use one of: {names}.") from None


def clean_filter(f: object) -> MemoryFilter:
    """``f`` with every value checked and normalised (names as the store keeps them)."""
    if not isinstance(f, MemoryFilter):
        raise InvalidInput("The filter must be a MemoryFilter.")
    sets = (f.buckets, f.types, f.platforms, f.statuses)
    if not all(isinstance(s, (frozenset, set, tuple, list)) for s in sets):
        raise InvalidInput("Filter buckets, types, platforms and statuses must be sets of names.")
    if f.pinned is not None and type(f.pinned) is not bool:
        raise InvalidInput("The pinned filter must be true, false or none.")
    return MemoryFilter(
        buckets=frozenset(parse_bucket(b) for b in f.buckets),
        types=frozenset(parse_type(t) for t in f.types),
        platforms=frozenset(clean_platform(p) for p in f.platforms),
        statuses=frozenset(parse_status(s) for s in f.statuses),
        pinned=f.pinned,
        text=clean_query(f.text),
    )
