"""The MCP part of packaging/smoke.sh: the built `tallei-desktop mcp`, spoken to in raw JSON-RPC lines.

    python packaging/smoke_client.py CONSOLE_EXECUTABLE [--runs 5] [--json OUT]

Checks initialize and tools/list, saves a memory, waits for the background work to embed it, and
finds it again by meaning alone (no word in common), which needs the bundled onnxruntime, tokenizer
and sqlite-vec to work. Then measures the cold start to an answered initialize over several fresh
processes and prints the median. Needs only the standard library; the environment (store, passphrase,
model folder) comes from the caller.
"""

from __future__ import annotations

import argparse
import json
import queue
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

TIMEOUT_S = 60.0
TOOLS = {
    "save_memory",
    "recall_memories",
    "search_memories",
    "list_memories",
    "update_memory",
    "forget_memory",
    "pin_memory",
    "unpin_memory",
    "list_conflicts",
    "resolve_conflict",
    "memory_status",
}


class Server:
    def __init__(self, executable: str) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [executable, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.stderr: list[bytes] = []
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.lines.put), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, self.stderr.append), daemon=True).start()
        self.next_id = 0

    @staticmethod
    def _pump(stream: Any, sink: Any) -> None:
        for line in stream:
            sink(line)
        sink(b"")

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params or {}})
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            if not line:
                raise SystemExit(
                    f"smoke: the server closed stdout; stderr:\n{b''.join(self.stderr).decode()}"
                )
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise SystemExit(f"smoke: {method} failed: {message['error']}")
                result: dict[str, Any] = message["result"]
                return result

    def initialize(self) -> dict[str, Any]:
        result = self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "claude-ai", "version": "1.0"},
            },
        )
        self.send({"method": "notifications/initialized"})
        return result

    def tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        if result.get("isError"):
            raise SystemExit(f"smoke: {name} failed: {result}")
        structured: dict[str, Any] = result["structuredContent"]
        return structured

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()  # end of input is how a client says goodbye over stdio
        return self.proc.wait(TIMEOUT_S)


def check(executable: str) -> None:
    server = Server(executable)
    info = server.initialize()
    assert info["serverInfo"]["name"], info
    tools = {tool["name"] for tool in server.request("tools/list")["tools"]}
    assert tools == TOOLS, f"tools/list: {sorted(tools)}"
    print(f"smoke: ok: initialize ({info['serverInfo']['name']}) and tools/list ({len(tools)} tools)")
    maps = Path(f"/proc/{server.proc.pid}/maps")
    if maps.exists():  # Linux: what the process has loaded
        assert "libQt6Core" not in maps.read_text(), "the mcp server loaded Qt"
        print("smoke: ok: the mcp server runs without loading Qt")

    saved = server.tool("save_memory", {"content": "My sister Ana lives in Lisbon and teaches piano"})
    deadline = time.monotonic() + TIMEOUT_S
    while (status := server.tool("memory_status", {}))["pending_background_work"]:
        if time.monotonic() > deadline:
            raise SystemExit(f"smoke: background work never finished: {status}")
        time.sleep(0.2)
    assert status["semantic_search"], f"semantic search is off in the bundle: {status}"
    hits = server.tool("search_memories", {"query": "which city is my sibling based in", "limit": 3})["hits"]
    assert hits and hits[0]["memory"]["id"] == saved["id"], f"search by meaning missed: {hits}"
    print(f"smoke: ok: save_memory, background embedding, search by meaning (model {status['model_state']})")
    assert server.close() == 0, "the server did not exit 0 at the end of its input"


def check_http(port: int, token: str) -> None:
    """The tray app's Streamable HTTP endpoint: initialize, tools/list and a save, with the bearer token."""
    import urllib.request

    url = f"http://127.0.0.1:{port}/mcp"
    session: str | None = None

    def post(message: dict[str, Any]) -> str:
        nonlocal session
        headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
        }
        if session:
            headers["Mcp-Session-Id"] = session
        request = urllib.request.Request(
            url, data=json.dumps({"jsonrpc": "2.0", **message}).encode(), headers=headers
        )
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            session = response.headers.get("Mcp-Session-Id") or session
            return str(response.read().decode())

    def result(text: str) -> dict[str, Any]:
        data = [line[5:] for line in text.splitlines() if line.startswith("data:")] or [text]
        answer: dict[str, Any] = json.loads(data[-1])
        if "error" in answer:
            raise SystemExit(f"smoke: HTTP answer is an error: {answer}")
        return dict(answer["result"])

    params = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "chatgpt", "version": "1"},
    }
    result(post({"id": 1, "method": "initialize", "params": params}))
    post({"method": "notifications/initialized"})
    tools = {tool["name"] for tool in result(post({"id": 2, "method": "tools/list"}))["tools"]}
    assert tools == TOOLS, f"tools/list over HTTP: {sorted(tools)}"
    call = {"name": "save_memory", "arguments": {"content": "I drink green tea in the afternoon"}}
    saved = result(post({"id": 3, "method": "tools/call", "params": call}))
    assert not saved.get("isError") and saved["structuredContent"]["platform"] == "chatgpt", saved
    print(f"smoke: ok: the tray app's HTTP endpoint answers initialize, tools/list and save_memory on {url}")


def cold_starts(executable: str, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        server = Server(executable)
        server.initialize()
        times.append(time.perf_counter() - server.started)
        server.close()
    return times


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("executable")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--http", nargs=2, metavar=("PORT", "TOKEN"), help="only check a running tray app")
    args = parser.parse_args()
    if args.http:
        check_http(int(args.http[0]), args.http[1])
        return 0
    check(args.executable)
    times = cold_starts(args.executable, args.runs)
    median = statistics.median(times)
    print(
        f"smoke: mcp cold start to initialize answered: median {median * 1000:.0f} ms over {len(times)} runs "
        f"(min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f})"
    )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"mcp_initialize_s": times, "median_s": median}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
