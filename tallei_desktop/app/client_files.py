"""Reading and rewriting an MCP client's settings file in its own format: JSON, TOML or YAML.

Each format parses the whole file with its real parser first, so a file that cannot be read is left
exactly as it is, with a one-line reason. Only one entry of one table of servers changes:

* JSON is written back whole, two-space indented; every other key keeps its value and its place.
* TOML (Codex) is edited as text: only the ``[<servers>.<name>]`` table and its subtables are
  replaced, appended or removed, so every other table, comment and layout stays byte for byte; the
  result is parsed again and must equal the old document with just that entry changed.
* YAML (Goose) is written back whole: other keys keep their values and order, comments are lost
  (the message says so; the backup keeps them).

Writes replace the file atomically with the same file mode, write through a symlink, keep the
previous bytes as a backup beside it, and refuse when the client saved the file meanwhile.
"""

from __future__ import annotations

import copy
import json
import os
import re
import stat
import tomllib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import yaml

from tallei_desktop.config import dump_toml
from tallei_desktop.core import InvalidInput, KnownError, replace_file

__all__ = [
    "ClientConfigError",
    "FileFormat",
    "Loaded",
    "has_yaml_comments",
    "load",
    "render",
    "snippet",
    "write",
]

FileFormat = Literal["json", "toml", "yaml"]


class ClientConfigError(KnownError):
    """A client's settings file cannot be read or written safely; it was left unchanged."""


@dataclass(frozen=True, slots=True)
class Loaded:
    """A settings file as found: its exact bytes (``None`` when absent), text and parsed document."""

    raw: bytes | None
    text: str
    document: dict[str, Any]


def load(path: Path, fmt: FileFormat, servers_key: str, hint: str, paste: str) -> Loaded:
    """Read and parse ``path``; ``hint`` says how to add the entry by hand, ``paste`` is that entry
    on one line, for a JSON file with comments. Raises :class:`ClientConfigError`."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Loaded(None, "", {})
    except OSError as exc:
        raise ClientConfigError(
            f"Cannot read {path}: {exc.strerror or exc}. Check its permissions."
        ) from None
    try:
        text = raw.decode("utf-8-sig")  # editors on Windows may add a byte-order mark
    except UnicodeDecodeError:
        raise ClientConfigError(f"{path} is not UTF-8 text; {hint}.") from None
    if not text.strip():
        return Loaded(raw, text, {})
    if fmt == "json":
        document = _parse_json(path, text, hint, paste)
    elif fmt == "toml":
        try:
            document = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ClientConfigError(f"{path} is not valid TOML ({exc}); {hint}.") from None
    else:
        document = _parse_yaml(path, text, hint)
    servers = document.get(servers_key, {})
    if not isinstance(servers, dict):
        what = "a table" if fmt == "toml" else "a mapping" if fmt == "yaml" else "an object"
        raise ClientConfigError(
            f'In {path}, "{servers_key}" must be {what} of named servers, not {_kind(servers)}; {hint}.'
        )
    return Loaded(raw, text, document)


def render(
    loaded: Loaded, fmt: FileFormat, servers_key: str, name: str, entry: dict[str, Any] | None, path: Path
) -> str:
    """The file's new text with ``entry`` as server ``name`` (``None``: without it)."""
    document = copy.deepcopy(loaded.document)
    servers = document.setdefault(servers_key, {})
    if entry is None:
        servers.pop(name, None)
    else:
        servers[name] = entry
    if fmt == "json":
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if fmt == "yaml":
        return _dump_yaml(document)
    return _edit_toml(loaded.text, document, servers_key, name, entry, path)


def snippet(fmt: FileFormat, servers_key: str, name: str, entry: dict[str, Any]) -> str:
    """The entry as it would stand in an otherwise empty file, to merge by hand."""
    if fmt == "json":
        return json.dumps({servers_key: {name: entry}}, indent=2, ensure_ascii=False)
    if fmt == "yaml":
        document = {servers_key: {name: entry}}
        return yaml.safe_dump(
            document, sort_keys=False, allow_unicode=True, default_flow_style=False
        ).rstrip()
    return _toml_tables([servers_key, name], entry).rstrip()


def has_yaml_comments(text: str) -> bool:
    """Whether a YAML text seems to hold a comment (a ``#`` at a line's start or after a space)."""
    return re.search(r"(?m)(^|\s)#", text) is not None


