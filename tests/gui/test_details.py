"""The details pane says, in plain words, who saved and changed a memory, what its counts count,
and what became of its conflicts."""

from __future__ import annotations

import re

from PySide6.QtGui import QTextDocument
from pytestqt.qtbot import QtBot

from tallei_desktop.core import APP_PLATFORM
from tallei_desktop.core.service import MemoryService
from tallei_desktop.gui.backend import Backend, View
from tallei_desktop.gui.details import CONFLICT_SCHEME, REOPEN_SCHEME, render_details
from tallei_desktop.gui.ops import Ops
from tallei_desktop.gui.pages.memories import MemoriesPage
from tests.gui.conftest import WAIT_MS

#: Words of the store's own vocabulary that the person should never read.
_INTERNAL = re.compile(r"keep_first|keep_second|keep_both|long_term|short_term|\bdeleted\b|×")


def _text(service: MemoryService, memory_id: str) -> str:
    doc = QTextDocument()
    doc.setHtml(render_details(service.history(memory_id)))
    return doc.toPlainText()


def _fact(text: str, label: str) -> str:
    """The value next to ``label`` in the facts table (one cell per line in plain text)."""
    lines = [line.strip() for line in text.splitlines()]
    return lines[lines.index(label) + 1]


def test_an_edit_made_in_the_window_is_the_persons_and_shows_the_old_text(
    qtbot: QtBot, service: MemoryService, backend: Backend, ops: Ops
) -> None:
    mid = service.save("My favourite editor is Vim", platform="claude").id
    page = MemoriesPage(View.PREFERENCES, backend, ops)
    qtbot.addWidget(page)
    with qtbot.waitSignal(page.loaded, timeout=WAIT_MS):
        page.reload()
    page.select_id(mid)
    page.edit_text()
    page.edit_dialog.editor.setPlainText("My favourite editor is Neovim")
    with qtbot.waitSignal(page.acted, timeout=WAIT_MS):
        page.edit_dialog.accept()

    [edit] = [p for p in service.get(mid).provenance if p.action == "edited"]
    assert (edit.platform, edit.previous) == (APP_PLATFORM, "My favourite editor is Vim")
    page.select_id(mid)
    expected = "edited by you in Tallei"
    qtbot.waitUntil(lambda: expected in page.detail.toPlainText(), timeout=WAIT_MS)
    shown = page.detail.toPlainText()
    assert "My favourite editor is Neovim" in shown
    assert "before: “My favourite editor is Vim”" in shown
    assert "saved by claude" in shown and "edited by claude" not in shown


def test_a_fresh_memory_reads_unconfirmed_and_not_used_without_contradiction(service: MemoryService) -> None:
    mid = service.save("I take my coffee black", platform="claude").id
    text = _text(service, mid)
    assert _fact(text, "Confidence") == "Unconfirmed"
    assert _fact(text, "Used or confirmed") == "not since it was saved"
    assert _fact(text, "Last used or confirmed") == "not yet"
    assert _fact(text, "Listed under") == "Preferences"
    assert _fact(text, "Status") == "active"
    assert not _INTERNAL.search(text), text


def test_confirmations_and_an_assistants_use_are_counted_after_the_save(service: MemoryService) -> None:
    mid = service.save("The office wifi is Larkspur-5G", type="fact", platform="claude").id
    service.save("The office wifi is Larkspur-5G", platform="chatgpt")
    assert _fact(_text(service, mid), "Used or confirmed") == "once since it was saved"
    assert _fact(_text(service, mid), "Confidence") == "Medium"
    service.recall("office wifi", count_use=True)
    service.drain()
    text = _text(service, mid)
    assert _fact(text, "Used or confirmed") == "twice since it was saved"
    assert _fact(text, "Last used or confirmed") != "not yet"
    assert _fact(text, "Listed under") == "Long-term"


def test_conflict_outcomes_are_told_from_each_side_in_plain_words(service: MemoryService) -> None:
    kept = service.save("I prefer window seats on flights", platform="claude").id
    retired = service.save("I prefer aisle seats on flights", platform="gemini").id
    service.drain()
    [conflict] = service.conflicts()
    html = render_details(service.history(kept))
    assert f"href='{CONFLICT_SCHEME}:{conflict.id}'" in html
    assert "(open) settle it" in _text(service, kept)

    service.resolve_conflict(conflict.id, "keep_first" if conflict.memory_a.id == kept else "keep_second")
    kept_text, retired_text = _text(service, kept), _text(service, retired)
    assert "from gemini (you kept this one) bring back" in kept_text
    assert "from claude (you kept the other one) bring back" in retired_text
    assert _fact(retired_text, "Status") == "replaced by a newer memory"
    assert f"href='{REOPEN_SCHEME}:{conflict.id}'" in render_details(service.history(kept))
    for text in (kept_text, retired_text):
        assert not _INTERNAL.search(text), text


def test_a_merge_and_a_forgotten_memory_read_as_the_persons_doing(service: MemoryService) -> None:
    service.save("I prefer light mode", platform="claude")
    service.save("I prefer dark mode", platform="chatgpt")
    service.drain()
    [conflict] = service.conflicts()
    merged = service.resolve_conflict(conflict.id, "replace", content="Light mode by day, dark at night")
    [new_id] = {m.superseded_by for m in (service.get(merged.memory_a.id), service.get(merged.memory_b.id))}
    assert new_id is not None
    text = _text(service, new_id)
    assert "saved by you in Tallei" in text
    assert "(you merged both into one new memory)" in _text(service, merged.memory_a.id)

    service.forget(new_id)
    text = _text(service, new_id)
    assert _fact(text, "Status") == "forgotten" and _fact(text, "Listed under") == "Forgotten"
    assert APP_PLATFORM not in text.replace("you in Tallei", "")
    assert not _INTERNAL.search(text), text
