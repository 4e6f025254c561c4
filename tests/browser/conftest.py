"""A real Chromium with Tallei's extension, the fixture sites over HTTPS, and the real native host.

One browser serves the whole package (starting one costs seconds); each test gets clean extension
settings and no paused site. The host is ``tallei-desktop native-host`` registered in the browser's
own profile with the launcher Tallei writes (``write_host_manifest``); the browser passes its
environment on to it, so the host opens the passphrase-guarded store in ``tmp``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import keyring.backends.null
import pytest
from playwright.sync_api import BrowserContext, Page, Playwright, Worker, sync_playwright

from tallei_desktop.app.browsers import CHROMIUM_EXTENSION_ID, write_host_manifest
from tallei_desktop.config import load_settings
from tallei_desktop.core.keys import SecretStore
from tallei_desktop.core.service import MemoryService
from tallei_desktop.factory import build_service
from tests.browser.sites import serve_sites

REPO_ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
PASSPHRASE = "correct horse battery staple"
SITE_HOSTS = ("chatgpt.com", "chat.openai.com", "claude.ai", "gemini.google.com")
TIMEOUT_S = 20.0


def build_extension(out: Path) -> dict[str, Path]:
    """Run browser/build.py's build into ``out`` (browser/ is not a package: load it by path)."""
    spec = importlib.util.spec_from_file_location("tallei_browser_build", REPO_ROOT / "browser" / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    made: dict[str, Path] = module.build(out)
    return made


def wait_for(check: Callable[[], Any], *, what: str, timeout: float = TIMEOUT_S) -> Any:
    """Poll ``check`` until it returns something truthy; fail with ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.05)


def host_environment(data: Path, *, passphrase: bool = True) -> dict[str, str]:
    """The browser's environment, which it passes on to the native host it starts."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TALLEI_")}
    no_model = data / "no-model"
    no_model.mkdir(parents=True, exist_ok=True)
    env.update(
        TALLEI_DATA_DIR=str(data / "data"),
        TALLEI_LOG_DIR=str(data / "logs"),
        TALLEI_RUNTIME_DIR=str(data / "run"),
        TALLEI_CONFIG=str(data / "absent.toml"),
        # Recall's count, not its meaning, is under test here: words only, the same in every process.
        TALLEI_MODEL_DIR=str(no_model),
        TALLEI_ALLOW_MODEL_DOWNLOAD="false",
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
    )
    if passphrase:
        env["TALLEI_PASSPHRASE"] = PASSPHRASE
    return env


@contextmanager
def open_store(env: dict[str, str]) -> Iterator[MemoryService]:
    """The host's store, opened in this process (no worker, no model load) to seed and check it."""
    settings = load_settings(environ=env, config_path=Path(env["TALLEI_CONFIG"]))
    no_keyring = keyring.backends.null.Keyring()  # type: ignore[no-untyped-call]
    secrets = SecretStore(settings.data_dir, passphrase=settings.passphrase, backend=no_keyring)
    svc = build_service(settings, secrets=secrets, background=False, preload_model=False)
    try:
        yield svc
    finally:
        svc.close()


def host_pids(env: dict[str, str]) -> list[int]:
    """The native hosts running on this test's store (found by their environment, not their name)."""
    mark = f"TALLEI_DATA_DIR={env['TALLEI_DATA_DIR']}".encode()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if b"native-host" not in (proc / "cmdline").read_bytes():
                continue
            if mark not in (proc / "environ").read_bytes().split(b"\0"):
                continue
            if (proc / "stat").read_text().split(")")[-1].split()[0] == "Z":
                continue
        except OSError:  # gone meanwhile, or not ours to read
            continue
        found.append(int(proc.name))
    return found


@dataclass
class Browser:
    context: BrowserContext
    worker: Worker
    port: int
    env: dict[str, str]
    profile: Path

    def page(self, url: str) -> Page:
        page = self.context.new_page()
        page.goto(url)
        return page

    def request(self, type: str, **fields: Any) -> dict[str, Any]:
        """One request to the host through the extension's own port."""
        reply: dict[str, Any] = self.worker.evaluate(
            "([type, fields]) => globalThis.talleiBackground.request(type, fields)", [type, fields]
        )
        return reply

    def set_site(self, platform: str, **settings: Any) -> None:
        self.worker.evaluate(
            "([p, s]) => globalThis.talleiShared.saveSiteSettings(p, s)", [platform, settings]
        )

    def popup(self, tab: Page) -> Page:
        """The toolbar popup, opened for ``tab`` (as a page: headless Chromium has no toolbar)."""
        url = tab.url
        found = self.worker.evaluate(
            "async (url) => (await chrome.tabs.query({})).find((t) => t.url === url)?.id", url
        )
        assert found is not None, f"no tab open at {url}"
        popup = self.context.new_page()
        popup.set_viewport_size({"width": 360, "height": 600})
        popup.goto(f"chrome-extension://{CHROMIUM_EXTENSION_ID}/popup/popup.html?tab={found}")
        popup.wait_for_selector("body[data-ready='true'], body[data-state]")
        return popup


SITES = {
    "chatgpt": ("https://chatgpt.com/", "#prompt-textarea", "[data-message-author-role='user']"),
    "claude": ("https://claude.ai/new", "fieldset .ProseMirror", "[data-testid='user-message']"),
    "gemini": ("https://gemini.google.com/app", "rich-textarea .ql-editor", "user-query .query-text"),
}


def chip_state(page: Page, role: str | None = None) -> tuple[str, str] | None:
    """The chip's kind and text, or None while it is hidden (``role="import"``: the import button)."""
    found: list[str] | None = page.evaluate(
        """(role) => {
            const host = [...document.querySelectorAll("tallei-chip")]
                .find((h) => (h.dataset.role || null) === role);
            if (!host || host.hidden) return null;
            return [host.dataset.kind, host.shadowRoot.querySelector(".text").textContent];
        }""",
        role,
    )
    return (found[0], found[1]) if found else None


def wait_for_chip(page: Page, kind: str, role: str | None = None) -> str:
    """Wait until the chip shows ``kind``; return its text."""
    state = wait_for(
        lambda: (s := chip_state(page, role)) is not None and s[0] == kind and s,
        what=f"the chip to show {kind!r} (it shows {chip_state(page, role)!r})",
    )
    return str(state[1])


@contextmanager
def launch(
    pw: Playwright, extension: Path, profile: Path, port: int, env: dict[str, str], *, register: bool = True
) -> Iterator[Browser]:
    """Chromium on its own profile with the extension loaded and (``register``) the host registered."""
    if register:
        write_host_manifest(profile / "NativeMessagingHosts", "chromium")
    rules = ", ".join(f"MAP {host}:443 127.0.0.1:{port}" for host in SITE_HOSTS)
    context = pw.chromium.launch_persistent_context(
        str(profile),
        executable_path=str(CHROMIUM),
        headless=True,
        env=env,
        args=[
            f"--load-extension={extension}",
            f"--disable-extensions-except={extension}",
            f"--host-resolver-rules={rules}",
            "--ignore-certificate-errors",
        ],
    )
    try:
        worker = (
            context.service_workers[0] if context.service_workers else context.wait_for_event("serviceworker")
        )
        assert CHROMIUM_EXTENSION_ID in worker.url, f"the extension has another id: {worker.url}"
        yield Browser(context, worker, port, env, profile)
    finally:
        context.close()


@pytest.fixture(scope="package")
def extension_builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_extension(tmp_path_factory.mktemp("extension"))


@pytest.fixture(scope="package")
def site_port() -> Iterator[int]:
    with serve_sites() as port:
        yield port


@pytest.fixture(scope="package")
def playwright_driver() -> Iterator[Playwright]:
    if not CHROMIUM.is_file():
        pytest.fail("Chromium is missing: install it with `apt-get install -y chromium`.")
    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="package")
def store_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    env = host_environment(tmp_path_factory.mktemp("tallei"))
    with open_store(env):  # creates the passphrase-guarded store before the host first opens it
        pass
    return env


@pytest.fixture(scope="package")
def session_browser(
    playwright_driver: Playwright,
    extension_builds: dict[str, Path],
    site_port: int,
    store_env: dict[str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Browser]:
    profile = tmp_path_factory.mktemp("profile")
    with launch(playwright_driver, extension_builds["chrome"], profile, site_port, store_env) as browser:
        yield browser
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def browser(session_browser: Browser) -> Iterator[Browser]:
    """The shared browser, with default site settings, no paused site and no page left open."""
    session_browser.worker.evaluate("() => chrome.storage.local.clear()")
    for platform in ("chatgpt", "claude", "gemini"):
        reply = session_browser.request("pause", platform=platform, paused=False)
        assert reply["ok"], reply
    yield session_browser
    for page in session_browser.context.pages[1:]:  # the first keeps the browser open
        page.close()
