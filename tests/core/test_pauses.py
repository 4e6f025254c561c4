"""Pausing an assistant platform: kept in the store, seen by every service on it, in the change feed."""

from __future__ import annotations

import pytest

from tallei_desktop.core import EventKind, InvalidInput, MemoryService
from tests.core.conftest import ServiceFactory


def test_pausing_and_resuming_is_seen_by_another_service_on_the_same_store(
    make_service: ServiceFactory,
) -> None:
    tray, other = make_service(), make_service()
    assert other.paused_platforms() == frozenset()

    tray.set_platform_paused("ChatGPT", True)
    tray.set_platform_paused("claude", True)
    assert other.paused_platforms() == {"chatgpt", "claude"}

    tray.set_platform_paused("chatgpt", False)
    assert other.paused_platforms() == {"claude"}
    assert tray.paused_platforms() == {"claude"}


def test_each_real_change_is_one_event_and_repeats_are_none(service: MemoryService) -> None:
    start = service.last_change_seq()
    service.set_platform_paused("cursor", True)
    service.set_platform_paused("cursor", True)
    service.set_platform_paused("cursor", False)
    service.set_platform_paused("cursor", False)

    events = service.changes_since(start).events
    assert [(e.kind, e.platform) for e in events] == [
        (EventKind.PLATFORM_PAUSED, "cursor"),
        (EventKind.PLATFORM_RESUMED, "cursor"),
    ]


def test_pausing_changes_no_content_generation(service: MemoryService) -> None:
    before = service.db.generation()
    service.set_platform_paused("gemini", True)
    assert service.db.generation() == before


def test_the_paused_set_is_read_again_only_after_a_commit(service: MemoryService) -> None:
    reads: list[int] = []
    real_read = service.db.read

    def counting_read():  # type: ignore[no-untyped-def]
        reads.append(1)
        return real_read()

    service.db.read = counting_read  # type: ignore[method-assign]
    service.paused_platforms()
    service.paused_platforms()
    service.paused_platforms()
    assert len(reads) == 1
    service.set_platform_paused("claude", True)
    assert service.paused_platforms() == {"claude"}
    assert len(reads) == 2


@pytest.mark.parametrize("platform", ["", "   ", None, 7])
def test_a_missing_platform_is_refused_and_changes_nothing(service: MemoryService, platform: object) -> None:
    start = service.last_change_seq()
    with pytest.raises(InvalidInput, match="Name the assistant platform"):
        service.set_platform_paused(platform, True)  # type: ignore[arg-type]
    assert service.paused_platforms() == frozenset()
    assert service.last_change_seq() == start


def test_paused_must_be_a_bool(service: MemoryService) -> None:
    with pytest.raises(InvalidInput, match="true or false"):
        service.set_platform_paused("claude", "yes")  # type: ignore[arg-type]
    assert service.paused_platforms() == frozenset()