# -- JSON -------------------------------------------------------------------------------------------


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads would keep only the last of two equal keys, and the rewrite would silently drop the other.
    document: dict[str, Any] = {}
    for key, value in pairs:
        if key in document:
            raise _DuplicateKey(key)
        document[key] = value
    return document


def _has_comments(text: str) -> bool:
    """Whether ``text`` holds ``//`` or ``/*`` outside a string, as JSONC files do."""
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "/" and text[i + 1 : i + 2] in ("/", "*"):
            return True
    return False


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "an object"
    return "a number"


def _parse_json(path: Path, text: str, hint: str, paste: str) -> dict[str, Any]:
    try:
        document = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        if _has_comments(text):
            raise ClientConfigError(
                f"{path} contains comments, which this command does not support (rewriting the file would "
                f"drop them); nothing was changed. Paste this into it by hand: {paste}"
            ) from None
        raise ClientConfigError(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); {hint}."
        ) from None
    except _DuplicateKey as exc:
        raise ClientConfigError(
            f"{path} has the key {exc.args[0]!r} twice; keep one and run this again."
        ) from None
    if not isinstance(document, dict):
        raise ClientConfigError(
            f"{path} must hold a JSON object ({{...}}) at the top level, not {_kind(document)}; {hint}."
        )
    return document


# -- YAML -------------------------------------------------------------------------------------------


def _dump_yaml(document: dict[str, Any]) -> str:
    text: str = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, default_flow_style=False)
    return text


def _parse_yaml(path: Path, text: str, hint: str) -> dict[str, Any]:
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ClientConfigError(f"{path} is not valid YAML{where}; {hint}.") from None
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise ClientConfigError(f"{path} must hold a mapping (key: value) at the top level; {hint}.")
    return document


# -- TOML -------------------------------------------------------------------------------------------

#: A table header, ``[a.b]`` or ``[[a.b]]``, alone on its line (a comment may follow).
_HEADER = re.compile(r"^[ \t]*(\[\[?)([^\[\]\n]+)(\]\]?)[ \t]*(?:#[^\n]*)?$")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _header_path(inner: str) -> list[str] | None:
    """The keys a header's dotted name stands for, as TOML reads them; ``None`` if it is no header."""
    try:
        table = tomllib.loads(f"[{inner}]\n")
    except tomllib.TOMLDecodeError:
        return None
    keys: list[str] = []
    node: Any = table
    while isinstance(node, dict) and len(node) == 1:
        key = next(iter(node))
        keys.append(key)
        node = node[key]
    return keys


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def _toml_tables(prefix: list[str], table: dict[str, Any]) -> str:
    """``table`` as a ``[prefix]`` table, each nested table as its own ``[prefix.key]`` after it."""
    flat = {k: v for k, v in table.items() if not isinstance(v, dict)}
    try:
        body = dump_toml(flat)
    except InvalidInput as exc:
        raise ClientConfigError(f"Cannot write the entry as TOML: {exc}") from None
    out = f"[{'.'.join(_toml_key(k) for k in prefix)}]\n{body}"
    for key, value in table.items():
        if isinstance(value, dict):
            out += "\n" + _toml_tables([*prefix, key], value)
    return out


def _inside_multiline_strings(lines: list[str]) -> list[bool]:
    """For each line, whether it starts inside a multi-line string (where ``[x]`` is only text)."""
    out: list[bool] = []
    open_quote: str | None = None  # the delimiter of the multi-line string we are in
    for line in lines:
        out.append(open_quote is not None)
        i = 0
        while i < len(line):
            if open_quote is not None:
                if open_quote == '"""' and line[i] == "\\":
                    i += 2
                    continue
                if line.startswith(open_quote, i):
                    open_quote = None
                    i += 3
                    continue
                i += 1
                continue
            ch = line[i]
            if ch == "#":
                break
            if line.startswith('"""', i) or line.startswith("'''", i):
                open_quote = line[i : i + 3]
                i += 3
            elif ch in "\"'":
                # A one-line string: skip to its closing quote (basic strings may escape one).
                i += 1
                while i < len(line) and line[i] != ch:
                    i += 2 if ch == '"' and line[i] == "\\" else 1
                i += 1
            else:
                i += 1
    return out


