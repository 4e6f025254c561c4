"""Build the extension for Chromium-family browsers and for Firefox from the one source in extension/.

Writes <out>/chrome-unpacked, <out>/firefox-unpacked, <out>/tallei-chrome.zip and
<out>/tallei-firefox.xpi. The archives are deterministic: the same source gives the same bytes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

SOURCE = Path(__file__).resolve().parent / "extension"
GECKO_ID = "tallei@tallei.app"
# Firefox 128 is the ESR line with MV3 background scripts, menus and native messaging.
GECKO_MIN_VERSION = "128.0"
_EPOCH = (1980, 1, 1, 0, 0, 0)


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))


def firefox_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    """Firefox's variant: its own id, background scripts instead of a service worker, no Chromium key."""
    out = {k: v for k, v in manifest.items() if k != "key"}
    out["background"] = {"scripts": ["shared.js", manifest["background"]["service_worker"]]}
    out["browser_specific_settings"] = {
        "gecko": {
            "id": GECKO_ID,
            "strict_min_version": GECKO_MIN_VERSION,
            "data_collection_permissions": {"required": ["none"]},
        }
    }
    return out


def _write_tree(target: Path, manifest: dict[str, Any]) -> None:
    if target.exists():
        shutil.rmtree(target)
    for path in _files(SOURCE):
        rel = path.relative_to(SOURCE)
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if rel.as_posix() == "manifest.json":
            dest.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        else:
            shutil.copyfile(path, dest)


def _zip(folder: Path, archive: Path) -> None:
    archive.unlink(missing_ok=True)
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in _files(folder):
            info = zipfile.ZipInfo(path.relative_to(folder).as_posix(), date_time=_EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, path.read_bytes(), compresslevel=9)


def build(out: Path) -> dict[str, Path]:
    manifest = json.loads((SOURCE / "manifest.json").read_text(encoding="utf-8"))
    out.mkdir(parents=True, exist_ok=True)
    made = {
        "chrome": out / "chrome-unpacked",
        "firefox": out / "firefox-unpacked",
        "chrome_zip": out / "tallei-chrome.zip",
        "firefox_xpi": out / "tallei-firefox.xpi",
    }
    _write_tree(made["chrome"], manifest)
    _write_tree(made["firefox"], firefox_manifest(manifest))
    _zip(made["chrome"], made["chrome_zip"])
    _zip(made["firefox"], made["firefox_xpi"])
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "dist")
    args = parser.parse_args()
    for path in build(args.out).values():
        print(path)


if __name__ == "__main__":
    main()
