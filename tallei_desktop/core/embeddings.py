"""Text embeddings: the ``Embedder`` port and its fastembed implementation.

Everything in the core that needs vectors takes an ``Embedder``. ``FastEmbedEmbedder`` runs the
ONNX model through fastembed; ``NullEmbedder`` stands in when no model is configured, so semantic
search is off while text search and recency keep working.

Nothing happens on import or construction: fastembed is imported (about half a second) and the
model loaded only by ``FastEmbedEmbedder.load()``, which the first ``embed()`` calls if nobody did
earlier.
Loading and embedding block, so callers keep them off the Qt thread and the event loop.

Where the model stands is a ``ModelStatus`` (``Embedder.status``); ``FastEmbedEmbedder.subscribe``
tells a watcher (a tray icon) each change, download progress included.

Download progress is read from the disk, not from fastembed: fastembed (0.9) does not hand a
progress hook on to huggingface_hub, and replacing the hub's module-level progress class would
reach into its internals for every thread of the process. The hub's cache layout is documented
and stable: each file grows in place as ``blobs/<etag>.incomplete`` under the model's folder, so
a watcher thread sums the sizes there against the size fastembed's model list gives.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from tallei_desktop.core.errors import BugError, ModelUnavailable

if TYPE_CHECKING:
    from fastembed import TextEmbedding

__all__ = [
    "BATCH_SIZE",
    "DEFAULT_MODEL",
    "DIM",
    "Embedder",
    "FastEmbedEmbedder",
    "FloatArray",
    "ModelState",
    "ModelStatus",
    "NullEmbedder",
    "cosine",
]

#: The model fastembed loads when nothing else is configured.
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
#: Width of the default model's vectors.
DIM = 384
#: Most texts per ONNX run (short texts); long texts go in smaller runs, see ``_batches``.
BATCH_SIZE = 64

#: Every vector and matrix that crosses the port.
FloatArray = npt.NDArray[np.float32]

_log = logging.getLogger(__name__)

_KNOWN_DIMS = {DEFAULT_MODEL.lower(): DIM}
# The window the model was trained with (sentence-transformers' max_seq_length). Its tokenizer
# files allow 512, which fastembed honours: a batch of long texts then needs gigabytes.
_MAX_TOKENS = {DEFAULT_MODEL.lower(): 256}
# Run cost grows with (texts in the run) x (longest text in it); characters stand in for tokens
# (about four per token in English), capped where truncation makes more characters free. The
# budget keeps a run of long texts to 16, which holds the peak memory near half a gigabyte.
_TRUNCATED_CHARS = 1024
_RUN_CHAR_BUDGET = 16 * _TRUNCATED_CHARS
_MAX_REASON_CHARS = 200
#: How often the download watcher looks at the cache folder, in seconds.
_WATCH_INTERVAL_S = 0.2


class ModelState(enum.StrEnum):
    """Where an embedder stands; only ``READY`` embeds."""

    NOT_LOADED = "not loaded"
    LOADING = "loading"
    DOWNLOADING = "downloading"
    READY = "ready"
    UNAVAILABLE = "unavailable"


@dataclass(frozen=True, slots=True)
class ModelStatus:
    """A snapshot of where an embedder stands, for a person to read.

    ``progress`` (0..1) and the byte counts are known only while downloading, and then only
    roughly: ``bytes_total`` is the size fastembed's model list gives, so ``progress`` is held
    below 1 until the files are complete.
    """

    state: ModelState
    detail: str  # a sentence for a person, never an environment variable name
    progress: float | None = None
    bytes_done: int | None = None
    bytes_total: int | None = None


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed width.

    Implementations are safe to call from several threads at once.
    """

    @property
    def name(self) -> str:
        """The model's name; vectors from different models must never be compared."""
        ...

    @property
    def dim(self) -> int:
        """The width of every vector this embedder returns."""
        ...

    @property
    def state(self) -> ModelState:
        """Whether the model is loaded, loading, unusable or not yet asked for."""
        ...

    @property
    def detail(self) -> str:
        """One plain sentence: where the model came from, or why it is unavailable."""
        ...

    @property
    def status(self) -> ModelStatus:
        """``state`` and ``detail`` together, with download progress when there is some."""
        ...

    def wait_ready(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a load under way to settle; True if the model is ready."""
        ...

    def embed(self, texts: Sequence[str]) -> FloatArray:
        """Embed ``texts`` in order.

        Returns a float32 matrix of shape ``(len(texts), dim)`` whose rows have unit length.
        Raises ``ModelUnavailable`` when no model can be used.
        """
        ...

    def embed_query(self, text: str) -> FloatArray:
        """Embed one text: a float32 unit vector of shape ``(dim,)`` (see ``embed``)."""
        ...


def cosine(a: FloatArray, b: FloatArray) -> float:
    """Cosine similarity of two unit vectors (their dot product), in ``[-1, 1]``.

    Both must already be L2-normalised, as every ``Embedder`` returns them.
    """
    return float(np.dot(a, b))


def _normalised(matrix: npt.ArrayLike) -> FloatArray:
    rows = np.array(matrix, dtype=np.float32, ndmin=2)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    # A zero row stays zero rather than turning into NaNs.
    np.divide(rows, norms, out=rows, where=norms > 0)
    return rows


def _check_texts(texts: Sequence[str]) -> None:
    # A str is itself a Sequence[str]: embedding its characters one by one is never meant.
    if isinstance(texts, str):
        raise TypeError("embed() takes a sequence of texts; use embed_query() for one text.")


def _batches(lengths: Sequence[int], most: int) -> list[list[int]]:
    """Group text indices into runs: similar lengths together, fewer texts per run when long."""
    runs: list[list[int]] = []
    run: list[int] = []
    for index in sorted(range(len(lengths)), key=lengths.__getitem__):
        cost = min(max(lengths[index], 1), _TRUNCATED_CHARS)
        # Ascending order: the text being added is the longest of its run.
        if run and (len(run) >= most or (len(run) + 1) * cost > _RUN_CHAR_BUDGET):
            runs.append(run)
            run = []
        run.append(index)
    if run:
        runs.append(run)
    return runs


def _folder_bytes(folder: Path) -> tuple[int, bool]:
    """Bytes held by the files in ``folder``, and whether any is still being downloaded."""
    total = 0
    growing = False
    try:
        entries = list(folder.iterdir())
    except OSError:  # not created yet, or being created
        return 0, False
    for entry in entries:
        with contextlib.suppress(OSError):  # renamed or removed while we looked
            total += entry.stat().st_size
            growing = growing or entry.name.endswith(".incomplete")
    return total, growing


def _reason(exc: BaseException) -> str:
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0].rstrip(".")
    if len(text) > _MAX_REASON_CHARS:
        text = text[: _MAX_REASON_CHARS - 1] + "…"
    return text


class FastEmbedEmbedder:
    """The fastembed (ONNX) embedder; ``DEFAULT_MODEL`` unless told otherwise.

    Where the model comes from:

    - ``model_dir`` given: that folder, which must hold ``model.onnx`` and the tokenizer files;
      nothing is downloaded.
    - otherwise fastembed's model cache (``cache_dir``, or fastembed's default). A model missing
      from the cache is downloaded on first use when ``allow_download`` is true (``status`` shows
      its progress when ``cache_dir`` is given; fastembed retries a few times, so an offline
      failure takes tens of seconds) and reported unavailable when it is false.

    The model loads once, on ``load()`` or the first ``embed()``. A failed load is final for this
    object: ``state`` becomes ``UNAVAILABLE``, ``detail`` says why, and every later call raises
    the same ``ModelUnavailable`` at once instead of trying again; build a new embedder to retry.
    Safe to share between threads.
    """

    def __init__(
        self,
        model_name: str = DEFAULT_MODEL,
        *,
        model_dir: Path | None = None,
        cache_dir: Path | None = None,
        threads: int | None = None,
        allow_download: bool = True,
        batch_size: int = BATCH_SIZE,
    ) -> None:
        """Remember the configuration; does no I/O and imports nothing.

        ``threads`` caps onnxruntime's threads (``None``: one per core). ``batch_size`` is the
        most texts per ONNX run.
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}.")
        self._name = model_name
        self._model_dir = model_dir
        self._cache_dir = cache_dir
        self._threads = threads
        self._allow_download = allow_download
        self._batch_size = batch_size
        self._lock = threading.Lock()
        self._settled = threading.Event()  # set once a load has succeeded or failed
        self._model: TextEmbedding | None = None
        self._dim: int | None = _KNOWN_DIMS.get(model_name.lower())
        self._status = ModelStatus(
            ModelState.NOT_LOADED, f"The embedding model {model_name} has not been loaded yet."
        )
        self._subscribers: list[Callable[[ModelStatus], None]] = []
        self._subscribers_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"FastEmbedEmbedder({self._name!r}, state={self._status.state.value!r})"

    @property
    def name(self) -> str:
        """The fastembed model name, e.g. ``DEFAULT_MODEL``."""
        return self._name

    @property
    def dim(self) -> int:
        """The vector width.

        Known without loading for ``DEFAULT_MODEL``; for any other model, reading it before the
        model is loaded loads it (and may raise ``ModelUnavailable``).
        """
        if self._dim is None:
            self.load()
        if self._dim is None:
            raise BugError("The embedding model loaded without recording its vector width.")
        return self._dim

    @property
    def state(self) -> ModelState:
        """The current ``ModelState``; reading it never blocks."""
        return self._status.state

    @property
    def detail(self) -> str:
        """One plain sentence for the person: where the model came from, or why it is unusable."""
        return self._status.detail

    @property
    def status(self) -> ModelStatus:
        """The current ``ModelStatus``; reading it never blocks."""
        return self._status

    def subscribe(self, callback: Callable[[ModelStatus], None]) -> Callable[[], None]:
        """Call ``callback`` with each new ``ModelStatus``; returns a function that stops it.

        Callbacks run on the thread that loads the model, while it holds the load: keep them
        short (hand the status to your own thread) and never load or embed from one. A callback
        that raises is logged and the load goes on. Subscribe first, then read ``status``, and no
        change is missed.
        """
        with self._subscribers_lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._subscribers_lock, contextlib.suppress(ValueError):
                self._subscribers.remove(callback)

        return unsubscribe

    def load(self) -> None:
        """Load the model if it is not loaded yet; return at once if it is.

        Concurrent callers wait for a single load. Raises ``ModelUnavailable`` (with the message
        that ``detail`` then repeats) if the model cannot be loaded, now or in an earlier call.
        """
        if self._status.state is ModelState.READY:
            return
        with self._lock:
            # Re-read under the lock: another caller may have finished loading while we waited.
            settled = self._status
            if settled.state is ModelState.READY:
                return
            if settled.state is ModelState.UNAVAILABLE:
                raise ModelUnavailable(settled.detail)
            self._set_status(
                ModelStatus(
                    ModelState.LOADING, f"Loading the embedding model {self._name} from {self._source()}."
                )
            )
            try:
                model, dim = self._open()
            except ModelUnavailable as exc:
                self._set_status(ModelStatus(ModelState.UNAVAILABLE, str(exc)))
                self._settled.set()
                raise
            self._model = model
            self._dim = dim
            # After the model is stored, so that a reader who sees READY also sees the model.
            self._set_status(
                ModelStatus(
                    ModelState.READY, f"Semantic search uses {self._name}, loaded from {self._source()}."
                )
            )
            self._settled.set()

    def wait_ready(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for a load (started by anyone) to settle; True if ready."""
        self._settled.wait(0 if self._status.state is ModelState.READY else timeout)
        return self.state is ModelState.READY

    def preload_in_background(self) -> threading.Thread:
        """Start loading on a daemon thread and return it (already started).

        A failure is not raised: it is recorded in ``state`` and ``detail``.
        """
        thread = threading.Thread(target=self._preload, name="tallei-embedder-load", daemon=True)
        thread.start()
        return thread

    def embed(self, texts: Sequence[str]) -> FloatArray:
        """Embed ``texts``, loading the model first if needed.

        Returns a float32 ``(len(texts), dim)`` matrix of unit rows, in the order of ``texts``.
        Only the start of a long text counts: the tokenizer truncates it to the model's window
        (256 tokens for the default). Texts are run in batches of similar length, at most
        ``batch_size`` at a time and fewer when they are long. Raises ``ModelUnavailable`` when
        the model cannot be loaded.
        """
        _check_texts(texts)
        self.load()
        model = self._model
        if model is None or self._dim is None:
            raise BugError("The embedding model is marked ready but was never stored.")
        matrix = np.zeros((len(texts), self._dim), dtype=np.float32)
        for run in _batches([len(text) for text in texts], self._batch_size):
            rows = list(model.embed([texts[i] for i in run], batch_size=len(run)))
            matrix[run] = np.stack(rows)
        return _normalised(matrix)

    def embed_query(self, text: str) -> FloatArray:
        """Embed one text: a float32 unit vector of shape ``(dim,)``; see ``embed``."""
        vector: FloatArray = self.embed([text])[0]
        return vector

    def _set_status(self, status: ModelStatus) -> None:
        self._status = status
        with self._subscribers_lock:
            callbacks = list(self._subscribers)
        for callback in callbacks:
            # A watcher's bug must not break the load it watches; this is that boundary.
            try:
                callback(status)
            except Exception:
                _log.exception("A model status subscriber failed")

    def _preload(self) -> None:
        with contextlib.suppress(ModelUnavailable):
            self.load()

    def _source(self) -> str:
        if self._model_dir is not None:
            return f"the folder {self._model_dir}"
        if self._cache_dir is not None:
            return f"the model cache in {self._cache_dir}"
        return "fastembed's model cache"

    def _open(self) -> tuple[TextEmbedding, int]:
        """Import fastembed, find the model files, load them and embed once to prove they work."""
        if self._model_dir is not None and not (self._model_dir / "model.onnx").is_file():
            raise ModelUnavailable(
                f"The embedding model cannot be loaded because {self._model_dir} holds no "
                f"model.onnx; choose a folder with the ONNX export of {self._name} and its "
                "tokenizer files."
            )
        try:
            from fastembed import TextEmbedding
            from loguru import logger as fastembed_logger
        except ImportError as exc:
            raise ModelUnavailable(
                "The embedding model cannot be loaded because the fastembed package is missing "
                f"({_reason(exc)}); reinstall Tallei desktop to restore semantic search."
            ) from exc

        # fastembed logs each failed download attempt to stderr through loguru; our one-line
        # ModelUnavailable (and the log's warning) says the same once, in plain words.
        fastembed_logger.disable("fastembed")
        supported = {entry["model"].lower(): entry for entry in TextEmbedding.list_supported_models()}
        if self._name.lower() not in supported:
            raise ModelUnavailable(
                f"The embedding model {self._name} is not one fastembed can run; configure a "
                f"supported model such as {DEFAULT_MODEL}."
            )
        expected_dim = TextEmbedding.get_embedding_size(self._name)

        def locate() -> TextEmbedding:
            # lazy_load keeps this call to locating (or downloading) the files, so its failures
            # can be told apart from failures to load them.
            return TextEmbedding(
                self._name,
                cache_dir=None if self._cache_dir is None else str(self._cache_dir),
                threads=self._threads,
                lazy_load=True,
                local_files_only=self._model_dir is not None or not self._allow_download,
                specific_model_path=None if self._model_dir is None else str(self._model_dir),
            )

        # fastembed, onnxruntime and tokenizers signal broken or missing files with plain
        # Exception subclasses, so the two calls into them are caught broadly; whatever went
        # wrong, the result is the same: no model, reported in one sentence.
        try:
            blobs, size = self._download_folder(supported[self._name.lower()])
            model = locate() if blobs is None else self._watching_download(locate, blobs, size)
        except Exception as exc:
            message = self._not_found_message()
            # Offline, or a folder without the model, is expected: one line, no traceback.
            _log.warning("%s", message)
            _log.debug("fastembed could not provide the model %s.", self._name, exc_info=True)
            raise ModelUnavailable(message) from exc

        try:
            probe = list(model.embed(["warm-up"], batch_size=1))
        except Exception as exc:
            _log.warning("Could not load the embedding model %s.", self._name, exc_info=True)
            raise ModelUnavailable(
                f"The embedding model in {self._source()} could not be loaded ({_reason(exc)}); "
                f"replace the model files or choose a folder with a working copy of {self._name}."
            ) from exc

        self._cap_window(model)
        dim = int(probe[0].shape[-1]) if probe else 0
        if dim != expected_dim:
            raise ModelUnavailable(
                f"The embedding model in {self._source()} gives {dim}-dimensional vectors where "
                f"{self._name} should give {expected_dim}; choose a folder that holds that model."
            )
        _log.info("Loaded the embedding model %s from %s.", self._name, self._source())
        return model, dim

    def _download_folder(self, entry: Mapping[str, Any]) -> tuple[Path | None, int | None]:
        """Where a download of this model grows, and its rough size; no folder if none can happen."""
        if self._model_dir is not None or not self._allow_download or self._cache_dir is None:
            return None, None
        repo = (entry.get("sources") or {}).get("hf")
        if not isinstance(repo, str) or not repo:
            return None, None
        size = entry.get("size_in_GB")
        total = int(size * 10**9) if isinstance(size, (int, float)) and size > 0 else None
        # The hub's documented cache layout: models--<owner>--<name>/blobs/<etag>[.incomplete].
        return self._cache_dir / f"models--{repo.replace('/', '--')}" / "blobs", total

    def _watching_download(
        self, locate: Callable[[], TextEmbedding], blobs: Path, total: int | None
    ) -> TextEmbedding:
        """Run ``locate`` on a helper thread while this (the loading) thread reports download progress.

        Progress shows only when files are actually being fetched, so a cached model goes
        straight from loading to ready.
        """
        found: list[TextEmbedding] = []
        failed: list[Exception] = []

        def run() -> None:
            try:
                found.append(locate())
            except Exception as exc:  # handed to the loading thread, which raises it
                failed.append(exc)

        fetcher = threading.Thread(target=run, name="tallei-embedder-fetch", daemon=True)
        fetcher.start()
        last: int | None = None
        while fetcher.is_alive():
            fetcher.join(_WATCH_INTERVAL_S)
            done, growing = _folder_bytes(blobs)
            if (growing or last is not None) and done != last:
                last = done
                self._set_status(self._downloading(done, total))
        if failed:
            raise failed[0]
        if last is not None:
            self._set_status(
                ModelStatus(
                    ModelState.LOADING,
                    f"Loading the embedding model {self._name}, just downloaded to {self._source()}.",
                )
            )
        return found[0]

    def _downloading(self, done: int, total: int | None) -> ModelStatus:
        megabytes = done // 10**6
        if total is None:
            detail = f"Downloading the embedding model {self._name}: {megabytes} MB so far."
            return ModelStatus(ModelState.DOWNLOADING, detail, None, done, None)
        detail = f"Downloading the embedding model {self._name}: {megabytes} of about {total // 10**6} MB."
        # The size is the model list's round figure: never claim the download is complete.
        return ModelStatus(ModelState.DOWNLOADING, detail, min(done / total, 0.99), done, total)

    def _cap_window(self, model: TextEmbedding) -> None:
        """Truncate at the model's trained window when its tokenizer files allow more."""
        limit = _MAX_TOKENS.get(self._name.lower())
        # The tokenizer exists once the warm-up has run; fastembed exposes it as a plain
        # attribute of the wrapped model, so its absence in another version is tolerated.
        tokenizer = getattr(getattr(model, "model", None), "tokenizer", None)
        truncation = getattr(tokenizer, "truncation", None)
        if limit is None or tokenizer is None or not isinstance(truncation, dict):
            _log.debug("Kept the tokenizer's own truncation for %s.", self._name)
            return
        if truncation.get("max_length", limit + 1) > limit:
            tokenizer.enable_truncation(max_length=limit, direction=truncation.get("direction", "right"))

    def _not_found_message(self) -> str:
        if self._model_dir is not None:
            return (
                f"The embedding model in {self._model_dir} could not be opened; choose a folder "
                f"with the ONNX export of {self._name} and its tokenizer files."
            )
        if self._allow_download:
            return (
                f"The embedding model {self._name} could not be downloaded (is this computer "
                "offline?); to work without a download, choose a local folder that holds the model."
            )
        return (
            f"The embedding model {self._name} is not in {self._source()} and downloading it is "
            "turned off; choose a local folder that holds the model."
        )


class NullEmbedder:
    """The embedder used when no model is configured: always unavailable, never loads anything.

    ``embed`` and ``embed_query`` always raise ``ModelUnavailable``; callers fall back on text
    search and recency.
    """

    _DETAIL = "Semantic search is off: no embedding model is configured."

    def __init__(self, dim: int = DIM) -> None:
        """``dim`` is only reported, so that vector tables keep one width either way."""
        self._dim = dim

    def __repr__(self) -> str:
        return "NullEmbedder()"

    @property
    def name(self) -> str:
        """Always ``"none"``."""
        return "none"

    @property
    def dim(self) -> int:
        """The width given at construction (``DIM`` by default)."""
        return self._dim

    @property
    def state(self) -> ModelState:
        """Always ``ModelState.UNAVAILABLE``."""
        return ModelState.UNAVAILABLE

    @property
    def detail(self) -> str:
        """Says that semantic search is off because no model is configured."""
        return self._DETAIL

    @property
    def status(self) -> ModelStatus:
        """Always unavailable, with ``detail``."""
        return ModelStatus(ModelState.UNAVAILABLE, self._DETAIL)

    def wait_ready(self, timeout: float) -> bool:
        return False

    def embed(self, texts: Sequence[str]) -> FloatArray:
        """Always raises ``ModelUnavailable``."""
        raise ModelUnavailable(self._DETAIL)

    def embed_query(self, text: str) -> FloatArray:
        """Always raises ``ModelUnavailable``."""
        raise ModelUnavailable(self._DETAIL)
