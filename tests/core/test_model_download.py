"""Downloading the model through fastembed's real code path, from a local stand-in for the Hub."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tallei_desktop.core.embeddings import (
    DIM,
    FastEmbedEmbedder,
    FloatArray,
    ModelState,
    ModelStatus,
    NullEmbedder,
)
from tallei_desktop.core.errors import ModelUnavailable
from tests.conftest import REPO_ROOT
from tests.core.conftest import ServiceFactory
from tests.support.fake_embedder import HashEmbedder
from tests.support.fake_hub import FakeHub, serve_hub

_REPO = "Qdrant/all-MiniLM-L6-v2-onnx"  # where fastembed fetches the default model from
_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "model.onnx")
_HOLD_AFTER = 30_000_000
_WAIT_S = 180.0

_DOWNLOAD = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, {root!r})
    from pathlib import Path
    from tallei_desktop.core.embeddings import FastEmbedEmbedder

    def report(label):
        def show(status):
            print(json.dumps({{"run": label, "state": status.state.value, "detail": status.detail,
                               "progress": status.progress, "done": status.bytes_done,
                               "total": status.bytes_total}}), flush=True)
        return show

    for label in ("first", "cached"):
        embedder = FastEmbedEmbedder(cache_dir=Path({cache!r}), allow_download=True, threads=1)
        embedder.subscribe(report(label))
        embedder.load()
        print(json.dumps({{"run": label, "dim": int(embedder.embed_query("hello").shape[0])}}), flush=True)
    """
)


def _read_lines(stream: Any, into: queue.Queue[str | None]) -> None:
    for line in stream:
        into.put(line)
    into.put(None)


