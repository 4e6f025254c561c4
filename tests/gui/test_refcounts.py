"""A window that reloads for days must not wear down Python's shared objects.

PySide6 6.12.0 drops a reference to ``True`` on every reload of a memory page (and to ``None`` on
``QModelIndex.data`` from Python), so a tray app following live changes aborts with "deallocating
True or False" after a few hundred reloads; pyproject.toml keeps that release out. The counting
runs in a process of its own, where no other test's threads take or drop references meanwhile.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.gui.conftest import TIMEOUT_S

RELOADS = 60
#: A few references come and go with the page's own work; 6.12.0 loses about seven references to
#: True per reload and one to None per call, far more than this.
SLACK = RELOADS // 2

_PROBE = """
import gc, json, sys
from pathlib import Path
from PySide6.QtCore import QEventLoop, Qt, QTimer
from PySide6.QtWidgets import QApplication
from tallei_desktop.core.recall import Budgets
from tallei_desktop.core.service import MemoryService
from tallei_desktop.core.store.database import Database
from tallei_desktop.gui.backend import Backend, View
from tallei_desktop.gui.ops import Ops
from tallei_desktop.gui.pages.memories import MemoriesPage
from tests.support.fake_embedder import HashEmbedder

app = QApplication([])
budgets = Budgets(preference=1_500, long_term=4_800, short_term=1_700, short_term_days=60)
service = MemoryService(Database(Path(sys.argv[1]), bytes(range(32)), key_source="test"), HashEmbedder(), budgets=budgets)
for i in range(30):
    service.save(f"Fact number {i} about the garden", type="fact", platform="claude")
ops = Ops()
page = MemoriesPage(View.LONG_TERM, Backend(service), ops)
page.show()

def reload_and_wait():
    loop = QEventLoop()
    page.loaded.connect(loop.quit)
    QTimer.singleShot(10_000, loop.quit)
    page.reload()
    loop.exec()
    page.loaded.disconnect(loop.quit)

def counts():
    gc.collect()
    return {"True": sys.getrefcount(True), "False": sys.getrefcount(False), "None": sys.getrefcount(None)}

reload_and_wait()
page.select_row(0)
before = counts()
for _ in range(int(sys.argv[2])):
    reload_and_wait()
after_reloads = counts()
index = page.model.index(0, 0)
for _ in range(200):
    index.data(Qt.ItemDataRole.CheckStateRole)  # a role the model answers with None
after_reads = counts()
print(json.dumps({"before": before, "after_reloads": after_reloads, "after_reads": after_reads}))
ops.shutdown()
service.close()
"""


def _probe(tmp_path: Path) -> dict[str, dict[str, int]]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(tmp_path / "tallei.db"), str(RELOADS)],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S * 4,
    )
    lines = done.stdout.strip().splitlines()
    assert lines, done.stderr
    result: dict[str, dict[str, int]] = json.loads(lines[-1])
    # The counts come first: a release that wears them down also aborts the probe as it exits.
    result["exit"] = {"code": done.returncode}
    return result


def test_reloading_a_page_and_reading_its_cells_keep_the_shared_objects_alive(tmp_path: Path) -> None:
    counts = _probe(tmp_path)
    before, reloaded, read = counts["before"], counts["after_reloads"], counts["after_reads"]
    lost = {name: before[name] - reloaded[name] for name in before if reloaded[name] < before[name] - SLACK}
    assert not lost, f"references lost over {RELOADS} reloads: {lost}"
    assert read["None"] >= reloaded["None"] - SLACK, "reading cells from Python loses references to None"
    assert counts["exit"]["code"] == 0
