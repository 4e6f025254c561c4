"""``show`` tells who saved and changed a memory, and what an edit replaced."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pytest

from tallei_desktop import cli
from tallei_desktop.core import Budgets, Database, MemoryService
from tests.support.fake_embedder import HashEmbedder


@pytest.fixture
def service(tmp_path: Path) -> Iterator[MemoryService]:
    svc = MemoryService(
        Database(tmp_path / "tallei.db", bytes(range(32)), key_source="test key"),
        HashEmbedder(),
        budgets=Budgets(preference=1_500, long_term=4_800, short_term=1_700, short_term_days=60),
    )
    yield svc
    svc.close()


def test_show_names_the_person_for_an_edit_in_tallei_and_quotes_the_old_text(
    service: MemoryService, capsys: pytest.CaptureFixture[str]
) -> None:
    mid = service.save("My favourite editor is Vim", platform="claude").id
    service.update(mid, content="My favourite editor is Neovim")
    service.update(mid, content="My favourite editor is Helix", platform="cursor")

    assert cli._by_id("show")(service, argparse.Namespace(id=mid)) == 0

    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "My favourite editor is Helix"
    trail = [line.split(" at ")[0].strip() + " | " + line.partition("; ")[2] for line in lines[2:]]
    assert trail == [
        "saved by claude | ",
        "edited by you in Tallei | before: 'My favourite editor is Vim'",
        "edited by cursor | before: 'My favourite editor is Neovim'",
    ]
