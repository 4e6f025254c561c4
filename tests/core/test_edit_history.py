"""An edit is recorded under whoever made it, with the text it replaced."""

from __future__ import annotations

from pathlib import Path

from tallei_desktop.core import APP_PLATFORM, MemoryService
from tallei_desktop.core.store.connection import open_connection
from tallei_desktop.core.store.database import Database
from tallei_desktop.core.store.migrations import MIGRATIONS
from tests.core.conftest import BUDGETS, KEY, Clock, ServiceFactory
from tests.support.fake_embedder import HashEmbedder


def test_an_edit_without_a_platform_is_the_persons_not_the_first_assistants(
    service: MemoryService, clock: Clock
) -> None:
    mid = service.save("My favourite editor is Vim", platform="claude").id
    clock.advance(minutes=1)
    edited = service.update(mid, content="My favourite editor is Neovim")
    [edit] = [p for p in edited.provenance if p.action == "edited"]
    assert edit.platform == APP_PLATFORM
    assert edit.at == clock.now
    assert edit.previous == "My favourite editor is Vim"
    assert service.get(mid).platform == "claude"  # who first saved it does not change
    assert edited.platforms == ("claude",)  # the person is not listed among the assistants
    assert APP_PLATFORM not in {u.platform for u in service.platform_usage()}


def test_every_edit_keeps_the_text_before_it_in_order(service: MemoryService, clock: Clock) -> None:
    mid = service.save("The spare key is under the mat", type="fact", platform="chatgpt").id
    clock.advance(minutes=1)
    service.update(mid, content="The spare key is with the neighbour", platform="gemini")
    clock.advance(minutes=1)
    service.update(mid, content="The spare key is in the lockbox")
    service.update(mid, type="decision")  # no new text: no edit entry
    trail = service.get(mid).provenance
    assert [(p.action, p.platform, p.previous) for p in trail] == [
        ("saved", "chatgpt", None),
        ("edited", "gemini", "The spare key is under the mat"),
        ("edited", APP_PLATFORM, "The spare key is with the neighbour"),
    ]
    assert service.get(mid).platforms == ("chatgpt", "gemini")


def test_the_text_before_an_edit_survives_export_and_import(
    service: MemoryService, make_service: ServiceFactory
) -> None:
    mid = service.save("Dinner is at seven", type="fact", platform="claude").id
    service.update(mid, content="Dinner is at eight")
    document = service.export_memories()
    [record] = document["memories"]
    assert [p.get("previous") for p in record["provenance"]] == [None, "Dinner is at seven"]

    other = make_service()
    other.import_memories(document)
    [edit] = [p for p in other.get(mid).provenance if p.action == "edited"]
    assert (edit.platform, edit.previous) == (APP_PLATFORM, "Dinner is at seven")
    assert other.import_memories(document).confirmed == 0  # nothing new the second time


def test_a_store_from_before_edit_history_opens_with_its_trail_and_keeps_new_edits(
    tmp_path: Path, clock: Clock
) -> None:
    path = tmp_path / "tallei.db"
    conn = open_connection(path, KEY, key_source="k")
    before = [name for name, _ in MIGRATIONS].index("text before each edit")
    for version, (_name, step) in enumerate(MIGRATIONS[:before]):
        with conn:
            step(conn)
            conn.execute(f"PRAGMA user_version = {version + 1}")
    with conn:
        conn.execute(
            "INSERT INTO memories (id, content, norm_hash, type, bucket, platform, created_at, updated_at, "
            "occurred_at) VALUES ('a1b2c3d4e5f6', 'Lunch is at one', 'h', 'fact', 'long_term', 'claude', 1, 2, 1)"
        )
        conn.execute("INSERT INTO provenance VALUES (1, 'claude', 1, 'saved'), (1, 'cursor', 2, 'edited')")
    conn.close()
    service = MemoryService(Database(path, KEY, key_source="k"), HashEmbedder(), budgets=BUDGETS, clock=clock)
    try:
        service.update("a1b2c3d4e5f6", content="Lunch is at two")
        trail = service.get("a1b2c3d4e5f6").provenance
        assert [(p.platform, p.action, p.previous) for p in trail] == [
            ("claude", "saved", None),
            ("cursor", "edited", None),  # recorded before the old text was kept: nothing to show
            (APP_PLATFORM, "edited", "Lunch is at one"),
        ]
    finally:
        service.close()
