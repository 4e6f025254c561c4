"""The export document: its versioned JSON format, its passphrase encryption, and checking it on import.

A document is a JSON object ``{"format": FORMAT, "version": VERSION, "exported_at", "memories",
"conflicts"}``; docs/export-format.md describes every field. An encrypted export is::

    MAGIC (8 bytes) | header length (2 bytes, big-endian) | header (UTF-8 JSON) | AES-256-GCM ciphertext

where the header holds the scrypt parameters, the salt and the nonce, so the file opens on any
computer with the passphrase alone. The header is the cipher's associated data: changing a byte of
it, or of the ciphertext, fails authentication.

:class:`Exports` is what a service does with documents: build one from the store, merge one into
it. Reading every row and merging them is the SQL in ``store/export_rows.py``, which also defines
the shapes that pass between the two (:class:`ExportedConflict`, :class:`ParsedExport`,
:class:`ImportReport`).
"""

from __future__ import annotations

import base64
import binascii
import enum
import json
import secrets
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from tallei_desktop.core import validate as v
from tallei_desktop.core.errors import InvalidInput, StoreUnavailable
from tallei_desktop.core.files import replace_file
from tallei_desktop.core.models import (
    ConflictResolution,
    ConflictStatus,
    Memory,
    MemoryStatus,
    MemoryType,
    Provenance,
)
from tallei_desktop.core.store import export_rows
from tallei_desktop.core.store.database import Database
from tallei_desktop.core.store.export_rows import ExportedConflict, ImportReport, ParsedExport

__all__ = [
    "FORMAT",
    "MAGIC",
    "VERSION",
    "ExportedConflict",
    "Exports",
    "ImportReport",
    "ParsedExport",
    "decode_export",
    "encode_export",
    "memory_record",
    "parse_document",
    "write_new_file",
]

FORMAT = "tallei-desktop-export"
VERSION = 1
MAGIC = b"TALLEIX1"
#: scrypt cost for new exports (128 MiB, a fraction of a second): the OWASP-recommended minimum.
SCRYPT_N = 2**17
SCRYPT_R = 8
SCRYPT_P = 1
#: Highest cost an encrypted file may ask for, so a crafted header cannot demand gigabytes.
MAX_SCRYPT_N = 2**20
_SALT_BYTES = 16
_NONCE_BYTES = 12
_MAX_HEADER = 4096
_PROVENANCE_ACTIONS = frozenset({"saved", "confirmed", "edited"})
#: Forgetting one side of an open conflict settles it as "forgotten", beside the person's resolutions.
_RESOLUTIONS = frozenset({r.value for r in ConflictResolution} | {"forgotten"})


class Exports:
    """Export documents of one store: every row read in one snapshot, a document merged in one
    transaction, both dated by the clock."""

    def __init__(self, db: Database, clock: Callable[[], datetime]) -> None:
        self._db = db
        self._clock = clock

    def export(self) -> dict[str, Any]:
        """Every memory (all statuses, with provenance) and conflict, as the versioned document."""
        with self._db.read() as conn:
            memories, conflicts = export_rows.export_all(conn)
        return build_document(memories, conflicts, exported_at=self._clock())

    def import_document(self, document: Mapping[str, Any]) -> ImportReport:
        """Merge ``document`` into the store (idempotent). The whole document is checked first: a bad
        one raises InvalidInput and changes nothing. New memories are left pending, for whichever
        background worker on the store runs next to finish like saves."""
        parsed = parse_document(document)
        with self._db.write() as conn:
            return export_rows.import_parsed(conn, parsed, now=self._clock().timestamp())


def _iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat() if value is not None else None


def memory_record(memory: Memory) -> dict[str, Any]:
    """One memory as it appears in the document (everything but the store-local ``embedded`` flag)."""
    return {
        "id": memory.id,
        "content": memory.content,
        "type": str(memory.type),
        "bucket": str(memory.bucket),
        "platform": memory.platform,
        "created_at": _iso(memory.created_at),
        "updated_at": _iso(memory.updated_at),
        "occurred_at": _iso(memory.occurred_at),
        "last_referenced_at": _iso(memory.last_referenced_at),
        "reference_count": memory.reference_count,
        "pinned": memory.pinned,
        "status": str(memory.status),
        "superseded_by": memory.superseded_by,
        "provenance": [_provenance_record(p) for p in memory.provenance],
    }


