"""Export and import on real encrypted stores: the document, its encryption, merging, and refusing bad files."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tallei_desktop.core.errors import InvalidInput, StoreUnavailable
from tallei_desktop.core.exports import (
    FORMAT,
    MAGIC,
    VERSION,
    Exports,
    decode_export,
    encode_export,
    write_new_file,
)
from tallei_desktop.core.models import ConflictStatus, EventKind, MemoryStatus
from tallei_desktop.core.service import MemoryService
from tallei_desktop.core.store.database import Database
from tests.core.conftest import KEY, Clock, ServiceFactory

#: Cheap scrypt for tests that seal many times; the format records the cost, so files still open.
FAST_N = 2**14


def fresh(make_service: ServiceFactory, tmp_path: Path, name: str) -> MemoryService:
    return make_service(path=tmp_path / name / "tallei.db")


def test_document_is_versioned_and_holds_every_field(service: MemoryService) -> None:
    saved = service.save("I prefer dark mode in every editor", platform="claude", pinned=True)
    service.save("I prefer dark mode in every editor", platform="cursor")
    doc = service.export_memories()
    assert doc["format"] == FORMAT and doc["version"] == VERSION
    (m,) = doc["memories"]
    assert m["id"] == saved.id and m["pinned"] is True and m["status"] == "active"
    assert m["reference_count"] == 2 and m["superseded_by"] is None
    assert [(p["platform"], p["action"]) for p in m["provenance"]] == [
        ("claude", "saved"),
        ("cursor", "confirmed"),
    ]
    assert set(m) == {
        "id",
        "content",
        "type",
        "bucket",
        "platform",
        "created_at",
        "updated_at",
        "occurred_at",
        "last_referenced_at",
        "reference_count",
        "pinned",
        "status",
        "superseded_by",
        "provenance",
    }
    json.dumps(doc)  # plain JSON all the way down


def test_encrypted_export_has_no_plaintext_and_opens_only_with_its_passphrase(service: MemoryService) -> None:
    service.save("The vault combination is 31-17-42", platform="claude")
    doc = service.export_memories()
    sealed = encode_export(doc, "pass phrase", scrypt_n=FAST_N)
    assert sealed.startswith(MAGIC)
    assert b"vault" not in sealed and b"31-17-42" not in sealed and b"memories" not in sealed
    header = json.loads(sealed[len(MAGIC) + 2 : len(MAGIC) + 2 + int.from_bytes(sealed[8:10], "big")])
    assert header["kdf"] == "scrypt" and header["n"] == FAST_N and header["cipher"] == "aes-256-gcm"
    assert decode_export(sealed, "pass phrase") == doc
    with pytest.raises(InvalidInput, match="does not open with that passphrase"):
        decode_export(sealed, "wrong phrase")
    with pytest.raises(InvalidInput, match="encrypted; give its passphrase"):
        decode_export(sealed, None)


def test_two_exports_of_the_same_store_use_fresh_salt_and_nonce(service: MemoryService) -> None:
    service.save("A memory to seal twice")
    doc = service.export_memories()
    assert encode_export(doc, "p", scrypt_n=FAST_N) != encode_export(doc, "p", scrypt_n=FAST_N)


def _tamper_body(data: bytes) -> bytes:
    out = bytearray(data)
    out[-40] ^= 0x01
    return bytes(out)


def _tamper_header(data: bytes) -> bytes:
    # Double the recorded scrypt cost: a well-formed header of the same length, but not the one sealed.
    tampered = data.replace(f'"n":{FAST_N}'.encode(), f'"n":{FAST_N * 2}'.encode(), 1)
    assert tampered != data and len(tampered) == len(data)
    return tampered


def _retype(doc: dict[str, Any], **fields: Any) -> dict[str, Any]:
    doc = json.loads(json.dumps(doc))
    doc["memories"][0].update(fields)
    return doc


BadFile = Callable[[dict[str, Any]], tuple[bytes, str | None]]
BAD_FILES: list[tuple[str, BadFile, str]] = [
    ("not json", lambda d: (b"\x89PNG\r\n\x1a\n not an export", None), "neither encrypted nor JSON"),
    ("json list", lambda d: (b"[1, 2]", None), "not an object"),
    (
        "foreign format",
        lambda d: (json.dumps({**d, "format": "mem0-dump"}).encode(), None),
        "not a Tallei export",
    ),
    ("newer version", lambda d: (json.dumps({**d, "version": VERSION + 1}).encode(), None), "Update Tallei"),
    (
        "wrong passphrase",
        lambda d: (encode_export(d, "right", scrypt_n=FAST_N), "wrong"),
        "does not open with that passphrase",
    ),
    (
        "truncated ciphertext",
        lambda d: (encode_export(d, "right", scrypt_n=FAST_N)[:-100], "right"),
        "does not open with that passphrase",
    ),
    ("truncated header", lambda d: (encode_export(d, "right", scrypt_n=FAST_N)[:30], "right"), "truncated"),
    (
        "tampered ciphertext",
        lambda d: (_tamper_body(encode_export(d, "right", scrypt_n=FAST_N)), "right"),
        "changed or cut short",
    ),
    (
        "tampered header",
        lambda d: (_tamper_header(encode_export(d, "right", scrypt_n=FAST_N)), "right"),
        "changed or cut short",
    ),
    (
        "unknown type",
        lambda d: (json.dumps(_retype(d, type="opinion")).encode(), None),
        "'type' is 'opinion'",
    ),
    ("empty content", lambda d: (json.dumps(_retype(d, content="  ")).encode(), None), "empty"),
    ("bad date", lambda d: (json.dumps(_retype(d, created_at="last tuesday")).encode(), None), "ISO 8601"),
    (
        "naive date",
        lambda d: (json.dumps(_retype(d, updated_at="2026-01-01T10:00:00")).encode(), None),
        "zone",
    ),
    ("bad id", lambda d: (json.dumps(_retype(d, id="../../etc")).encode(), None), "not a memory id"),
    ("count zero", lambda d: (json.dumps(_retype(d, reference_count=0)).encode(), None), "whole number"),
    ("pinned as text", lambda d: (json.dumps(_retype(d, pinned="yes")).encode(), None), "true or false"),
    ("missing field", lambda d: (json.dumps(_retype(d, provenance=None)).encode(), None), "must be a list"),
    (
        "duplicate id",
        lambda d: (json.dumps({**d, "memories": d["memories"] + d["memories"][:1]}).encode(), None),
        "twice",
    ),
    (
        "conflict names a missing memory",
        lambda d: (
            json.dumps(
                {
                    **d,
                    "conflicts": [
                        {
                            "id": "c0123456789ab",
                            "memory_a": d["memories"][0]["id"],
                            "memory_b": "0123456789ab",
                            "status": "open",
                            "created_at": d["exported_at"],
                            "resolved_at": None,
                            "resolution": None,
                        }
                    ],
                }
            ).encode(),
            None,
        ),
        "not in the file",
    ),
]


@pytest.mark.parametrize(("label", "make_bad", "reason"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_or_foreign_file_is_rejected_in_one_line_and_changes_nothing(
    make_service: ServiceFactory, tmp_path: Path, label: str, make_bad: BadFile, reason: str
) -> None:
    source = fresh(make_service, tmp_path, "source")
    for i in range(5):
        source.save(f"Imported fact number {i} about the lighthouse", platform="claude")
    data, passphrase = make_bad(source.export_memories())
    target = fresh(make_service, tmp_path, "target")
    target.save("The target store already knows the harbour is closed on Sundays", platform="cursor")
    before, generation = target.export_memories(), target.db.generation()
    with pytest.raises(InvalidInput) as caught:
        target.import_memories(decode_export(data, passphrase))
    message = str(caught.value)
    assert reason in message and "\n" not in message
    assert target.db.generation() == generation
    after = target.export_memories()
    assert after["memories"] == before["memories"] and after["conflicts"] == before["conflicts"]


def test_import_confirms_equal_text_merging_provenance_once(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    mine = fresh(make_service, tmp_path, "mine")
    kept = mine.save("The build server is called hopper", platform="claude")
    other = fresh(make_service, tmp_path, "other")
    other.save("the build server is called Hopper.", platform="cursor")
    other.save("The staging database lives in Frankfurt", platform="cursor")
    doc = other.export_memories()

    first = mine.import_memories(doc)
    assert (first.added, first.confirmed, first.skipped) == (1, 1, 0)
    memory = mine.get(kept.id)
    assert memory.reference_count == 2
    assert [(p.platform, p.action) for p in memory.provenance] == [("claude", "saved"), ("cursor", "saved")]
    assert len(mine.list()) == 2

    generation = mine.db.generation()
    again = mine.import_memories(doc)
    assert (again.added, again.confirmed, again.skipped, again.changed) == (0, 0, 2, False)
    assert mine.get(kept.id).provenance == memory.provenance
    assert mine.db.generation() == generation


def test_imports_appear_in_the_change_feed_and_a_reimport_adds_no_event(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    mine = fresh(make_service, tmp_path, "mine")
    kept = mine.save("The build server is called hopper", platform="claude")
    other = fresh(make_service, tmp_path, "other")
    other.save("The build server is called hopper", platform="cursor")
    new = other.save("The staging database lives in Frankfurt", platform="cursor")
    other.save("I prefer tabs for indentation in Python code", platform="claude")
    other.save("I prefer spaces for indentation in Python code", platform="chatgpt")
    other.drain()
    (conflict,) = other.conflicts()
    doc = other.export_memories()

    seq = mine.last_change_seq()
    mine.import_memories(doc)
    batch = mine.changes_since(seq)
    imported = {
        (e.memory_id, e.detail, e.platform) for e in batch.events if e.kind is EventKind.MEMORY_IMPORTED
    }
    assert (kept.id, "confirmed", "cursor") in imported and (new.id, "added", "cursor") in imported
    assert len(imported) == 4
    opened = [e for e in batch.events if e.kind is EventKind.CONFLICT_OPENED]
    assert [(e.conflict_id, e.memory_id, e.detail) for e in opened] == [
        (conflict.id, conflict.memory_b.id, conflict.memory_a.id)
    ]

    mine.import_memories(doc)
    assert mine.changes_since(batch.last_seq).events == ()
    with pytest.raises(InvalidInput):
        mine.import_memories({**doc, "version": VERSION + 1})
    assert mine.changes_since(batch.last_seq).events == ()


def test_imported_memories_go_through_the_conflict_check(
    make_service: ServiceFactory, tmp_path: Path
) -> None:
    mine = fresh(make_service, tmp_path, "mine")
    mine.save("I prefer tabs for indentation in Python code", platform="claude")
    mine.drain()
    other = fresh(make_service, tmp_path, "other")
    other.save("I prefer spaces for indentation in Python code", platform="chatgpt")
    report = mine.import_memories(other.export_memories())
    assert report.added == 1
    assert mine.conflicts() == []  # pending until the background work runs
    mine.drain()
    (conflict,) = mine.conflicts()
    assert {conflict.memory_a.platform, conflict.memory_b.platform} == {"claude", "chatgpt"}


def test_an_import_by_a_process_without_a_worker_is_finished_by_the_service_on_the_store(
    make_service: ServiceFactory, clock: Clock, tmp_path: Path
) -> None:
    tray = fresh(make_service, tmp_path, "mine")
    tray.save("I prefer tabs for indentation in Python code", platform="claude")
    tray.drain()
    other = fresh(make_service, tmp_path, "other")
    other.save("I prefer spaces for indentation in Python code", platform="chatgpt")
    document = other.export_memories()

    command_line = Database(tray.db.path, KEY, key_source="test key")
    try:
        clock.advance(hours=1)
        report = Exports(command_line, clock).import_document(document)
        assert report.added == 1 and report.changed
        assert Exports(command_line, clock).import_document(document).changed is False
    finally:
        command_line.close()
    assert tray.status().pending_embeddings == 1
    tray.drain()
    (conflict,) = tray.conflicts()
    assert {conflict.memory_a.platform, conflict.memory_b.platform} == {"claude", "chatgpt"}
    (event,) = [e for e in tray.changes_since(0).events if e.kind is EventKind.MEMORY_IMPORTED]
    assert event.at == clock() and event.detail == "added"


def test_write_new_file_refuses_to_overwrite_and_leaves_no_partial_file(tmp_path: Path) -> None:
    target = tmp_path / "export.json"
    write_new_file(target, b"first")
    with pytest.raises(InvalidInput, match="already exists"):
        write_new_file(target, b"second")
    assert target.read_bytes() == b"first"
    write_new_file(target, b"third", force=True)
    assert target.read_bytes() == b"third"
    with pytest.raises(StoreUnavailable):
        write_new_file(tmp_path / "missing-folder" / "x.json", b"data")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.json"]


def _populate(service: MemoryService, clock: Clock, n: int) -> None:
    """``n`` memories with every status, several platforms, pins, confirmations and conflicts."""
    platforms = ("claude", "chatgpt", "cursor", "gemini")
    kinds = (
        "Fact {i}: the rack in aisle {i} holds the {word} servers",
        "We decided in review {i} to go with {word} for the queue",
        "Lesson {i}: never deploy {word} on a Friday without a rollback",
        "The {word} outage {i} crashed the billing job",
        "Note {i}: {word} looked slow this morning",
        "The meeting {i} about {word} was yesterday",
    )
    words = ("postgres", "kafka", "redis", "nginx", "celery", "airflow", "vault", "consul", "envoy", "flink")
    ids = []
    for i in range(n - 80):
        if i == (n - 80) // 2:
            clock.advance(days=400)  # the first half is now over a year old
        text = kinds[i % len(kinds)].format(i=i, word=words[i % len(words)])
        result = service.save(text, platform=platforms[i % 4], pinned=i % 7 == 0)
        ids.append(result.id)
        if i % 5 == 0:
            clock.advance(minutes=1)
            service.save(text, platform=platforms[(i + 1) % 4])
        clock.advance(seconds=7)
    for i in range(20):  # same subject, other platform: conflicts
        service.save(f"I prefer tabs for indentation in project tern{i}", platform="claude")
        service.save(f"I prefer spaces for indentation in project tern{i}", platform="chatgpt")
    for i in range(10):  # same subject, same platform: supersede
        service.save(f"I prefer the light theme in tool heron{i}", platform="cursor")
        service.save(f"I prefer the dark theme in tool heron{i}", platform="cursor")
    for i in range(10):  # near-duplicates: merged
        service.save(f"Reminder: the wiki page for team osprey{i} moved to confluence", platform="gemini")
    service.drain()
    for i in range(10):
        service.save(f"reminder - the wiki page for team osprey{i} moved to confluence!!", platform="claude")
    service.drain()
    for mid in ids[::11]:
        service.forget(mid)
    service.run_maintenance()
    for i, conflict in enumerate(service.conflicts()[:6]):
        service.resolve_conflict(conflict.id, "keep_both" if i % 2 else "keep_first")
    service.forget(service.conflicts()[0].memory_b.id)  # settles that conflict as "forgotten"


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An exported store of 3,000 memories (built once for this module)."""
    from tallei_desktop.core.store.database import Database
    from tests.core.conftest import BUDGETS, KEY
    from tests.support.fake_embedder import HashEmbedder

    clock = Clock()
    db = Database(tmp_path_factory.mktemp("big") / "tallei.db", KEY, key_source="test key")
    service = MemoryService(db, HashEmbedder(), budgets=BUDGETS, clock=clock)
    try:
        _populate(service, clock, 3_000)
        return service.export_memories()
    finally:
        service.close()


