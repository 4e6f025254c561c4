"""End-to-end benchmark of the MCP server: tool round trips through the SDK's own clients.

    python bench/bench_mcp.py [--size 10000] [--quick] [--out bench/results/mcp.json]
                              [--baseline DIR] [--store DIR]

It builds one encrypted store of ``--size`` realistic memories in a temporary folder (passphrase key
path, never the OS keyring) by calling ``MemoryService.save``, lets the real background worker embed
all of them, and closes it. Then, against that store, with the real embedding model:

* stdio cold start: ``tallei-desktop mcp`` is spawned afresh by the SDK's stdio client, several
  times; each time is measured from the spawn to the answer to ``initialize``, and to the first tool
  result (``memory_status``, which needs the store open);
* stdio round trips: one long-lived ``tallei-desktop mcp`` process and one client session;
* HTTP round trips: ``tallei-desktop serve`` on a free loopback port and the SDK's Streamable HTTP
  client with the bearer token that ``tallei-desktop token`` prints.

Each round-trip session first waits (untimed) until its server has loaded the model and has no
background work left, so what is measured is the steady state. Then:

* ``save_memory``: distinct new memories, one at a time, the server's worker idle before each;
* ``recall_memories`` warm: one query repeated (the server's recall cache);
* ``recall_memories`` cold: distinct queries never asked before, query embedding included.

* ``recall_memories`` on an empty store: the same call with nothing to return, the floor that the
  SDK's client and server and the transport set.

Client and server share this machine's CPUs. It prints a table and writes the raw figures as JSON.
``--quick`` keeps the store size and cuts the repetitions.

``--baseline DIR`` measures another source tree of Tallei side by side with this one (for example
main, unpacked with ``git archive main | tar -x -C DIR``): each program gets its own copy of the same
store, the cold starts alternate, and the round-trip sessions of both are open at once and take
turns call by call, so that a busy machine slows both alike. ``--store DIR`` keeps the built store
in DIR and reuses it on the next run (a 10,000-memory store takes minutes to embed).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, TextIO

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

import anyio  # noqa: E402
import httpx2  # noqa: E402
import keyring.backends.null  # noqa: E402
from common import resolve_model_dir, revision, say, summary, write_report  # noqa: E402
from corpus import TYPES, Corpus, CorpusMemory  # noqa: E402
from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp_types import CallToolResult, Implementation, TextContent  # noqa: E402

from tallei_desktop import __version__ as tallei_version  # noqa: E402
from tallei_desktop.config import load_settings  # noqa: E402
from tallei_desktop.core.keys import SecretStore  # noqa: E402
from tallei_desktop.factory import build_embedder, build_service  # noqa: E402

DEFAULT_SIZE = 10_000
DEFAULT_OUT = BENCH_DIR / "results" / "mcp.json"
PASSPHRASE = "benchmark passphrase"
SEED = 20_240_601
#: What the SDK clients send as clientInfo: Claude Desktop over stdio, ChatGPT over HTTP.
STDIO_CLIENT = "claude-ai"
HTTP_CLIENT = "openai-mcp"
#: The longest any single wait (a process, a tool call, a settling server) may take.
TIMEOUT_S = 120.0
#: How often a settling server is asked whether it is idle.
POLL_S = 0.02
#: Untimed calls of each kind before measuring, so one-off first-call costs stay out.
WARMUP = 3


@dataclass(frozen=True, slots=True)
class Reps:
    cold_starts: int
    save: int
    warm: int
    cold: int


FULL_REPS = Reps(cold_starts=10, save=200, warm=200, cold=50)
QUICK_REPS = Reps(cold_starts=5, save=50, warm=50, cold=20)


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# -- the store -----------------------------------------------------------------------------------------


def process_env(workdir: Path, model_dir: Path) -> dict[str, str]:
    """The environment every Tallei process of this run gets: the store in ``workdir``, the real model."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TALLEI_")}
    env.update(
        TALLEI_DATA_DIR=str(workdir / "data"),
        TALLEI_LOG_DIR=str(workdir / "logs"),
        TALLEI_PASSPHRASE=PASSPHRASE,
        TALLEI_MODEL_DIR=str(model_dir),
        TALLEI_ALLOW_MODEL_DOWNLOAD="false",
        TALLEI_CONFIG=str(workdir / "absent.toml"),
        # The key goes into a passphrase-guarded file, never into the person's own keyring.
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
    )
    return env


