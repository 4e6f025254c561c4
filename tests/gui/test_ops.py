"""The background-op helper: work off the Qt thread, results and errors back on it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

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


class _DoneAtOnce:
    """A pool whose work is already finished when submit returns, as on a busy machine."""

    def submit(self, fn: Callable[[], Any]) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(fn())
        return future

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        pass


def test_an_op_done_before_run_returns_still_answers_later_from_the_event_loop(
    qtbot: QtBot, ops: Ops
) -> None:
    # A caller sets its own state after run() returns; an answer delivered inside run() would
    # land before that, and a page would take the answer to an older request for the newest.
    ops._pool = _DoneAtOnce()  # type: ignore[assignment]
    answers: list[int] = []
    ops.run(lambda: 1, answers.append)
    ops.run(lambda: 2, answers.append)
    assert answers == [] and ops.running == 2
    qtbot.waitUntil(lambda: ops.running == 0, timeout=WAIT_MS)
    assert answers == [1, 2]


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
