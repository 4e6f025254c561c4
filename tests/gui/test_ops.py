"""The background-op helper: work off the Qt thread, results and errors back on it."""

from __future__ import annotations

import threading

from pytestqt.qtbot import QtBot

from tallei_desktop.core.errors import InvalidInput
from tallei_desktop.gui.ops import Ops
from tests.gui.conftest import WAIT_MS


def test_ops_run_off_the_qt_thread_and_answer_on_it(qtbot: QtBot, ops: Ops) -> None:
    qt_thread = threading.get_ident()
    seen: list[tuple[int, int]] = []
    with qtbot.waitSignal(ops.idle, timeout=WAIT_MS):
        ops.run(threading.get_ident, lambda worker: seen.append((worker, threading.get_ident())))
    [(worker, answered)] = seen
    assert worker != qt_thread and answered == qt_thread


def test_a_known_error_becomes_a_message(qtbot: QtBot, ops: Ops) -> None:
    def fail() -> None:
        raise InvalidInput("The memory text is empty; type something.")

    with qtbot.waitSignal(ops.message, timeout=WAIT_MS) as said:
        ops.run(fail)
    assert said.args == ["The memory text is empty; type something."]


def test_a_bug_is_logged_with_its_traceback_and_reported(qtbot: QtBot, ops: Ops, caplog: object) -> None:
    def crash() -> None:
        raise ZeroDivisionError("oops")

    with qtbot.waitSignal(ops.message, timeout=WAIT_MS) as said:
        ops.run(crash)
    assert "ZeroDivisionError" in said.args[0] and "log" in said.args[0]
    assert any(r.exc_info and r.exc_info[0] is ZeroDivisionError for r in caplog.records)  # type: ignore[attr-defined]


def test_after_shutdown_nothing_runs_and_nothing_is_answered(qtbot: QtBot) -> None:
    helper = Ops()
    helper.shutdown()
    answered: list[object] = []
    helper.run(lambda: 1, answered.append)
    assert answered == [] and helper.running == 0