def build_store(env: dict[str, str], memories: Sequence[CorpusMemory]) -> dict[str, Any]:
    """Save ``memories`` through ``MemoryService.save``, then let the real worker embed every one."""
    settings = load_settings(environ=env, config_path=Path(env["TALLEI_CONFIG"]))
    no_keyring = keyring.backends.null.Keyring()  # type: ignore[no-untyped-call]
    secrets = SecretStore(settings.data_dir, passphrase=settings.passphrase, backend=no_keyring)
    embedder = build_embedder(settings)
    service = build_service(
        settings, embedder=embedder, secrets=secrets, background=False, preload_model=False
    )
    try:
        say(f"saving {len(memories):,} memories through save()")
        t0 = time.perf_counter()
        for m in memories:
            service.save(m.content, type=m.type, platform=m.platform, occurred_at=m.occurred_at)
        build_s = time.perf_counter() - t0
        pending = service.status().pending_embeddings
        say(f"saved in {build_s:.1f} s; embedding {pending:,} memories")
        t0 = time.perf_counter()
        embedder.load()
        service.start_background()
        while not service.wait_idle(timeout=30.0):
            if time.perf_counter() - t0 > 3600:
                raise RuntimeError("the worker did not finish embedding the store within an hour")
            say(f"embedded {pending - service.status().pending_embeddings:,}/{pending:,}")
        drain_s = time.perf_counter() - t0
        status = service.status()
        if status.pending_embeddings:
            raise RuntimeError(f"{status.pending_embeddings} memories still pending after the drain")
        say(f"embedded in {drain_s:.1f} s")
        size = sum(p.stat().st_size for p in settings.data_dir.glob("tallei.db*"))
        return {
            "memories_saved": len(memories),
            "build_s": round(build_s, 2),
            "drain_s": round(drain_s, 2),
            "active": sum(status.counts.values()),
            "active_per_bucket": status.counts,
            "open_conflicts": status.open_conflicts,
            "file_mb": round(size / 2**20, 1),
        }
    finally:
        service.close()


# -- the servers and clients ---------------------------------------------------------------------------


def tallei_command(*args: str, source: Path | None = None) -> list[str]:
    """The program as clients launch it: the console script beside this Python, else ``-m``; with
    ``source``, that source tree's program (``-m`` with ``source`` on ``PYTHONPATH``, see ``Program``)."""
    script = Path(sys.executable).absolute().parent / "tallei-desktop"
    if source is None and script.is_file() and os.access(script, os.X_OK):
        return [str(script), *args]
    return [sys.executable, "-m", "tallei_desktop", *args]


@dataclass(frozen=True, slots=True)
class Program:
    """One version of Tallei under measurement: this checkout, or another source tree of it."""

    label: str
    source: Path | None = None

    def env(self, env: dict[str, str]) -> dict[str, str]:
        if self.source is None:
            return env
        # Ahead of the installed (editable) package, so that `-m tallei_desktop` is the other tree's.
        return {**env, "PYTHONPATH": str(self.source)}

    def command(self, *args: str) -> list[str]:
        return tallei_command(*args, source=self.source)

    @property
    def cwd(self) -> Path | None:
        """Where to start it: `-m` puts the working folder first on the path, ahead of PYTHONPATH."""
        return self.source


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


async def timed_call(client: Client, tool: str, arguments: dict[str, Any]) -> tuple[float, CallToolResult]:
    """One tool call's round trip in seconds, and its result; a tool error raises."""
    t0 = time.perf_counter()
    result = await client.call_tool(tool, arguments)
    dt = time.perf_counter() - t0
    if result.is_error or (result.structured_content is None and not text_of(result)):
        raise RuntimeError(f"{tool} failed: {text_of(result)}")
    return dt, result


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    content: dict[str, Any] = (await timed_call(client, tool, arguments))[1].structured_content or {}
    return content