def _edit_toml(
    text: str, expected: dict[str, Any], servers_key: str, name: str, entry: dict[str, Any] | None, path: Path
) -> str:
    lines = text.splitlines(keepends=True)
    inside = _inside_multiline_strings(lines)
    headers: list[tuple[int, bool]] = []  # (line, whether the table is ours)
    for number, line in enumerate(lines):
        match = None if inside[number] else _HEADER.match(line.rstrip("\r\n"))
        if match is None or (match.group(1) == "[[") != (match.group(3) == "]]"):
            continue
        keys = _header_path(match.group(2))
        if keys is not None:
            headers.append((number, keys[:2] == [servers_key, name]))
    drop: set[int] = set()
    first: int | None = None
    for i, (start, ours) in enumerate(headers):
        if not ours:
            continue
        end = headers[i + 1][0] if i + 1 < len(headers) else len(lines)
        # Comments and blank lines just above the next table belong to that table.
        while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
            end -= 1
        drop.update(range(start, end))
        first = start if first is None else first
    kept = [line for n, line in enumerate(lines) if n not in drop]
    hint = f"add the [{servers_key}.{name}] table by hand"
    try:
        rest = tomllib.loads("".join(kept))
    except tomllib.TOMLDecodeError:
        rest = None
    if rest is None or name in rest.get(servers_key, {}):
        raise ClientConfigError(
            f"{path} defines {servers_key}.{name} in a form this command does not edit (not as its own "
            f"[{servers_key}.{name}] table); nothing was changed. Remove it, or {hint}."
        )
    new = "".join(kept)
    at = first if first is not None else len(kept)
    before, after = "".join(kept[:at]), "".join(kept[at:])
    if entry is None and first is not None and not after.strip():
        # The table was the last thing in the file: so is the blank line that set it apart.
        new = before.rstrip("\r\n") + "\n" if before.strip() else ""
    elif entry is not None:
        section = _toml_tables([servers_key, name], entry)
        if first is not None:
            gap = "\n" if after.strip() and not after.startswith(("\n", "\r\n")) else ""
            new = before + section + gap + after
        else:
            if new and not new.endswith("\n"):
                new += "\n"
            new += ("\n" if new.strip() else "") + section
    try:
        written = tomllib.loads(new)
    except tomllib.TOMLDecodeError:
        written = None
    if not expected.get(servers_key) and written is not None and servers_key not in written:
        expected = {k: v for k, v in expected.items() if k != servers_key}
    if written != expected:
        raise ClientConfigError(f"Tallei could not edit {path} without changing other settings; {hint}.")
    return new


# -- writing ----------------------------------------------------------------------------------------


def write(path: Path, old_bytes: bytes | None, text: str) -> Path | None:
    """Replace the file atomically and return the backup of its previous bytes, if there were any."""
    data = text.encode("utf-8")
    # Write through a symlink (dotfile managers link these files) instead of replacing the link itself.
    target = path.resolve() if path.is_symlink() else path
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # New files start private: MCP client settings tend to collect API keys in their env blocks.
        mode = stat.S_IMODE(target.stat().st_mode) if old_bytes is not None else 0o600
        backup: Path | None = None

        def unchanged_then_backed_up() -> None:
            nonlocal backup
            if _current_bytes(target) != old_bytes:
                raise ClientConfigError(
                    f"{path} changed while Tallei was updating it; nothing was written. Run again."
                )
            backup = _backup(path, old_bytes, mode) if old_bytes is not None else None

        replace_file(target, data, mode=mode, before_replace=unchanged_then_backed_up)
    except OSError as exc:
        reason = exc.strerror or exc
        raise ClientConfigError(f"Cannot write {path}: {reason}. Check the folder's permissions.") from None
    return backup


def _current_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _backup(path: Path, content: bytes, mode: int) -> Path:
    stem = f"{path.name}.bak-{datetime.now():%Y%m%d-%H%M%S}"
    for attempt in range(1, 100):
        candidate = path.with_name(stem if attempt == 1 else f"{stem}-{attempt}")
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), mode)
        except FileExistsError:
            continue  # two changes within one second: keep both backups
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
        os.chmod(candidate, mode)  # the umask may have narrowed it; the copy must not be wider either
        return candidate
    raise ClientConfigError(f"Too many backups of {path} this second; wait a moment and run this again.")
