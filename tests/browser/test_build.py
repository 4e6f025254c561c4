"""The packages `make extension` builds: deterministic, the contract's ids, and Firefox's build passes web-ext lint."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from tallei_desktop.app.browsers import CHROMIUM_EXTENSION_ID, FIREFOX_EXTENSION_ID, HOST_NAME
from tests.browser.conftest import REPO_ROOT, build_extension

pytestmark = pytest.mark.browser
BROWSER_DIR = REPO_ROOT / "browser"


def test_builds_are_byte_for_byte_the_same(tmp_path: Path, extension_builds: dict[str, Path]) -> None:
    again = build_extension(tmp_path)
    for name in ("chrome_zip", "firefox_xpi"):
        assert again[name].read_bytes() == extension_builds[name].read_bytes(), name


def test_chrome_key_gives_the_contracts_extension_id(extension_builds: dict[str, Path]) -> None:
    manifest = json.loads((extension_builds["chrome"] / "manifest.json").read_text())
    digest = hashlib.sha256(base64.b64decode(manifest["key"])).hexdigest()[:32]
    assert "".join(chr(ord("a") + int(c, 16)) for c in digest) == CHROMIUM_EXTENSION_ID
    assert manifest["background"] == {"service_worker": "background.js"}
    assert "nativeMessaging" in manifest["permissions"]
    source = (REPO_ROOT / "browser" / "extension" / "background.js").read_text()
    assert f'const HOST = "{HOST_NAME}";' in source


def test_firefox_build_has_its_id_and_background_scripts(extension_builds: dict[str, Path]) -> None:
    with zipfile.ZipFile(extension_builds["firefox_xpi"]) as xpi:
        manifest = json.loads(xpi.read("manifest.json"))
        names = set(xpi.namelist())
    assert manifest["browser_specific_settings"]["gecko"]["id"] == FIREFOX_EXTENSION_ID
    assert manifest["background"] == {"scripts": ["shared.js", "background.js"]}
    assert "key" not in manifest
    for script in ("content/main.js", "content/sites/chatgpt.js", "popup/popup.html", "icons/tallei-48.png"):
        assert script in names


def _web_ext() -> Path:
    tool = BROWSER_DIR / "node_modules" / ".bin" / "web-ext"
    if not tool.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("npm is missing: install Node.js (npm) to lint the Firefox build.")
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=BROWSER_DIR,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"npm ci in browser/ failed:\n{done.stderr[-2000:]}"
    return tool


def test_web_ext_lint_passes_the_firefox_build(extension_builds: dict[str, Path]) -> None:
    done = subprocess.run(
        [
            str(_web_ext()),
            "lint",
            "--source-dir",
            str(extension_builds["firefox"]),
            "--output",
            "json",
            "--no-input",
        ],
        cwd=BROWSER_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(done.stdout)
    problems = [
        f"{m['code']}: {m['message']} ({m.get('file')})" for m in report["errors"] + report["warnings"]
    ]
    assert problems == [], "\n".join(problems)
    assert done.returncode == 0
