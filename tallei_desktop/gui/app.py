"""Start-up and shutdown of the tray app: settings → unlock → service → window and tray → HTTP endpoint.

Everything runs in one qasync loop: Qt's events, the watcher's polls and the uvicorn server of the
HTTP endpoint. Quit (menu), closing the window where there is no tray, and SIGTERM/SIGINT all end
the same way: stop the endpoint, let running ops finish, close the store, exit 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QMessageBox, QSystemTrayIcon

from tallei_desktop.app.key_agent import KeyAgent, agent_available
from tallei_desktop.config import Settings
from tallei_desktop.core import KEY_FILE_NAME, Conflict, KnownError
from tallei_desktop.gui.backend import Backend
from tallei_desktop.gui.icons import app_icon
from tallei_desktop.gui.main_window import MainWindow, PageName
from tallei_desktop.gui.ops import Ops
from tallei_desktop.gui.single_instance import SingleInstance
from tallei_desktop.gui.tray import Tray
from tallei_desktop.gui.unlock import Opened, Unlocker
from tallei_desktop.gui.watcher import StoreWatcher
from tallei_desktop.gui.x11 import X11_LIBRARIES, x11_problem

if TYPE_CHECKING:
    from tallei_desktop.mcp_server.http_endpoint import HttpEndpoint

__all__ = ["TrayApp", "run_gui"]

log = logging.getLogger(__name__)


#: How long after the tray icon appears its first balloon waits (see TrayApp._build).
_GREETING_DELAY_MS = 1_500


def _say(text: str) -> None:
    # The readiness and problem lines go to stderr, which the person (or a test) may be watching.
    print(f"tallei-desktop: {text}", file=sys.stderr, flush=True)


def run_gui(
    settings: Settings,
    argv: list[str] | None = None,
    *,
    x11_libraries: Sequence[tuple[str, str]] = X11_LIBRARIES,
) -> int:
    """Run the tray app until Quit or SIGTERM; 0 when it ends cleanly or another instance was shown.

    1, with a line saying what to install, when Qt's X11 plugin would abort for want of a library
    (``x11_libraries`` are those looked for).
    """
    import qasync

    if QApplication.instance() is None:
        problem = x11_problem(libraries=x11_libraries)
        if problem is not None:
            _say(problem)
            return 1
    app = QApplication.instance() or QApplication(argv or [sys.argv[0]])
    assert isinstance(app, QApplication)
    app.setApplicationName("Tallei")
    app.setApplicationDisplayName("Tallei")
    app.setDesktopFileName("tallei-desktop")
    app.setWindowIcon(app_icon())
    app.setQuitOnLastWindowClosed(False)
    instance = SingleInstance(settings.data_dir)
    if not instance.acquire():
        _say("Tallei is already running; its window was brought forward.")
        return 0
    try:
        result: int = qasync.run(TrayApp(settings, instance).run())
        return result
    finally:
        instance.release()


class TrayApp:
    """The running program; :meth:`run` is the one coroutine the qasync loop runs."""

    def __init__(
        self, settings: Settings, instance: SingleInstance | None = None, *, has_tray: bool | None = None
    ) -> None:
        self.settings = settings
        self.instance = instance
        self._has_tray = has_tray  # None: ask Qt whether this desktop has a system tray
        self.unlocker: Unlocker | None = None
        #: The balloon shown when the app started in the tray without opening its window.
        self.greeting: str | None = None
        self.ops = Ops()
        self.window: MainWindow | None = None
        self.tray: Tray | None = None
        self.watcher: StoreWatcher | None = None
        self.endpoint: HttpEndpoint | None = None
        self.opened: Opened | None = None
        self.paused = False
        self.first_run = False
        self._stop = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self.agent: KeyAgent | None = None

    def quit(self) -> None:
        self._stop.set()

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signum, self.quit)
        try:
            self._start_agent()
            opened = await self._unlock()
            if opened is None:
                return 0
            self.opened = opened
            self._agent_unlocked(opened)
            self._build(opened)
            await self._start_endpoint()
            where = "tray" if self.tray is not None else "window"
            _say(f"Tallei is running in the {where}.")
            await self._stop.wait()
        finally:
            await self._shutdown()
        return 0

    # -- start-up ----------------------------------------------------------------------------------

    async def _unlock(self) -> Opened | None:
        result: asyncio.Future[Opened | None] = asyncio.get_running_loop().create_future()

        def settle(value: Opened | None) -> None:
            if not result.done():
                result.set_result(value)

        unlocker = Unlocker(self.settings, self.ops)
        self.unlocker = unlocker
        unlocker.opened.connect(settle)
        unlocker.cancelled.connect(lambda: self._cancelled(unlocker, settle))
        unlocker.failed.connect(lambda text: self._fatal(text, settle))
        unlocker.start()
        self.first_run = unlocker.first_run
        waiter = asyncio.ensure_future(self._stop.wait())
        pending: set[asyncio.Future[Any]] = {result, waiter}
        await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        return result.result() if result.done() else None

    def _start_agent(self) -> None:
        """Answer launched programs ("locked" until unlocked) when the key is, or may be, passphrase-guarded."""
        settings = self.settings
        guarded = (settings.data_dir / KEY_FILE_NAME).exists() or not settings.db_path.exists()
        if not guarded or not agent_available() or settings.runtime_dir is None:
            return
        try:
            self.agent = KeyAgent(settings.runtime_dir, settings.data_dir).start()
        except (KnownError, OSError) as exc:
            log.warning("Launched assistants cannot get the key from this app: %s", exc)

    def _agent_unlocked(self, opened: Opened) -> None:
        if self.agent is None:
            return
        if (self.settings.data_dir / KEY_FILE_NAME).exists():
            # Cached by the unlock that just succeeded: no passphrase is stretched again.
            self.agent.unlock(opened.secrets.store_key(create=False))
        else:  # the key is in the OS keyring, where launched programs find it themselves
            agent, self.agent = self.agent, None
            agent.stop()

    def _cancelled(self, unlocker: Unlocker, settle: Callable[[None], None]) -> None:
        if unlocker.dialog is not None and unlocker.dialog.creating:
            _say("Setup was cancelled; nothing was created. Start Tallei again to set it up.")
        else:
            _say("Unlocking was cancelled; your memories stay locked. Start Tallei again to open them.")
        settle(None)

    def _fatal(self, text: str, settle: Callable[[None], None]) -> None:
        _say(text)
        box = QMessageBox(QMessageBox.Icon.Critical, "Tallei cannot open your memories", text)
        box.finished.connect(lambda _code: settle(None))
        box.open()
        self._fatal_box = box

    def _build(self, opened: Opened) -> None:
        backend = Backend(opened.service)
        has_tray = QSystemTrayIcon.isSystemTrayAvailable() if self._has_tray is None else self._has_tray
        window = MainWindow(self.settings, backend, self.ops, has_tray=has_tray, secrets=opened.secrets)
        self.window = window
        window.quit_requested.connect(self.quit)
        self.ops.message.connect(lambda text: log.warning("%s", text))
        watcher = StoreWatcher(backend, self.ops)
        self.watcher = watcher
        watcher.changed.connect(window.store_changed)
        watcher.conflicts.connect(window.set_conflicts)
        if self.instance is not None:
            self.instance.activated.connect(self._brought_forward)
        if has_tray:
            tray = Tray()
            self.tray = tray
            tray.open_requested.connect(window.bring_forward)
            tray.page_requested.connect(window.show_page)
            tray.pause_toggled.connect(lambda: self._spawn(self._toggle_pause()))
            tray.copy_requested.connect(self.copy_address_and_token)
            tray.quit_requested.connect(self.quit)
            tray.conflict_clicked.connect(window.show_conflict)
            watcher.conflicts.connect(lambda found: tray.set_conflicts(len(found)))
            if self.settings.notify_conflicts:
                watcher.conflict_opened.connect(tray.notify_conflict)
            tray.show()
            if not self.first_run:
                # The window stays closed, so say once where Tallei went.
                greeting = "Tallei is running in the tray: click the icon to see your memories."
                self.greeting = greeting
                # A tray host embeds a new icon a moment after it is shown, and a balloon asked for
                # before that has nowhere to point and is dropped.
                QTimer.singleShot(_GREETING_DELAY_MS, lambda: tray.greet(greeting))
        else:
            why = (
                "No system tray was found on this desktop, so Tallei runs in this window; "
                "closing it quits Tallei. Conflicts between your assistants show up here."
            )
            window.set_notice("tray", why)
            watcher.conflict_opened.connect(self._conflict_without_tray)
            window.show()
        watcher.start()
        window.follow_model(always=self.first_run)
        self._update_endpoint_views()
        if self.first_run:
            _say("This is the first run: the window offers to connect the assistants found here.")
            window.set_notice(
                "welcome",
                "Your memory is ready. Connect the assistants you use below; each one you connect "
                "remembers for all the others.",
            )
            window.show_page(PageName.ASSISTANTS)

    def _brought_forward(self) -> None:
        log.info("Another launch asked for the window")
        _say("Another launch asked for the window; bringing it forward.")
        if self.window is not None:
            self.window.bring_forward()

    def _conflict_without_tray(self, conflict: Conflict) -> None:
        _say(f"Conflict {conflict.id} between {conflict.memory_a.platform} and {conflict.memory_b.platform}.")

    # -- the HTTP endpoint -------------------------------------------------------------------------

    async def _start_endpoint(self) -> None:
        from tallei_desktop.mcp_server.http_endpoint import EndpointUnavailable, HttpEndpoint
        from tallei_desktop.mcp_server.server import build_server

        assert self.opened is not None
        endpoint = HttpEndpoint(
            build_server(self.opened.service),
            token=self.opened.token,
            host=self.settings.http_host,
            port=self.settings.http_port,
            port_advice="choose another port under Settings → HTTP port and start Tallei again",
        )
        try:
            await endpoint.start()
        except EndpointUnavailable as exc:
            self._problem(str(exc))
        else:
            self.endpoint = endpoint
            self._problem(None)
            _say(f"Serving MCP at {endpoint.url}")
        self._update_endpoint_views()

    def _problem(self, text: str | None) -> None:
        if text:
            _say(text)
        if self.window is not None:
            self.window.set_notice("http", text)
        if self.tray is not None:
            self.tray.set_problem(text)

    async def _toggle_pause(self) -> None:
        if self.endpoint is not None:
            endpoint, self.endpoint = self.endpoint, None
            await endpoint.stop()
            self.paused = True
            _say("The HTTP endpoint is paused.")
        else:
            self.paused = False
            await self._start_endpoint()
        if self.tray is not None:
            self.tray.set_paused(self.paused)
        self._update_endpoint_views()

    def url(self) -> str:
        if self.endpoint is not None:
            return self.endpoint.url
        host = self.settings.http_host
        return f"http://{host}:{self.settings.http_port}/mcp"

    def copy_address_and_token(self) -> None:
        token = self.opened.token if self.opened else ""
        QGuiApplication.clipboard().setText(f"{self.url()}\nAuthorization: Bearer {token}")

    def _update_endpoint_views(self) -> None:
        if self.tray is not None:
            self.tray.set_endpoint_state(self.endpoint is not None)
        if self.window is None:
            return
        if self.endpoint is not None:
            state = "The endpoint is serving."
        elif self.paused:
            state = "The endpoint is paused: HTTP clients get no answer until you resume it from the tray."
        else:
            state = "The endpoint is not serving; see the notice at the top of the window."
        token = self.opened.token if self.opened else ""
        self.window.assistants_page.set_endpoint(self.url(), token, state)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- shutdown ----------------------------------------------------------------------------------

    async def _shutdown(self) -> None:
        if self.agent is not None:
            agent, self.agent = self.agent, None
            agent.stop()
        if self.watcher is not None:
            self.watcher.stop()
        if self.window is not None:
            self.window.stop_following_model()
        for task in list(self._tasks):
            with contextlib.suppress(Exception):
                await task
        if self.endpoint is not None:
            endpoint, self.endpoint = self.endpoint, None
            await endpoint.stop()
        if self.tray is not None:
            self.tray.hide()
        if self.window is not None:
            self.window.has_tray = True  # closing now must not ask to quit again
            self.window.hide()
        # Ops already running finish (a save in flight is committed), then the store closes.
        await asyncio.to_thread(self.ops.shutdown)
        if self.opened is not None:
            await asyncio.to_thread(self.opened.service.close)
        log.info("Tallei stopped cleanly")
