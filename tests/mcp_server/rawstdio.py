"""``tallei-desktop mcp`` as a bare child process, spoken to in raw JSON-RPC lines.

For what the SDK's client hides on purpose: timing from process start, every byte on stdout, signals
and kill -9 at a chosen moment.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from typing import IO, Any

from tests.mcp_server.conftest import TIMEOUT_S, tallei_command

PROTOCOL_VERSION = "2025-06-18"


class RawStdio:
    def __init__(
        self,
        env: dict[str, str],
        stderr: IO[str],
        *,
        client_name: str = "claude-ai",
        command: list[str] | None = None,
    ) -> None:
        """Start ``command`` (by default ``tallei-desktop mcp`` with nothing more)."""
        self.client_name = client_name
        self.proc = subprocess.Popen(
            command or tallei_command("mcp"),
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.raw_stdout: list[bytes] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._next_id = 0
        self._answers: dict[object, dict[str, Any]] = {}

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.raw_stdout.append(line)
            self.lines.put(line)
        self.lines.put(b"")

    def send_line(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_line(json.dumps({"jsonrpc": "2.0", **message}).encode())

    def request(self, method: str, params: dict[str, Any] | None = None) -> int:
        self._next_id += 1
        self.send(
            {"id": self._next_id, "method": method, **({"params": params} if params is not None else {})}
        )
        return self._next_id

    def call_tool(self, name: str, arguments: dict[str, Any]) -> int:
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def receive(self, timeout: float = TIMEOUT_S) -> dict[str, Any]:
        line = self.lines.get(timeout=timeout)
        if not line:
            raise EOFError("the server closed its stdout")
        message: dict[str, Any] = json.loads(line)
        return message

    def response(self, request_id: int, timeout: float = TIMEOUT_S) -> dict[str, Any]:
        """The response to ``request_id``; responses to other requests are kept for their turn."""
        while request_id not in self._answers:
            message = self.receive(timeout)
            if "id" in message:
                self._answers[message["id"]] = message
        return self._answers.pop(request_id)

    def arrived(self) -> list[dict[str, Any]]:
        """Every response that arrived but was not asked for yet, without waiting for more."""
        while True:
            try:
                line = self.lines.get_nowait()
            except queue.Empty:
                break
            if line:
                message = json.loads(line)
                if "id" in message:
                    self._answers[message["id"]] = message
        arrived, self._answers = list(self._answers.values()), {}
        return arrived

    def initialize(self) -> dict[str, Any]:
        rid = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": self.client_name, "version": "1.0"},
            },
        )
        answer = self.response(rid)
        self.send({"method": "notifications/initialized"})
        return answer

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def wait(self, timeout: float = TIMEOUT_S) -> int:
        """The exit status, once the process has ended; its pipes are closed then."""
        code = self.proc.wait(timeout)
        self._release(timeout)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(TIMEOUT_S)
        self._release(TIMEOUT_S)

    def _release(self, timeout: float) -> None:
        # The reader ends at end of file, which the exit of the process brings; then nothing uses the pipes.
        self._reader.join(timeout)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.stdout.close()


def tool_result(message: dict[str, Any]) -> dict[str, Any]:
    """The structured result of a successful tools/call response."""
    assert "result" in message, message
    result: dict[str, Any] = message["result"]
    assert not result.get("isError"), result
    structured: dict[str, Any] = result["structuredContent"]
    return structured