class Samples:
    """One kind of round trip: its times, and for each result the share a Python client spends alone.

    The SDK's client checks every structured result against the tool's output schema with
    ``jsonschema`` before handing it over, which for a recall of a hundred or more memories is much of
    the round trip. The same check is timed again here, apart, so that the table can tell the
    client's cost from the server's and the transport's. Hosts built on other SDKs check differently.
    A tool without an output schema (``recall_memories`` answers with its text block alone) is not
    checked, and its validation share is zero.
    """

    def __init__(self, validator: Any | None) -> None:
        self._validator = validator
        self.round_trip: list[float] = []
        self.validation: list[float] = []
        self.result_bytes: list[int] = []
        #: The structured result's compact JSON over the text block, in UTF-8 bytes.
        self.structured_ratio: list[float] = []

    def add(self, seconds: float, result: CallToolResult) -> None:
        self.round_trip.append(seconds)
        t0 = time.perf_counter()
        errors = (
            [] if self._validator is None else list(self._validator.iter_errors(result.structured_content))
        )
        self.validation.append(time.perf_counter() - t0 if self._validator is not None else 0.0)
        if errors:
            raise RuntimeError(f"a result does not match its output schema: {errors[0].message}")
        self.result_bytes.append(len(result.model_dump_json(by_alias=True, exclude_unset=True)))
        text = text_of(result).encode()
        if text and result.structured_content is not None:
            wire = json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":"))
            self.structured_ratio.append(len(wire.encode()) / len(text))

    def report(self) -> dict[str, Any]:
        return {
            **summary(self.round_trip),
            "client_schema_validation": summary(self.validation),
            "result_bytes_p50": statistics.median(self.result_bytes) if self.result_bytes else None,
            "structured_to_text_p50": (
                round(statistics.median(self.structured_ratio), 3) if self.structured_ratio else None
            ),
        }


async def output_validators(client: Client) -> dict[str, Any]:
    """A compiled output-schema validator per tool, as the SDK's client builds them."""
    from jsonschema.validators import validator_for  # type: ignore[import-untyped,unused-ignore]

    validators: dict[str, Any] = {}
    for tool in (await client.list_tools()).tools:
        if tool.output_schema is not None:
            validators[tool.name] = validator_for(tool.output_schema)(tool.output_schema)
    return validators


def recall_summary(result: CallToolResult) -> tuple[str, bool, int]:
    """A recall's long-term mode, whether semantic search was on, and how many memories it shows:
    from its structured result where it has one, else from its text block (what the text says)."""
    recall = result.structured_content
    if recall is not None:
        shown = sum(len(recall[k]) for k in ("preferences", "long_term", "short_term", "more"))
        return str(recall["long_term_mode"]), bool(recall["semantic_search"]), shown
    text = text_of(result)
    mode = "hybrid" if "Only the most relevant are shown" in text else "dump_all"
    shown = sum(line.startswith("- [") for line in text.splitlines())
    return mode, "Semantic search is off" not in text, shown


def stdio_transport(program: Program, env: dict[str, str], errlog: TextIO) -> Any:
    command, *args = program.command("mcp")
    return stdio_client(
        StdioServerParameters(command=command, args=args, env=program.env(env), cwd=program.cwd),
        errlog=errlog,
    )


@asynccontextmanager
async def stdio_session(program: Program, env: dict[str, str], errlog: TextIO) -> AsyncIterator[Client]:
    async with Client(
        stdio_transport(program, env, errlog),
        mode="legacy",
        client_info=Implementation(name=STDIO_CLIENT, version="1.0"),
        read_timeout_seconds=TIMEOUT_S,
    ) as client:
        yield client


@asynccontextmanager
async def http_session(url: str, token: str) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT_S) as http,
        Client(
            streamable_http_client(url, http_client=http),
            mode="legacy",
            client_info=Implementation(name=HTTP_CLIENT, version="1.0"),
            read_timeout_seconds=TIMEOUT_S,
        ) as client,
    ):
        yield client


def read_line(stream: IO[str], timeout: float) -> str:
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    if not box:
        raise RuntimeError(f"no output line within {timeout:.0f} s")
    return box[0]


