"""The tray app as a real process: one instance, a clean SIGTERM, a taken port, no display."""

from __future__ import annotations

import socket

import pytest

from tests.gui.conftest import AppProcess

pytestmark = pytest.mark.slow


def test_sigterm_stops_the_app_cleanly_with_exit_0(
    app_env: dict[str, str], start_app: type[AppProcess]
) -> None:
    app = start_app(app_env, "gui")
    app.wait_for("Serving MCP at http://127.0.0.1:")
    app.wait_for("Tallei is running")
    assert app.stop() == 0
    assert "Traceback" not in app.output()


def test_the_first_run_offers_to_connect_the_assistants(
    app_env: dict[str, str], start_app: type[AppProcess]
) -> None:
    app = start_app(app_env, "gui")
    app.wait_for("Tallei is running")
    assert app.stop() == 0
    first = app.output()
    again = start_app(app_env, "gui")
    again.wait_for("Tallei is running")
    assert again.stop() == 0
    assert "first run" in first and "first run" not in again.output()


def test_without_a_tray_the_window_opens_and_says_why(
    app_env: dict[str, str], start_app: type[AppProcess]
) -> None:
    # The offscreen platform has no system tray, as on a bare X server.
    app = start_app(app_env, "gui")
    app.wait_for("Tallei is running in the window.")
    assert app.stop() == 0


def test_a_second_launch_brings_the_first_forward_and_exits(
    app_env: dict[str, str], start_app: type[AppProcess]
) -> None:
    first = start_app(app_env, "gui")
    first.wait_for("Tallei is running")
    second = start_app(app_env, "gui")
    second.wait_for("already running")
    assert second.proc.wait(30) == 0
    first.wait_for("Another launch asked for the window")
    assert first.proc.poll() is None
    assert first.stop() == 0


def test_a_lock_left_by_a_crashed_app_is_taken_over(
    app_env: dict[str, str], start_app: type[AppProcess]
) -> None:
    crashed = start_app(app_env, "gui")
    crashed.wait_for("Tallei is running")
    crashed.kill()
    again = start_app(app_env, "gui")
    again.wait_for("Tallei is running")
    assert "already running" not in again.output()
    assert again.stop() == 0


def test_a_taken_port_is_a_message_and_the_app_keeps_running(
    app_env: dict[str, str], start_app: type[AppProcess]
) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", int(app_env["TALLEI_HTTP_PORT"])))
        squatter.listen()
        app = start_app(app_env, "gui")
        line = app.wait_for(f"Cannot listen on 127.0.0.1:{app_env['TALLEI_HTTP_PORT']}")
        assert "choose another port under Settings → HTTP port" in line
        assert "--port" not in line and "TALLEI_HTTP_PORT" not in line
        app.wait_for("Tallei is running")
        assert app.proc.poll() is None
        assert app.stop() == 0


def test_without_a_display_plain_tallei_desktop_serves_http(
    app_env: dict[str, str], start_app: type[AppProcess]
) -> None:
    env = {k: v for k, v in app_env.items() if k not in {"DISPLAY", "WAYLAND_DISPLAY"}}
    app = start_app(env)
    app.wait_for("no display, so serving MCP over HTTP")
    app.wait_for("bearer token")  # printed once SIGTERM is handled
    assert app.stop() == 0
