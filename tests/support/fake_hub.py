"""A local stand-in for the Hugging Face Hub, serving one model repository from a folder.

huggingface_hub reads ``HF_ENDPOINT`` when it is imported, so a process started with
``HF_ENDPOINT=hub.url`` downloads through its real code path (model info, file tree, then each
file's metadata and bytes) from here. ``hold_after`` pauses the largest file part-way until
``release()``, so a test can watch a download that is under way without racing it.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

__all__ = ["FakeHub", "serve_hub"]

#: The commit every file is served at.
REVISION = "0123456789abcdef0123456789abcdef01234567"
_CHUNK = 1 << 16
#: How long a held download waits for ``release()`` before it fails the test.
HOLD_TIMEOUT_S = 120.0


class FakeHub:
    """The repository ``repo``, made of ``files`` read from ``folder``."""

    def __init__(
        self, repo: str, folder: Path, files: Sequence[str], *, hold_after: int | None = None
    ) -> None:
        self.repo = repo
        self.hold_after = hold_after
        self.files = {name: (folder / name).read_bytes() for name in files}
        self.etags = {name: hashlib.sha256(data).hexdigest() for name, data in self.files.items()}
        self.held = threading.Event()  # set once a download has reached ``hold_after``
        self._release = threading.Event()
        self.url = ""

    @property
    def total_bytes(self) -> int:
        return sum(len(data) for data in self.files.values())

    def release(self) -> None:
        """Let a held download finish."""
        self._release.set()

    def wait_released(self) -> bool:
        return self._release.wait(HOLD_TIMEOUT_S)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
        pass

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def do_GET(self) -> None:
        self._answer(body=True)

    def _answer(self, *, body: bool) -> None:
        hub = self.server.hub
        path = unquote(urlsplit(self.path).path)
        api = f"/api/models/{hub.repo}"
        resolve = f"/{hub.repo}/resolve/"
        if path in (api, f"{api}/revision/main", f"{api}/revision/{REVISION}"):
            siblings = [{"rfilename": name} for name in hub.files]
            self._json({"id": hub.repo, "modelId": hub.repo, "sha": REVISION, "siblings": siblings}, body)
        elif path.startswith(f"{api}/tree/"):
            tree = [
                {"type": "file", "oid": hub.etags[name], "size": len(data), "path": name}
                for name, data in hub.files.items()
            ]
            self._json(tree, body)
        elif path.startswith(resolve) and path[len(resolve) :].partition("/")[2] in hub.files:
            self._file(path[len(resolve) :].partition("/")[2], body)
        else:
            self._json({"error": f"no such path {path}"}, body, status=404)

    def _json(self, document: object, body: bool, status: int = 200) -> None:
        data = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status == 404:
            self.send_header("X-Error-Code", "EntryNotFound")
        self.end_headers()
        if body:
            self.wfile.write(data)

    def _file(self, name: str, body: bool) -> None:
        hub = self.server.hub
        data = hub.files[name]
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("ETag", f'"{hub.etags[name]}"')
        self.send_header("X-Repo-Commit", REVISION)
        self.send_header("Content-Type", "application/octet-stream")
        self.end_headers()
        if not body:
            return
        hold = hub.hold_after if hub.hold_after is not None and len(data) > hub.hold_after else None
        for start in range(0, len(data), _CHUNK):
            if hold is not None and start >= hold:
                self.wfile.flush()
                hub.held.set()
                if not hub.wait_released():
                    return
                hold = None
            self.wfile.write(data[start : start + _CHUNK])


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, hub: FakeHub) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.hub = hub


@contextmanager
def serve_hub(hub: FakeHub) -> Iterator[FakeHub]:
    """Serve ``hub`` on a free loopback port (``hub.url``) for the length of the block."""
    server = _Server(hub)
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, name="fake-hub", daemon=True)
    thread.start()
    try:
        yield hub
    finally:
        hub.release()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
