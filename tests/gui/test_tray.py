"""The tray: a badge readable at panel sizes, a tooltip that counts, conflict balloons that never
flash by and that a click always follows, and a menu that does not offer a dead endpoint."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path

import keyring.backends.null as keyring_backends_null
import pytest
import qasync
from PySide6.QtCore import QSize
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication, QSystemTrayIcon
from pytestqt.qtbot import QtBot

from tallei_desktop.config import load_settings
from tallei_desktop.core import Conflict
from tallei_desktop.core.keys import SecretStore
from tallei_desktop.core.service import MemoryService
from tallei_desktop.gui.app import TrayApp
from tallei_desktop.gui.backend import Backend
from tallei_desktop.gui.icons import BADGE_COLOUR, TrayState, badge_rect, tray_icon
from tallei_desktop.gui.main_window import MainWindow
from tallei_desktop.gui.tray import CLICK_GRACE_S, MIN_SHOW_S, NOTIFY_S, Tray
from tallei_desktop.gui.unlock import open_store
from tests.gui.conftest import PASSPHRASE, free_port
from tests.gui.test_conflicts import PAIRS

TRIGGER = QSystemTrayIcon.ActivationReason.Trigger


class Clock:
    """Seconds that pass only when the test says so."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def _image(state: TrayState, count: int, size: int, scale: float) -> QImage:
    pixmap = tray_icon(state, count=count).pixmap(QSize(size, size), scale)
    assert (pixmap.width(), pixmap.height()) == (round(size * scale), round(size * scale))
    return pixmap.toImage()


def _near(colour: QColor, other: QColor, slack: int = 40) -> bool:
    return all(
        abs(a - b) <= slack
        for a, b in zip(colour.getRgb()[:3], other.getRgb()[:3], strict=True)  # type: ignore[arg-type]
    )


def _white_inside(image: QImage, size: int, scale: float) -> int:
    """White pixels in the inner half of the badge: the digit, if one is drawn."""
    rect = badge_rect(size)
    cx, cy, r = rect.center().x() * scale, rect.center().y() * scale, rect.width() * scale * 0.3
    return sum(
        _near(image.pixelColor(x, y), QColor("white"), 60)
        for x in range(image.width())
        for y in range(image.height())
        if (x + 0.5 - cx) ** 2 + (y + 0.5 - cy) ** 2 <= r * r
    )


@pytest.mark.parametrize("scale", [1.0, 2.0])
@pytest.mark.parametrize("size", [16, 20, 22, 24])
def test_the_badge_is_a_ringed_dot_with_the_count_where_a_digit_fits(
    qapp: QApplication, size: int, scale: float
) -> None:
    rect = badge_rect(size)
    centre = (int(rect.center().x() * scale), int(rect.center().y() * scale))
    many = _image(TrayState.CONFLICTS, 12, size, scale)
    assert _near(many.pixelColor(*centre), BADGE_COLOUR)
    # A white ring parts the dot from the mark: the badge's left edge, level with its centre.
    edge = (int((rect.left() + 0.5) * scale), centre[1])
    assert _near(many.pixelColor(*edge), QColor("white"), 90)
    assert not _near(_image(TrayState.NORMAL, 0, size, scale).pixelColor(*centre), BADGE_COLOUR)
    # One digit where it can be read; a plain dot where it would be a smudge, and past nine.
    two = _white_inside(_image(TrayState.CONFLICTS, 2, size, scale), size, scale)
    assert _white_inside(many, size, scale) == 0
    assert (two > 0) == (size >= 22)


def test_the_tooltip_says_how_many_conflicts_wait(qapp: QApplication) -> None:
    tray = Tray()
    assert tray.icon.toolTip() == "Tallei"
    tray.set_conflicts(1)
    assert tray.icon.toolTip() == "Tallei — 1 conflict waits for you"
    tray.set_conflicts(2)
    assert tray.icon.toolTip() == "Tallei — 2 conflicts wait for you"


def _three(service: MemoryService) -> list[Conflict]:
    for first, second in PAIRS:
        service.save(first[0], platform=first[1])
        service.save(second[0], platform=second[1])
        service.drain()
    found = list(reversed(service.conflicts()))  # oldest first, as they were announced
    assert len(found) == 3
    return found


def test_conflicts_arriving_together_are_told_in_one_balloon_that_stays(
    qtbot: QtBot, service: MemoryService
) -> None:
    clock = Clock()
    tray = Tray(clock=clock)
    balloons: list[tuple[str, str]] = []
    tray.balloon_shown.connect(lambda title, text: balloons.append((title, text)))
    notified: list[str] = []
    tray.notified.connect(notified.append)
    first, second, third = _three(service)

    tray.notify_conflict(first)  # at once
    assert balloons == [
        (
            "Your assistants disagree",
            "claude: “I prefer window seats on flights”\ngemini: “I prefer aisle seats on flights”\n"
            "Click to settle it.",
        )
    ]
    clock.now += 1.5
    tray.notify_conflict(second)  # the first balloon stays up: nothing replaces it yet
    assert len(balloons) == 1
    clock.now += MIN_SHOW_S - 1.5
    tray.flush_notifications()  # what the timer does once the first has had its time
    assert balloons[-1] == (
        "2 new conflicts between your assistants",
        "claude and gemini: “I prefer window seats on flights”\n"
        "claude and chatgpt: “I prefer tabs for indentation”\nClick to settle them.",
    )
    tray.flush_notifications()  # nothing new since: no balloon again
    assert len(balloons) == 2
    clock.now += 1.0
    tray.notify_conflict(third)
    clock.now += MIN_SHOW_S
    tray.flush_notifications()
    assert balloons[-1][0] == "3 new conflicts between your assistants" and len(balloons) == 3
    assert notified == [first.id, second.id, third.id]
    # A click on the combined balloon opens the newest it told of.
    with qtbot.waitSignal(tray.conflict_clicked) as clicked:
        tray.icon.messageClicked.emit()
    assert clicked.args == [third.id]
    # Long after, a conflict is told on its own again.
    clock.now += NOTIFY_S + 1
    tray.notify_conflict(first)
    assert balloons[-1][0] == "Your assistants disagree" and len(balloons) == 4


