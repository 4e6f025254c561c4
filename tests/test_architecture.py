"""Dependencies point one way: cli -> gui | mcp_server -> core. Checked on the source with ast."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tallei_desktop"

FORBIDDEN = {
    "core": (
        "PySide6",
        "qasync",
        "mcp",
        "starlette",
        "uvicorn",
        "tallei_desktop.gui",
        "tallei_desktop.mcp_server",
        "tallei_desktop.cli",
        "tallei_desktop.config",
        "tallei_desktop.factory",
    ),
    "mcp_server": ("PySide6", "qasync", "tallei_desktop.gui", "tallei_desktop.cli"),
    "gui": ("tallei_desktop.cli",),
}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _modules(sub: str) -> list[Path]:
    return sorted((PACKAGE / sub).rglob("*.py"))


@pytest.mark.parametrize("sub", sorted(FORBIDDEN))
def test_layer_imports_stay_inside_their_bounds(sub: str) -> None:
    bad = [
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in _modules(sub)
        for name in sorted(_imports(path))
        if any(name == f or name.startswith(f + ".") for f in FORBIDDEN[sub])
    ]
    assert not bad, "\n".join(bad)


def test_core_has_modules_to_check() -> None:
    assert len(_modules("core")) >= 10


def test_only_keys_imports_keyring_and_only_config_reads_the_environment() -> None:
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(PACKAGE).as_posix()
        if "keyring" in _imports(path) or any(n.startswith("keyring.") for n in _imports(path)):
            assert rel == "core/keys.py", f"{rel} imports keyring"
        if "os.environ" in text or "os.getenv" in text:
            assert rel == "config.py", f"{rel} reads the environment"


def test_only_the_store_imports_apsw() -> None:
    """The store owns every SQL statement; the rest of the program only passes its connection on."""
    offenders = [
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if any(name == "apsw" or name.startswith("apsw.") for name in _imports(path))
        and not path.relative_to(PACKAGE).as_posix().startswith("core/store/")
    ]
    assert not offenders, f"apsw imported outside core/store/: {offenders}"


def test_no_sql_outside_the_store() -> None:
    sql = re.compile(r"\b(SELECT .+ FROM|INSERT INTO|UPDATE \w+ SET|DELETE FROM)\b", re.IGNORECASE)
    offenders = [
        f"{path.relative_to(PACKAGE).as_posix()}:{node.lineno}"
        for path in PACKAGE.rglob("*.py")
        if not path.relative_to(PACKAGE).as_posix().startswith("core/store/")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and sql.search(node.value)
    ]
    assert not offenders, f"SQL outside core/store/: {offenders}"
