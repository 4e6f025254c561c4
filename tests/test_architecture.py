"""Dependencies point one way: cli -> gui | mcp_server | app -> core. Checked on the source with ast,
and on a real ``tallei-desktop mcp`` process."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

import tallei_desktop.core
from tests.mcp_server.rawstdio import RawStdio, tool_result

PACKAGE = Path(__file__).resolve().parent.parent / "tallei_desktop"

QT = ("PySide6", "shiboken6", "qasync")


def _sdk_modules() -> tuple[str, ...]:
    """Every top-level module the MCP SDK installs (``mcp``, ``mcp_types``, …), read from its metadata."""
    found = {
        module
        for module, dists in packages_distributions().items()
        if any(d.lower() == "mcp" or d.lower().startswith("mcp-") for d in dists)
    }
    return tuple(sorted(found))


#: The SDK and the web stack its transports run on.
MCP = (*_sdk_modules(), "starlette", "sse_starlette", "uvicorn", "httpx2")

FORBIDDEN = {
    "core": (
        *QT,
        *MCP,
        "pydantic",
        "pydantic_core",
        "anyio",
        "tallei_desktop.gui",
        "tallei_desktop.mcp_server",
        "tallei_desktop.app",
        "tallei_desktop.cli",
        "tallei_desktop.config",
        "tallei_desktop.factory",
    ),
    "app": (*QT, *MCP, "tallei_desktop.gui", "tallei_desktop.mcp_server", "tallei_desktop.cli"),
    "mcp_server": (*QT, "tallei_desktop.gui", "tallei_desktop.cli"),
    "native_host": (*QT, *MCP, "tallei_desktop.gui", "tallei_desktop.mcp_server", "tallei_desktop.cli"),
    "gui": ("tallei_desktop.cli",),
}

#: The modules that use the engine through its door, ``tallei_desktop.core``, and nothing deeper.
FRONT_ENDS = ("cli.py", "factory.py", "app", "mcp_server", "native_host", "gui")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(path: Path, node: ast.ImportFrom) -> str:
    """The absolute module a ``from`` import names, resolving ``from .x import y`` against ``path``."""
    if node.level == 0:
        return node.module or ""
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, relative imports resolved (``from . import x`` counts as ``pkg.x``)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(path, node)
            names.add(module)
            if node.level and not node.module:
                names.update(f"{module}.{alias.name}" for alias in node.names)
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
        if rel == "__init__.py":
            # The package's first import sets numpy's BLAS threads before numpy loads; no setting.
            assert text.count("os.environ") == 1 and 'os.environ.setdefault("OPENBLAS_NUM_THREADS"' in text
        elif "os.environ" in text or "os.getenv" in text:
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


def test_the_forbidden_lists_name_the_whole_sdk() -> None:
    assert {"mcp", "mcp_types"} <= set(_sdk_modules())


def test_relative_imports_are_resolved(tmp_path: Path) -> None:
    inner = PACKAGE / "core" / "store" / "database.py"
    tree = ast.parse("from ..models import Memory\nfrom . import queries\nfrom .connection import x\n")
    resolved = {_absolute(inner, node) for node in tree.body if isinstance(node, ast.ImportFrom)}
    assert resolved == {
        "tallei_desktop.core.models",
        "tallei_desktop.core.store",
        "tallei_desktop.core.store.connection",
    }
    door = PACKAGE / "core" / "__init__.py"
    [node] = ast.parse("from .service import MemoryService").body
    assert isinstance(node, ast.ImportFrom) and _absolute(door, node) == "tallei_desktop.core.service"


def _front_end_modules() -> list[Path]:
    paths: list[Path] = []
    for name in FRONT_ENDS:
        target = PACKAGE / name
        paths.extend([target] if target.is_file() else sorted(target.rglob("*.py")))
    return paths


def test_front_ends_use_the_engine_only_through_its_door() -> None:
    public = set(tallei_desktop.core.__all__)
    bad: list[str] = []
    modules = _front_end_modules()
    assert len(modules) >= 10
    for path in modules:
        rel = path.relative_to(PACKAGE)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                bad += [
                    f"{rel} imports {a.name}" for a in node.names if a.name.startswith("tallei_desktop.core.")
                ]
            elif isinstance(node, ast.ImportFrom):
                module = _absolute(path, node)
                if module.startswith("tallei_desktop.core."):
                    bad.append(f"{rel} imports {module}")
                elif module == "tallei_desktop.core":
                    bad += [
                        f"{rel} imports {a.name} from the core, which does not export it"
                        for a in node.names
                        if a.name not in public
                    ]
    assert not bad, "\n".join(bad)


def test_every_name_the_core_exports_exists() -> None:
    missing = [name for name in tallei_desktop.core.__all__ if not hasattr(tallei_desktop.core, name)]
    assert not missing


#: Runs ``python -m tallei_desktop ARGS…`` unchanged, then writes the names in ``sys.modules`` at exit
#: to the file named by the first argument: every module the process loaded, on any thread.
_RUN_AND_LIST_MODULES = """
import atexit, runpy, sys
out = sys.argv.pop(1)
def _write():
    with open(out, "w", encoding="utf-8") as f:
        f.write("\\n".join(sorted(sys.modules)))