def test_big_store_has_every_status_and_conflicts(big_store: dict[str, Any]) -> None:
    memories = big_store["memories"]
    assert len(memories) == 3_000
    assert {m["status"] for m in memories} == {s.value for s in MemoryStatus}
    assert sum(len(m["provenance"]) > 1 for m in memories) > 400
    assert sum(m["pinned"] for m in memories) > 300
    statuses = {c["status"] for c in big_store["conflicts"]}
    assert statuses == {ConflictStatus.OPEN.value, ConflictStatus.RESOLVED.value}
    assert {"keep_both", "keep_first", "forgotten"} <= {c["resolution"] for c in big_store["conflicts"]}


@pytest.mark.parametrize("passphrase", ["a long export passphrase", None], ids=["encrypted", "plain"])
def test_round_trip_of_thousands_reproduces_every_memory_and_reimport_changes_nothing(
    make_service: ServiceFactory, tmp_path: Path, big_store: dict[str, Any], passphrase: str | None
) -> None:
    path = tmp_path / "export.tallei"
    write_new_file(path, encode_export(big_store, passphrase, scrypt_n=FAST_N))
    target = fresh(make_service, tmp_path, "fresh")
    report = target.import_memories(decode_export(path.read_bytes(), passphrase))
    assert (report.added, report.confirmed, report.skipped) == (3_000, 0, 0)
    assert report.conflicts_added == len(big_store["conflicts"])

    copied = target.export_memories()
    by_id = {m["id"]: m for m in copied["memories"]}
    assert len(by_id) == 3_000
    for original in big_store["memories"]:
        assert by_id[original["id"]] == original  # every field, provenance included
    assert copied["conflicts"] == big_store["conflicts"]
    sample = big_store["memories"][1234]
    assert target.get(sample["id"]).content == sample["content"]

    target.drain()  # the lifecycle checks of imported memories run, then a re-import is a no-op
    settled, generation = target.export_memories(), target.db.generation()
    again = target.import_memories(decode_export(path.read_bytes(), passphrase))
    assert (again.added, again.confirmed, again.conflicts_added, again.changed) == (0, 0, 0, False)
    assert again.skipped == 3_000
    assert target.db.generation() == generation
    assert target.export_memories()["memories"] == settled["memories"]