def _provenance_record(p: Provenance) -> dict[str, Any]:
    record: dict[str, Any] = {"platform": p.platform, "at": _iso(p.at), "action": p.action}
    if p.previous is not None:
        record["previous"] = p.previous  # an edit's text from before it; absent everywhere else
    return record


def conflict_record(conflict: ExportedConflict) -> dict[str, Any]:
    return {
        "id": conflict.id,
        "memory_a": conflict.memory_a,
        "memory_b": conflict.memory_b,
        "status": str(conflict.status),
        "created_at": _iso(conflict.created_at),
        "resolved_at": _iso(conflict.resolved_at),
        "resolution": conflict.resolution,
    }


def build_document(
    memories: Sequence[Memory], conflicts: Sequence[ExportedConflict], *, exported_at: datetime
) -> dict[str, Any]:
    """The versioned export document."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": _iso(exported_at),
        "memories": [memory_record(m) for m in memories],
        "conflicts": [conflict_record(c) for c in conflicts],
    }


# -- bytes on disk -------------------------------------------------------------------------------


def _derive(passphrase: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return Scrypt(salt=salt, length=32, n=n, r=r, p=p).derive(passphrase.encode("utf-8"))


def encode_export(document: Mapping[str, Any], passphrase: str | None, *, scrypt_n: int = SCRYPT_N) -> bytes:
    """The document as UTF-8 JSON, sealed under ``passphrase`` unless it is None (plain export)."""
    plain = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if passphrase is None:
        return plain
    if not passphrase:
        raise InvalidInput("The export passphrase is empty; choose one, or export with --plain.")
    salt = secrets.token_bytes(_SALT_BYTES)
    nonce = secrets.token_bytes(_NONCE_BYTES)
    header = json.dumps(
        {
            "kdf": "scrypt",
            "n": scrypt_n,
            "r": SCRYPT_R,
            "p": SCRYPT_P,
            "salt": base64.b64encode(salt).decode("ascii"),
            "cipher": "aes-256-gcm",
            "nonce": base64.b64encode(nonce).decode("ascii"),
        },
        separators=(",", ":"),
    ).encode("ascii")
    prefix = MAGIC + len(header).to_bytes(2, "big") + header
    key = _derive(passphrase, salt, scrypt_n, SCRYPT_R, SCRYPT_P)
    return prefix + AESGCM(key).encrypt(nonce, plain, prefix)


def is_encrypted(data: bytes) -> bool:
    return data.startswith(MAGIC)


def _open_sealed(data: bytes, passphrase: str | None) -> bytes:
    if passphrase is None:
        raise InvalidInput("This export is encrypted; give its passphrase.")
    if len(data) < len(MAGIC) + 2:
        raise InvalidInput("The encrypted export is truncated.")
    size = int.from_bytes(data[len(MAGIC) : len(MAGIC) + 2], "big")
    end = len(MAGIC) + 2 + size
    if size > _MAX_HEADER or len(data) < end + 16:
        raise InvalidInput("The encrypted export is truncated or its header is damaged.")
    try:
        header = json.loads(data[len(MAGIC) + 2 : end].decode("ascii"))
        if header["kdf"] != "scrypt" or header["cipher"] != "aes-256-gcm":
            raise InvalidInput(
                f"The export uses {header['kdf']}/{header['cipher']}, which this Tallei cannot open."
            )
        n, r, p = int(header["n"]), int(header["r"]), int(header["p"])
        salt = base64.b64decode(header["salt"], validate=True)
        nonce = base64.b64decode(header["nonce"], validate=True)
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError, binascii.Error):
        raise InvalidInput("The encrypted export's header is damaged.") from None
    if not (2 <= n <= MAX_SCRYPT_N and n & (n - 1) == 0 and 1 <= r <= 32 and 1 <= p <= 16):
        raise InvalidInput("The encrypted export asks for key-derivation settings out of range.")
    if len(nonce) != _NONCE_BYTES or len(salt) < 8:
        raise InvalidInput("The encrypted export's header is damaged.")
    key = _derive(passphrase, salt, n, r, p)
    try:
        return AESGCM(key).decrypt(nonce, data[end:], data[:end])
    except InvalidTag:
        raise InvalidInput(
            "The export does not open with that passphrase, or the file was changed or cut short."
        ) from None


def decode_export(data: bytes, passphrase: str | None) -> dict[str, Any]:
    """The JSON object inside an export file (encrypted or plain). Only checks that it is an object."""
    plain = _open_sealed(data, passphrase) if is_encrypted(data) else data
    try:
        document = json.loads(plain.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise InvalidInput("The file is not a Tallei export: it is neither encrypted nor JSON.") from None
    if not isinstance(document, dict):
        raise InvalidInput("The file is not a Tallei export: its JSON is not an object.")
    return document


def write_new_file(path: Path, data: bytes, *, force: bool = False) -> None:
    """Write ``data`` to ``path`` atomically: a temporary file beside it, flushed, then renamed.

    Refuses an existing ``path`` unless ``force``; on any failure no partial file is left behind.
    """

    def refuse_existing() -> None:
        if not force and path.exists():
            raise InvalidInput(f"{path} already exists; choose another name or add --force to replace it.")

    refuse_existing()
    try:
        replace_file(path, data, mode=0o600, before_replace=refuse_existing)
    except OSError as exc:
        raise StoreUnavailable(f"Cannot write {path}: {exc.strerror or exc}.") from None


# -- checking a document -------------------------------------------------------------------------


_E = TypeVar("_E", bound=enum.StrEnum)


class _Fields:
    """Typed reads from one JSON object, each failure naming where it is."""

    def __init__(self, raw: object, where: str) -> None:
        if not isinstance(raw, dict):
            raise InvalidInput(f"{where} is not a JSON object.")
        self.raw: dict[str, Any] = raw
        self.where = where

    def _get(self, name: str) -> Any:
        if name not in self.raw:
            raise InvalidInput(f"{self.where} has no {name!r}.")
        return self.raw[name]

    def text(self, name: str, *, optional: bool = False) -> str | None:
        value = self._get(name)
        if value is None and optional:
            return None
        if not isinstance(value, str) or not value:
            raise InvalidInput(f"{self.where}: {name!r} must be non-empty text.")
        return value

    def required_text(self, name: str) -> str:
        value = self.text(name)
        assert value is not None
        return value

    def id(self, name: str, kind: str = "memory", *, optional: bool = False) -> str | None:
        value = self.text(name, optional=optional)
        if value is None:
            return None
        try:
            return v.clean_id(value, kind)
        except InvalidInput as exc:
            raise InvalidInput(f"{self.where}: {exc}") from None

    def time(self, name: str, *, optional: bool = False) -> datetime | None:
        value = self.text(name, optional=optional)
        if value is None:
            return None
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise InvalidInput(f"{self.where}: {name!r} is not an ISO 8601 time ({value[:40]!r}).") from None
        if parsed.tzinfo is None:
            raise InvalidInput(f"{self.where}: {name!r} has no time zone.")
        try:
            return v.to_utc(parsed)
        except InvalidInput as exc:
            raise InvalidInput(f"{self.where}: {name!r}: {exc}") from None

    def required_time(self, name: str) -> datetime:
        value = self.time(name)
        assert value is not None
        return value

    def integer(self, name: str, low: int, high: int) -> int:
        value = self._get(name)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise InvalidInput(f"{self.where}: {name!r} must be a whole number from {low} to {high:,}.")
        return value

    def flag(self, name: str) -> bool:
        value = self._get(name)
        if not isinstance(value, bool):
            raise InvalidInput(f"{self.where}: {name!r} must be true or false.")
        return value

    def choice(self, name: str, enum: type[_E], *, optional: bool = False) -> _E | None:
        value = self.text(name, optional=optional)
        if value is None:
            return None
        try:
            return enum(value)
        except ValueError:
            names = ", ".join(e.value for e in enum)
            raise InvalidInput(
                f"{self.where}: {name!r} is {value[:40]!r}; expected one of: {names}."
            ) from None

    def items(self, name: str) -> list[Any]:
        value = self._get(name)
        if not isinstance(value, list):
            raise InvalidInput(f"{self.where}: {name!r} must be a list.")
        return value


def _memory(raw: object, index: int) -> Memory:
    f = _Fields(raw, f"Memory #{index + 1}")
    mtype = f.choice("type", MemoryType)
    status = f.choice("status", MemoryStatus)
    assert mtype is not None and status is not None
    try:
        content = v.clean_content(f.required_text("content"))
        bucket = v.parse_bucket(f.required_text("bucket"))
        platform = v.clean_platform(f.required_text("platform"))
    except InvalidInput as exc:
        raise InvalidInput(f"{f.where}: {exc}") from None
    provenance = []
    for j, item in enumerate(f.items("provenance")):
        p = _Fields(item, f"{f.where}, provenance #{j + 1}")
        action = p.required_text("action")
        if action not in _PROVENANCE_ACTIONS:
            raise InvalidInput(f"{p.where}: unknown action {action[:40]!r}.")
        try:
            source = v.clean_platform(p.required_text("platform"))
        except InvalidInput as exc:
            raise InvalidInput(f"{p.where}: {exc}") from None
        previous = p.text("previous", optional=True) if "previous" in p.raw else None
        provenance.append(Provenance(source, p.required_time("at"), action, previous))
    memory_id = f.id("id")
    assert memory_id is not None
    return Memory(
        id=memory_id,
        content=content,
        type=mtype,
        bucket=bucket,
        platform=platform,
        created_at=f.required_time("created_at"),
        updated_at=f.required_time("updated_at"),
        occurred_at=f.required_time("occurred_at"),
        reference_count=f.integer("reference_count", 1, 2**40),
        last_referenced_at=f.time("last_referenced_at", optional=True),
        pinned=f.flag("pinned"),
        status=status,
        superseded_by=f.id("superseded_by", optional=True),
        embedded=False,
        provenance=tuple(provenance),
    )


def _conflict(raw: object, index: int, known: set[str]) -> ExportedConflict:
    f = _Fields(raw, f"Conflict #{index + 1}")
    cid, a, b = f.id("id", "conflict"), f.id("memory_a"), f.id("memory_b")
    assert cid is not None and a is not None and b is not None
    for side in (a, b):
        if side not in known:
            raise InvalidInput(f"{f.where} names memory {side}, which is not in the file.")
    if a == b:
        raise InvalidInput(f"{f.where} pairs memory {a} with itself.")
    status = f.choice("status", ConflictStatus)
    assert status is not None
    return ExportedConflict(
        id=cid,
        memory_a=a,
        memory_b=b,
        status=status,
        created_at=f.required_time("created_at"),
        resolved_at=f.time("resolved_at", optional=True),
        resolution=_resolution(f),
    )


def _resolution(f: _Fields) -> str | None:
    value = f.text("resolution", optional=True)
    if value is not None and value not in _RESOLUTIONS:
        names = ", ".join(sorted(_RESOLUTIONS))
        raise InvalidInput(f"{f.where}: 'resolution' is {value[:40]!r}; expected one of: {names}.")
    return value


def parse_document(document: Mapping[str, Any]) -> ParsedExport:
    """Check a whole document before anything is written; the first problem is one-line InvalidInput."""
    if not isinstance(document, Mapping):
        raise InvalidInput("The file is not a Tallei export: its JSON is not an object.")
    name = document.get("format")
    if name != FORMAT:
        shown = repr(name)[:60] if name is not None else "none"
        raise InvalidInput(f"The file is not a Tallei export (format {shown}, expected {FORMAT!r}).")
    version = document.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise InvalidInput("The export's version is missing or not a positive whole number.")
    if version > VERSION:
        raise InvalidInput(
            f"The export is format version {version}; this Tallei reads up to {VERSION}. Update Tallei to import it."
        )
    top = _Fields(dict(document), "The export")
    exported_at = top.required_time("exported_at")
    memories = tuple(_memory(raw, i) for i, raw in enumerate(top.items("memories")))
    ids: set[str] = set()
    for m in memories:
        if m.id in ids:
            raise InvalidInput(f"The export holds memory {m.id} twice.")
        ids.add(m.id)
    conflicts = tuple(_conflict(raw, i, ids) for i, raw in enumerate(top.items("conflicts")))
    if len({c.id for c in conflicts}) != len(conflicts):
        raise InvalidInput("The export holds the same conflict id twice.")
    return ParsedExport(exported_at, memories, conflicts)