@contextlib.contextmanager
def serve_process(program: Program, env: dict[str, str], errlog: TextIO) -> Iterator[str]:
    """``tallei-desktop serve`` on a free loopback port; yields its MCP URL once it listens."""
    proc = subprocess.Popen(
        # Port 0: the server takes a free port and says which in its first line.
        program.command("serve", "--host", "127.0.0.1", "--port", "0"),
        env=program.env(env),
        cwd=program.cwd,
        stdout=subprocess.PIPE,
        stderr=errlog,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = read_line(proc.stdout, TIMEOUT_S)
        if not line.startswith("Serving MCP at http://127.0.0.1:"):
            raise RuntimeError(f"`serve` did not start: {line!r}")
        yield line.split()[-1]
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(TIMEOUT_S)


def token_of(program: Program, env: dict[str, str]) -> str:
    done = subprocess.run(
        program.command("token"),
        env=program.env(env),
        cwd=program.cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"`tallei-desktop token` failed: {done.stderr.strip()}")
    return done.stdout.strip()


def logs_tail(env: dict[str, str], errlog: Path, lines: int = 30) -> str:
    parts = []
    for path in (errlog, Path(env["TALLEI_LOG_DIR"]) / "mcp.log", Path(env["TALLEI_LOG_DIR"]) / "serve.log"):
        if path.is_file():
            tail = path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
            parts.append(f"--- {path.name}\n" + "\n".join(tail))
    return "\n".join(parts)


# -- measurements --------------------------------------------------------------------------------------


async def measure_cold_starts(
    programs: Sequence[tuple[Program, dict[str, str]]], errlog: TextIO, n: int
) -> dict[str, dict[str, Any]]:
    """Spawn ``tallei-desktop mcp`` ``n`` times per program, the programs taking turns; time spawn →
    initialize and spawn → first tool result."""
    to_initialize: dict[str, list[float]] = {p.label: [] for p, _ in programs}
    to_first_tool: dict[str, list[float]] = {p.label: [] for p, _ in programs}
    for i in range(n):
        for program, env in programs:
            t0 = time.perf_counter()
            client = Client(
                stdio_transport(program, env, errlog),
                mode="legacy",
                client_info=Implementation(name=STDIO_CLIENT, version="1.0"),
                read_timeout_seconds=TIMEOUT_S,
            )
            # Entering spawns the process and completes the initialize handshake.
            async with client:
                to_initialize[program.label].append(time.perf_counter() - t0)
                await call(client, "memory_status", {})
                to_first_tool[program.label].append(time.perf_counter() - t0)
            say(
                f"{program.label} cold start {i + 1}/{n}: initialize {to_initialize[program.label][-1] * 1e3:.0f} ms"
            )
    return {
        label: {
            "initialize": summary(to_initialize[label]),
            "first_tool_result": summary(to_first_tool[label]),
        }
        for label in to_initialize
    }


async def settle(client: Client) -> dict[str, Any]:
    """Wait (untimed) until the server has its model loaded and no background work left."""
    with anyio.fail_after(TIMEOUT_S):
        while True:
            status = await call(client, "memory_status", {})
            if status["pending_background_work"] == 0 and status["model_state"].startswith("ready"):
                return status
            await anyio.sleep(POLL_S)


def save_arguments(m: CorpusMemory) -> dict[str, Any]:
    # The type is left to the server's classifier, as when an assistant does not name one.
    arguments: dict[str, Any] = {"content": m.content}
    if m.occurred_at is not None:
        arguments["occurred_at"] = m.occurred_at.isoformat()
    return arguments


async def measure_round_trips(
    clients: Sequence[tuple[str, Client]], corpus: Corpus, reps: Reps, transport: str
) -> dict[str, dict[str, Any]]:
    """save_memory (worker idle before each), recall_memories warm and cold, on settled servers.

    With several clients (one per program), each call is made by every client in turn."""
    saves = corpus.only(WARMUP + reps.save, TYPES, salt=f"mcp-saves-{transport}")
    queries = corpus.queries(WARMUP + 1 + reps.cold, salt=f"mcp-{transport}")
    warmup_queries, warm_query, cold_queries = queries[:WARMUP], queries[WARMUP], queries[WARMUP + 1 :]
    labels = [label for label, _ in clients]
    validators = {label: await output_validators(client) for label, client in clients}

    before = {label: await settle(client) for label, client in clients}
    for _, client in clients:
        for m in saves[:WARMUP]:
            await call(client, "save_memory", save_arguments(m))
        for q in warmup_queries:
            await call(client, "recall_memories", {"query": q})
        await settle(client)

    say(f"{transport}: save_memory x{reps.save}")
    load_start = loadavg()
    saved = {label: Samples(validators[label]["save_memory"]) for label in labels}
    confirmed = dict.fromkeys(labels, 0)
    for m in saves[WARMUP:]:
        for label, client in clients:
            dt, result = await timed_call(client, "save_memory", save_arguments(m))
            saved[label].add(dt, result)
            confirmed[label] += bool((result.structured_content or {}).get("confirmed_existing"))
            await settle(client)

    say(f"{transport}: recall_memories warm x{reps.warm}")
    warm = {label: Samples(validators[label].get("recall_memories")) for label in labels}
    for _, client in clients:
        await call(client, "recall_memories", {"query": warm_query})
    for _ in range(reps.warm):
        for label, client in clients:
            warm[label].add(*await timed_call(client, "recall_memories", {"query": warm_query}))

    say(f"{transport}: recall_memories cold x{reps.cold}")
    cold = {label: Samples(validators[label].get("recall_memories")) for label in labels}
    modes = {label: Counter[str]() for label in labels}
    semantic = dict.fromkeys(labels, 0)
    items: dict[str, list[int]] = {label: [] for label in labels}
    for q in cold_queries:
        for label, client in clients:
            dt, result = await timed_call(client, "recall_memories", {"query": q})
            cold[label].add(dt, result)
            mode, semantic_on, shown = recall_summary(result)
            modes[label][mode] += 1
            semantic[label] += semantic_on
            items[label].append(shown)
    after = {label: await settle(client) for label, client in clients}
    load_end = loadavg()
    return {
        label: {
            "active_before": sum(before[label]["counts"].values()),
            "active_after": sum(after[label]["counts"].values()),
            "model_state": after[label]["model_state"],
            "save_memory": {**saved[label].report(), "confirmed_existing": confirmed[label]},
            "recall_warm": {**warm[label].report(), "query": warm_query},
            "recall_cold": {
                **cold[label].report(),
                "long_term_modes": dict(modes[label]),
                "semantic": semantic[label],
                "items_per_recall_p50": statistics.median(items[label]) if items[label] else None,
            },
            # This benchmark's own clients and servers included.
            "loadavg_during": [*load_start, *load_end],
        }
        for label in labels
    }


async def measure_empty_recall(
    programs: Sequence[tuple[Program, dict[str, str]]], errlog: TextIO, reps: Reps
) -> dict[str, dict[str, Any]]:
    """recall_memories warm on an empty store, the programs taking turns: what a round trip costs
    with nothing to return."""
    async with contextlib.AsyncExitStack() as stack:
        clients = [
            (program.label, await stack.enter_async_context(stdio_session(program, env, errlog)))
            for program, env in programs
        ]
        validators = {label: await output_validators(client) for label, client in clients}
        samples = {label: Samples(validators[label].get("recall_memories")) for label, _ in clients}
        for _, client in clients:
            await settle(client)
            await call(client, "recall_memories", {"query": ""})
        for _ in range(reps.warm):
            for label, client in clients:
                samples[label].add(*await timed_call(client, "recall_memories", {"query": ""}))
    return {label: s.report() for label, s in samples.items()}


async def bench_stdio(
    programs: Sequence[tuple[Program, dict[str, str]]], errlog: TextIO, corpus: Corpus, reps: Reps
) -> dict[str, dict[str, Any]]:
    async with contextlib.AsyncExitStack() as stack:
        clients = [
            (program.label, await stack.enter_async_context(stdio_session(program, env, errlog)))
            for program, env in programs
        ]
        return await measure_round_trips(clients, corpus, reps, "stdio")


async def bench_http(
    programs: Sequence[tuple[Program, dict[str, str]]], errlog: TextIO, corpus: Corpus, reps: Reps
) -> dict[str, dict[str, Any]]:
    with contextlib.ExitStack() as processes:
        urls = [
            (program, token_of(program, env), processes.enter_context(serve_process(program, env, errlog)))
            for program, env in programs
        ]
        async with contextlib.AsyncExitStack() as stack:
            clients = [
                (program.label, await stack.enter_async_context(http_session(url, token)))
                for program, token, url in urls
            ]
            return await measure_round_trips(clients, corpus, reps, "http")


# -- report --------------------------------------------------------------------------------------------


def machine_info() -> dict[str, Any]:
    import mcp

    cpu = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem_gb = None
    with contextlib.suppress(OSError, StopIteration, ValueError):
        meminfo = Path("/proc/meminfo").read_text().splitlines()
        mem_gb = round(int(next(ln for ln in meminfo if ln.startswith("MemTotal")).split()[1]) / 2**20, 1)
    return {
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "cpu_model": cpu,
        "memory_gb": mem_gb,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "mcp": getattr(mcp, "__version__", None) or _dist_version("mcp"),
        "tallei_desktop": tallei_version,
    }


def _dist_version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _fmt(value: Any) -> str:
    if not isinstance(value, int | float):
        return "—"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def render_table(report: dict[str, Any]) -> str:
    labels: list[str] = report["programs"]
    rows: list[tuple[str, str, dict[str, Any]]] = []
    cold = report.get("stdio_cold_start")
    if cold:
        rows.append(
            ("stdio", "cold start → initialize answered", {k: v["initialize"] for k, v in cold.items()})
        )
        rows.append(
            ("stdio", "cold start → first tool result", {k: v["first_tool_result"] for k, v in cold.items()})
        )
    for transport, key in (("stdio", "stdio"), ("HTTP", "http")):
        run = report.get(key)
        if run:
            rows.append((transport, "save_memory", {k: v["save_memory"] for k, v in run.items()}))
            rows.append(
                (
                    transport,
                    "recall_memories warm (same query)",
                    {k: v["recall_warm"] for k, v in run.items()},
                )
            )
            rows.append(
                (
                    transport,
                    "recall_memories cold (new queries)",
                    {k: v["recall_cold"] for k, v in run.items()},
                )
            )
    empty = report.get("empty_store_recall")
    if empty:
        rows.append(("stdio", "recall_memories, empty store (floor)", empty))
    per = ["p50", "p95", "check p50", "KB", "struct/text"]
    header = ["transport", "round trip (ms)", "n"]
    for label in labels:
        header += [f"{label} {c}".strip() for c in per]
    body = []
    for t, name, by_label in rows:
        cells = [t, name, str(by_label[labels[0]]["n"])]
        for label in labels:
            s = by_label[label]
            check = s.get("client_schema_validation", {})
            size = s.get("result_bytes_p50")
            cells += [
                _fmt(s.get("p50")),
                _fmt(s.get("p95")),
                _fmt(check.get("p50")),
                _fmt(size / 1024) if isinstance(size, int | float) else "—",
                _fmt(s.get("structured_to_text_p50")),
            ]
        body.append(cells)
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(widths[i]) if i < 2 else c.rjust(widths[i]) for i, c in enumerate(cells))

    lines = [line(header), "  ".join("-" * w for w in widths), *(line(r) for r in body)]

    store = report["store"]
    notes = [
        f"store: {store['active']:,} active memories from {store['memories_saved']:,} saves "
        f"({store['active_per_bucket']}), {store['file_mb']} MB; built in {store['build_s']} s, "
        f"embedded in {store['drain_s']} s"
    ]
    if len(labels) > 1:
        notes.append(
            "programs: "
            + "; ".join(f"{label} = {report['sources'][label]}" for label in labels)
            + " (each on its own copy of the store, taking turns call by call)"
        )
    for key in ("stdio", "http"):
        for label, run in (report.get(key) or {}).items():
            c = run["recall_cold"]
            notes.append(
                f"{key} {label}: {run['active_before']:,} → {run['active_after']:,} active during the run; "
                f"cold recalls semantic {c['semantic']}/{c['n']}, long-term modes {c['long_term_modes']}; "
                f"saves confirming an existing memory {run['save_memory']['confirmed_existing']}"
            )
    notes.append(
        "check: the share of the round trip the Python SDK client spends checking the result against "
        "the tool's output schema (jsonschema), timed apart on the same results; struct/text: the "
        "structured result's compact JSON over the text block"
    )
    cpus = report["machine"]["cpus_usable"] or 1
    # Sampled before this run started anything of its own, so the load is other programs'.
    others = report["loadavg_at_start"][0]
    if others > cpus / 2:
        notes.append(
            f"WARNING other programs were busy when the run started (1-min load {others:.1f} on {cpus} CPUs): "
            "latencies are likely inflated"
        )
    return "\n".join([*lines, "", *notes])