atexit.register(_write)
sys.argv[0] = "tallei_desktop"
runpy.run_module("tallei_desktop", run_name="__main__", alter_sys=True)
"""


@pytest.mark.slow
def test_a_real_mcp_process_never_loads_qt(tmp_path: Path, model_dir: Path) -> None:
    """``tallei-desktop mcp`` through a whole session, model load included, then a look at what it loaded."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TALLEI_")}
    env.update(
        TALLEI_DATA_DIR=str(tmp_path / "data"),
        TALLEI_LOG_DIR=str(tmp_path / "logs"),
        TALLEI_PASSPHRASE="correct horse battery staple",
        TALLEI_MODEL_DIR=str(model_dir),
        TALLEI_CONFIG=str(tmp_path / "absent.toml"),
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
    )
    modules_file = tmp_path / "modules.txt"
    command = [sys.executable, "-c", _RUN_AND_LIST_MODULES, str(modules_file), "mcp"]
    with (tmp_path / "stderr.log").open("w") as stderr:
        server = RawStdio(env, stderr, command=command)
        try:
            server.initialize()
            tool_result(server.response(server.call_tool("save_memory", {"content": "I prefer tea"})))
            recalled = server.response(server.call_tool("recall_memories", {"query": "drinks"}))
        finally:
            server.close_stdin()
            code = server.wait()
    assert code == 0, (tmp_path / "stderr.log").read_text(encoding="utf-8")[-2000:]
    [block] = recalled["result"]["content"]
    assert "I prefer tea" in block["text"]
    assert "Semantic search is off" not in block["text"]  # the model was loaded too, onnxruntime and all
    loaded = set(modules_file.read_text(encoding="utf-8").split())
    assert {"tallei_desktop.mcp_server.tools", "tallei_desktop.core.service", "mcp", "onnxruntime"} <= loaded
    qt = sorted(m for m in loaded if m.split(".")[0] in QT)
    assert not qt, f"tallei-desktop mcp loaded {qt}"


@pytest.mark.slow
def test_a_real_native_host_process_never_loads_qt(tmp_path: Path, model_dir: Path) -> None:
    """``tallei-desktop native-host`` through a save and a recall, model load included, then a look at
    what it loaded."""
    from tests.native_host.host import ORIGIN, NativeHost

    env = {k: v for k, v in os.environ.items() if not k.startswith("TALLEI_")}
    env.update(
        TALLEI_DATA_DIR=str(tmp_path / "data"),
        TALLEI_LOG_DIR=str(tmp_path / "logs"),
        TALLEI_PASSPHRASE="correct horse battery staple",
        TALLEI_MODEL_DIR=str(model_dir),
        TALLEI_CONFIG=str(tmp_path / "absent.toml"),
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
    )
    modules_file = tmp_path / "modules.txt"
    command = [sys.executable, "-c", _RUN_AND_LIST_MODULES, str(modules_file), "native-host", ORIGIN]
    with NativeHost(env, tmp_path / "stderr.log", command=command) as host:
        saved = host.ask(
            {"type": "save", "platform": "claude", "content": "I prefer tea", "source": "selection"}
        )
        assert saved["ok"], saved
        recalled = host.ask({"type": "recall", "platform": "claude", "draft": "drinks"})
        code = host.finish()
    assert code == 0, host.stderr_tail()
    assert "I prefer tea" in recalled["block"]
    loaded = set(modules_file.read_text(encoding="utf-8").split())
    assert {"tallei_desktop.native_host.dispatch", "tallei_desktop.core.service", "onnxruntime"} <= loaded
    qt = sorted(m for m in loaded if m.split(".")[0] in QT)
    assert not qt, f"tallei-desktop native-host loaded {qt}"


def test_the_core_door_and_the_mcp_command_start_without_heavy_imports() -> None:
    """``tallei-desktop mcp`` answers its client before the store and the SDK are loaded: importing the
    door, the CLI and the command's entry module must not pull in numpy, apsw, keys or the SDK."""
    heavy = ("numpy", "apsw", "sqlite_vec", "keyring", "cryptography", "fastembed", "pydantic", "anyio", *MCP)
    code = (
        "import sys, tallei_desktop.core, tallei_desktop.cli, tallei_desktop.mcp_server.entry\n"
        "from tallei_desktop.core import KnownError, Memory\n"
        f"print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}} & {set(heavy)!r})))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == []


def test_a_lazy_name_of_the_door_is_the_inner_modules_object() -> None:
    code = (
        "import sys, tallei_desktop.core as core\n"
        "assert 'numpy' not in sys.modules\n"
        "from tallei_desktop.core.service import MemoryService\n"
        "assert core.MemoryService is MemoryService and 'MemoryService' in dir(core)\n"
        "try:\n    core.NoSuchName\nexcept AttributeError as e:\n    print(e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "has no attribute 'NoSuchName'" in done.stdout


def test_a_tallei_process_runs_numpy_on_one_blas_thread_unless_told_otherwise() -> None:
    """OpenBLAS reads OPENBLAS_NUM_THREADS when numpy loads it, so the package sets it first."""
    code = (
        "import os, sys, tallei_desktop.core.service\n"
        "assert 'numpy' in sys.modules\n"
        "print(os.environ['OPENBLAS_NUM_THREADS'])"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    for given, expected in ((None, "1"), ("3", "3")):
        run_env = env if given is None else {**env, "OPENBLAS_NUM_THREADS": given}
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=run_env
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == expected