def test_a_click_on_the_icon_after_a_conflict_balloon_opens_that_conflict(
    qtbot: QtBot, service: MemoryService
) -> None:
    clock = Clock()
    tray = Tray(clock=clock)
    first, second, _third = _three(service)
    tray.notify_conflict(first)
    clock.now += 3
    # The balloon was only dismissed; the person clicks the icon.
    with qtbot.waitSignal(tray.conflict_clicked) as clicked:
        tray.icon.activated.emit(TRIGGER)
    assert clicked.args == [first.id]
    with qtbot.assertNotEmitted(tray.conflict_clicked), qtbot.waitSignal(tray.open_requested):
        tray.icon.activated.emit(TRIGGER)  # once is enough: the next click opens the window
    clock.now += 60
    tray.notify_conflict(second)
    clock.now += CLICK_GRACE_S + 1
    with qtbot.assertNotEmitted(tray.conflict_clicked), qtbot.waitSignal(tray.open_requested):
        tray.icon.activated.emit(TRIGGER)  # long forgotten: the icon just opens the window
    with qtbot.waitSignal(tray.conflict_clicked) as clicked:
        tray.icon.messageClicked.emit()
    assert clicked.args == [second.id]
    tray.set_problem("Cannot listen on 127.0.0.1:18765: another program uses it.")
    with qtbot.assertNotEmitted(tray.conflict_clicked), qtbot.waitSignal(tray.open_requested):
        tray.icon.messageClicked.emit()  # that balloon was about the port


def test_the_menu_offers_no_pause_or_copy_for_an_endpoint_that_is_not_serving(qapp: QApplication) -> None:
    tray = Tray()
    problem = "Cannot listen on 127.0.0.1:18765: another program uses it."
    tray.set_problem(problem)
    tray.set_endpoint_state(False)
    assert not tray.pause_action.isEnabled() and not tray.copy_action.isEnabled()
    assert tray.pause_action.text() == "HTTP endpoint not serving"
    assert tray.pause_action.toolTip() == problem and tray.copy_action.toolTip() == problem
    tray.set_endpoint_state(False, "Starting…")
    assert tray.copy_action.toolTip() == "Starting…"
    tray.set_endpoint_state(True)
    assert tray.pause_action.isEnabled() and tray.copy_action.isEnabled()
    assert tray.pause_action.text() == "&Pause HTTP endpoint"
    # Paused on purpose: nothing serves, and resuming is exactly what the menu offers.
    tray.set_paused(True)
    tray.set_endpoint_state(False)
    assert tray.pause_action.isEnabled() and tray.pause_action.text() == "&Resume HTTP endpoint"


@pytest.fixture
def loop(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    event_loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(event_loop)
    yield event_loop
    event_loop.close()
    asyncio.set_event_loop(None)


@pytest.fixture
def app(tmp_path: Path) -> Iterator[TrayApp]:
    env = {
        "TALLEI_DATA_DIR": str(tmp_path / "data"),
        "TALLEI_MODEL_DIR": str(tmp_path / "no-model"),
        "TALLEI_ALLOW_MODEL_DOWNLOAD": "false",
        "TALLEI_PASSPHRASE": PASSPHRASE,
        "TALLEI_HTTP_PORT": str(free_port()),
    }
    settings = load_settings(environ=env, config_path=tmp_path / "absent.toml")
    no_keyring = keyring_backends_null.Keyring()  # type: ignore[no-untyped-call]
    opened = open_store(settings, SecretStore(settings.data_dir, passphrase=PASSPHRASE, backend=no_keyring))
    tray_app = TrayApp(settings)
    tray_app.opened = opened
    tray_app.window = MainWindow(settings, Backend(opened.service), tray_app.ops, has_tray=True)
    tray_app.tray = Tray()
    yield tray_app
    tray_app.ops.shutdown()
    opened.service.close()


def test_a_taken_port_greys_out_the_tray_items_for_the_endpoint(
    loop: asyncio.AbstractEventLoop, app: TrayApp
) -> None:
    assert app.tray is not None
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", app.settings.http_port))
        squatter.listen()
        loop.run_until_complete(app._start_endpoint())
    assert app.endpoint is None
    assert not app.tray.pause_action.isEnabled() and not app.tray.copy_action.isEnabled()
    assert f"127.0.0.1:{app.settings.http_port}" in app.tray.copy_action.toolTip()
    loop.run_until_complete(app._start_endpoint())  # the port is free again
    assert app.endpoint is not None
    assert app.tray.pause_action.isEnabled() and app.tray.copy_action.isEnabled()
    loop.run_until_complete(app.endpoint.stop())