# -- main ----------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--size", type=int, default=DEFAULT_SIZE, help=f"memories in the store (default {DEFAULT_SIZE:,})"
    )
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (the store size stays)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default {DEFAULT_OUT})")
    parser.add_argument(
        "--model-dir",
        type=Path,
        help="the ONNX model folder (default: TALLEI_MODEL_DIR, "
        "else ../shared/models/all-MiniLM-L6-v2-onnx beside the repository)",
    )
    parser.add_argument("--workdir", type=Path, help="where to build the store (default: a temporary folder)")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another Tallei source tree (holding tallei_desktop/) to measure side by side, "
        "e.g. from `git archive main | tar -x -C DIR`",
    )
    parser.add_argument(
        "--store",
        type=Path,
        help="keep the built store in this folder and reuse it when it is already there "
        "(built with the same --size)",
    )
    args = parser.parse_args(argv)
    if args.size <= 0:
        parser.error("--size must be positive")
    if args.baseline is not None and not (args.baseline / "tallei_desktop" / "__init__.py").is_file():
        parser.error(f"--baseline {args.baseline} holds no tallei_desktop package")
    return args


def prepare_store(args: argparse.Namespace, env: dict[str, str], corpus: Corpus) -> dict[str, Any]:
    """Build the store in ``env``'s data folder, or reuse the one kept in ``--store``."""
    if args.store is None:
        return build_store(env, corpus.memories(args.size))
    kept = args.store / "store.json"
    if kept.is_file():
        info: dict[str, Any] = json.loads(kept.read_text(encoding="utf-8"))
        if info["memories_saved"] != args.size:
            raise SystemExit(
                f"{args.store} holds a store of {info['memories_saved']:,} saves, not {args.size:,}"
            )
        say(f"reusing the store in {args.store}")
        return info
    kept_env = process_env(args.store, Path(env["TALLEI_MODEL_DIR"]))
    info = build_store(kept_env, corpus.memories(args.size))
    kept.write_text(json.dumps(info), encoding="utf-8")
    return info


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    model_dir = resolve_model_dir(args.model_dir)
    reps = QUICK_REPS if args.quick else FULL_REPS
    started = datetime.now(UTC)
    t_run = time.perf_counter()
    workdir = Path(tempfile.mkdtemp(prefix="tallei-bench-mcp-", dir=args.workdir))
    programs = (
        [Program("")]
        if args.baseline is None
        else [Program("before", args.baseline.resolve()), Program("after")]
    )
    errlog_path = workdir / "servers-stderr.log"
    corpus = Corpus(SEED, started)
    report: dict[str, Any] = {
        "timestamp": started.isoformat(timespec="seconds"),
        "machine": machine_info(),
        "revision": revision(),
        "loadavg_at_start": loadavg(),
        "model_dir": str(model_dir),
        "command": tallei_command("mcp"),
        "programs": [p.label for p in programs],
        "sources": {p.label: str(p.source or REPO_ROOT) for p in programs},
        "args": {"size": args.size, "quick": args.quick, "reps": asdict(reps)},
        "clients": {"stdio": STDIO_CLIENT, "http": HTTP_CLIENT},
    }
    built_env = process_env(workdir / "built", model_dir)
    envs = [process_env(workdir / (p.label or "run"), model_dir) for p in programs]
    empties = [process_env(workdir / f"{p.label or 'run'}-empty", model_dir) for p in programs]
    try:
        report["store"] = prepare_store(args, built_env, corpus)
        built_data = Path(
            (process_env(args.store, model_dir) if args.store else built_env)["TALLEI_DATA_DIR"]
        )
        for env in envs:
            # Every program starts from the same store and changes only its own copy.
            shutil.copytree(built_data, env["TALLEI_DATA_DIR"])
        paired = list(zip(programs, envs, strict=True))
        with errlog_path.open("w", encoding="utf-8") as errlog:
            try:
                say(f"stdio cold starts x{reps.cold_starts}")
                report["stdio_cold_start"] = anyio.run(measure_cold_starts, paired, errlog, reps.cold_starts)
                say("stdio round trips")
                report["stdio"] = anyio.run(bench_stdio, paired, errlog, corpus, reps)
                say("HTTP round trips")
                report["http"] = anyio.run(bench_http, paired, errlog, corpus, reps)
                say("recall on an empty store")
                report["empty_store_recall"] = anyio.run(
                    measure_empty_recall, list(zip(programs, empties, strict=True)), errlog, reps
                )
            except BaseException:
                errlog.flush()
                print(logs_tail(envs[-1], errlog_path), file=sys.stderr)
                raise
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    report["run_s"] = round(time.perf_counter() - t_run, 1)
    return write_report(report, args.out, render_table(report))


if __name__ == "__main__":
    sys.exit(main())
