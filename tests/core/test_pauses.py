"""Pausing an assistant platform: kept in the store, seen by every service on it, in the change feed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tallei_desktop.core import APP_PLATFORM, EventKind, InvalidInput, MemoryService
from tallei_desktop.core.pauses import Pauses
from tests.core.conftest import Clock, ServiceFactory

#: Another process on the store: pauses or resumes a platform per line read ("claude pause").
OTHER_PROCESS = """
import sys
from datetime import UTC, datetime
from pathlib import Path
from tallei_desktop.core.pauses import Pauses
from tallei_desktop.core.store.database import Database
db = Database(Path(sys.argv[1]), bytes(range(32)), key_source="t")
pauses = Pauses(db, lambda: datetime.now(UTC))
print("open", flush=True)
for line in sys.stdin:
    name, what = line.split()
    pauses.set(name, what == "pause")
    print("done", flush=True)
db.close()
"""


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


def test_a_pause_set_in_another_process_reaches_the_cached_set_at_the_next_call(
    service: MemoryService, clock: Clock
) -> None:
    pauses = Pauses(service.db, clock)
    other = subprocess.Popen(
        [sys.executable, "-c", OTHER_PROCESS, str(service.db.path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert other.stdin is not None and other.stdout is not None

    def tell(line: str) -> None:
        assert other.stdin is not None and other.stdout is not None
        other.stdin.write(line + "\n")
        other.stdin.flush()
        assert other.stdout.readline().strip() == "done"

    try:
        assert other.stdout.readline().strip() == "open"
        assert pauses.paused() == frozenset()
        assert pauses.paused() == frozenset()  # cached now
        tell("Claude pause")
        assert pauses.paused() == {"claude"}
        tell("chatgpt pause")
        tell("claude resume")
        assert pauses.paused() == {"chatgpt"}
        assert service.paused_platforms() == {"chatgpt"}  # the service's own cache agrees
    finally:
        other.stdin.close()
        assert other.wait(timeout=60) == 0
        other.stdout.close()


def test_pausing_what_the_person_does_in_tallei_is_refused(service: MemoryService, clock: Clock) -> None:
    pauses = Pauses(service.db, clock)
    start = service.last_change_seq()
    with pytest.raises(InvalidInput, match="not an assistant"):
        pauses.set(APP_PLATFORM.upper(), True)
    assert pauses.paused() == frozenset()
    assert service.last_change_seq() == start


def test_a_pause_is_stamped_by_the_clock_it_was_given(service: MemoryService, clock: Clock) -> None:
    clock.advance(days=3)
    start = service.last_change_seq()
    Pauses(service.db, clock).set("cursor", True)
    (event,) = service.changes_since(start).events
    assert event.kind is EventKind.PLATFORM_PAUSED and event.at == clock()