@pytest.mark.slow
def test_a_download_reports_progress_then_loads_and_a_cached_model_skips_it(
    tmp_path: Path, model_dir: Path
) -> None:
    cache = tmp_path / "cache"
    hub = FakeHub(_REPO, model_dir, _FILES, hold_after=_HOLD_AFTER)
    with serve_hub(hub):
        env = {
            **os.environ,
            "HF_ENDPOINT": hub.url,
            "HF_HOME": str(tmp_path / "hf-home"),
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HUB_DOWNLOAD_TIMEOUT": "120",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
        env.pop("HF_HUB_OFFLINE", None)
        script = _DOWNLOAD.format(root=str(REPO_ROOT), cache=str(cache))
        proc = subprocess.Popen(
            [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        lines: queue.Queue[str | None] = queue.Queue()
        reader = threading.Thread(target=_read_lines, args=(proc.stdout, lines), daemon=True)
        reader.start()
        events: list[dict[str, Any]] = []
        seen_while_held: dict[str, Any] | None = None
        deadline = time.monotonic() + _WAIT_S
        try:
            while time.monotonic() < deadline:
                try:
                    line = lines.get(timeout=0.2)
                except queue.Empty:
                    line = ""
                if line is None:
                    break
                if line:
                    events.append(json.loads(line))
                downloading = [e for e in events if e.get("state") == "downloading"]
                if seen_while_held is None and hub.held.is_set() and downloading and downloading[-1]["done"]:
                    # The server holds the model file part-way: once the watcher has counted bytes
                    # on disk, what it reports comes from a download under way, not from a finished
                    # one (its first report can come before the first byte is written).
                    seen_while_held = downloading[-1]
                    hub.release()
            assert proc.wait(timeout=_WAIT_S) == 0, proc.stderr.read() if proc.stderr else ""
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=30)
            reader.join(timeout=30)  # it ends at end of file; then both pipes can be closed
            for pipe in (proc.stdout, proc.stderr):
                if pipe:
                    pipe.close()

    first = [e for e in events if e["run"] == "first" and "state" in e]
    cached = [e for e in events if e["run"] == "cached" and "state" in e]
    assert seen_while_held is not None, events
    assert 0 < seen_while_held["progress"] < 1
    assert seen_while_held["total"] == 90_000_000  # fastembed's listed size, 0.09 GB
    assert "Downloading the embedding model" in seen_while_held["detail"]
    states = [e["state"] for e in first]
    assert states[0] == "loading" and states[-2:] == ["loading", "ready"], states
    assert set(states[1:-2]) == {"downloading"}, states
    progress = [e["progress"] for e in first if e["state"] == "downloading"]
    assert progress == sorted(progress) and max(progress) < 1
    assert [e["state"] for e in cached] == ["loading", "ready"]
    assert [e["dim"] for e in events if "dim" in e] == [384, 384]
    assert all("TALLEI_" not in e["detail"] for e in first + cached)
    assert list(cache.glob("models--*/snapshots/*/model.onnx"))


def test_a_model_loaded_from_a_folder_reports_loading_then_ready_to_subscribers(model_dir: Path) -> None:
    embedder = FastEmbedEmbedder(model_dir=model_dir)
    seen: list[ModelStatus] = []
    unsubscribe = embedder.subscribe(seen.append)

    embedder.load()
    unsubscribe()

    assert [s.state for s in seen] == [ModelState.LOADING, ModelState.READY]
    assert all(s.progress is None and s.bytes_done is None for s in seen)
    assert embedder.status == seen[-1]
    assert embedder.status.detail == embedder.detail


def test_a_failing_subscriber_is_logged_and_the_load_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    absent = FastEmbedEmbedder(model_dir=tmp_path / "missing")
    later: list[ModelState] = []

    def broken(status: ModelStatus) -> None:
        raise RuntimeError("a watcher's bug")

    absent.subscribe(broken)
    absent.subscribe(lambda status: later.append(status.state))

    absent.preload_in_background().join(timeout=60)

    assert later == [ModelState.LOADING, ModelState.UNAVAILABLE]
    assert absent.status.state is ModelState.UNAVAILABLE
    assert "A model status subscriber failed" in caplog.text


def test_unsubscribed_callbacks_hear_nothing_more(tmp_path: Path) -> None:
    embedder = FastEmbedEmbedder(model_dir=tmp_path / "missing")
    heard: list[ModelStatus] = []

    embedder.subscribe(heard.append)()
    with pytest.raises(ModelUnavailable):
        embedder.load()

    assert heard == []
    assert embedder.status.state is ModelState.UNAVAILABLE


class _StillDownloading:
    """An embedder whose model is being downloaded: it never gets ready within a test."""

    name = "downloading-embedder"
    dim = DIM
    state = ModelState.DOWNLOADING
    detail = "Downloading the embedding model: 10 of about 90 MB."
    status = ModelStatus(ModelState.DOWNLOADING, detail, 10 / 90, 10 * 10**6, 90 * 10**6)

    def __init__(self) -> None:
        self.waits: list[float] = []

    def wait_ready(self, timeout: float) -> bool:
        self.waits.append(timeout)
        return False

    def embed(self, texts: Sequence[str]) -> FloatArray:
        raise AssertionError("embed() must not be called while the model downloads")

    def embed_query(self, text: str) -> FloatArray:
        raise AssertionError("embed_query() must not be called while the model downloads")


def test_recall_while_the_model_downloads_answers_from_words_without_waiting_for_it(
    make_service: ServiceFactory,
) -> None:
    embedder = _StillDownloading()
    service = make_service(embedder=embedder)
    service.save("I prefer dark mode in every editor")

    result = service.recall("dark mode")

    assert "dark mode" in result.text
    assert len(embedder.waits) == 1 and embedder.waits[0] == service.model_wait_s
    assert service.model_status() == embedder.status


def test_model_status_of_the_service_is_its_embedders(make_service: ServiceFactory, tmp_path: Path) -> None:
    fake = HashEmbedder()
    service = make_service(embedder=fake)

    ready = service.model_status()
    fake.make_unavailable("No model in this test.")
    off = service.model_status()

    assert (ready.state, ready.progress) == (ModelState.READY, None)
    assert (off.state, off.detail) == (ModelState.UNAVAILABLE, "No model in this test.")
    without_model = make_service(embedder=NullEmbedder(), path=tmp_path / "other.db")
    assert without_model.model_status() == ModelStatus(
        ModelState.UNAVAILABLE, "Semantic search is off: no embedding model is configured."
    )
