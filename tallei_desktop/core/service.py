"""MemoryService: the one facade that the CLI, the MCP server and the GUI call.

All methods are synchronous and thread-safe; they block on SQLite (and, for recall, on embedding the
query), so async callers run them in a worker thread. ``save`` returns once the memory is committed;
the slow part (embedding, dedup, supersede, conflicts) happens on the background worker.
"""

from __future__ import annotations

import builtins
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import cachetools
import numpy as np

from tallei_desktop.core import backups, exports, pauses
from tallei_desktop.core import validate as v
from tallei_desktop.core.classify import classify
from tallei_desktop.core.embeddings import Embedder, ModelState, ModelStatus
from tallei_desktop.core.errors import InvalidInput, ModelUnavailable
from tallei_desktop.core.exports import ImportReport
from tallei_desktop.core.lifecycle import decide
from tallei_desktop.core.models import (
    APP_PLATFORM,
    CHOSEN_RESOLUTIONS,
    Bucket,
    ChangeBatch,
    Conflict,
    ConflictResolution,
    Memory,
    MemoryFilter,
    MemoryHistory,
    MemoryPage,
    MemoryStatus,
    MemoryType,
    PlatformUsage,
    RecallResult,
    SaveResult,
    SearchHit,
    SortKey,
    StoreStatus,
    bucket_for,
)
from tallei_desktop.core.recall import DEFAULT_TUNING, Budgets, RecallTuning
from tallei_desktop.core.recall.pipeline import build_recall, build_search
from tallei_desktop.core.store import Connection, listing
from tallei_desktop.core.store import conflicts as sc
from tallei_desktop.core.store import events as se
from tallei_desktop.core.store import lifecycle_rows as lr
from tallei_desktop.core.store import memories as sm
from tallei_desktop.core.store import queries as q
from tallei_desktop.core.store import reopen as sr
from tallei_desktop.core.store.database import Database
from tallei_desktop.core.store.vector_index import VectorIndex, trim_log
from tallei_desktop.core.type_model import TypeModel, features, load_model
from tallei_desktop.core.worker import BackgroundWorker

__all__ = ["Clock", "MemoryService"]

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]

#: Short-term memories referenced this often graduate to long-term.
PROMOTE_AT = 3
#: Long-term memories untouched this long are archived.
ARCHIVE_AFTER = timedelta(days=365)
#: A cached recall is recomputed after this long even if nothing changed (recency moves on).
CACHE_TTL_S = 300.0
#: Memories embedded per background round; small batches keep the ONNX runtime's buffers small.
EMBED_BATCH = 16
MAX_OFFSET = 1_000_000_000
#: Largest page ``list_page`` returns.
MAX_PAGE = 1_000
#: ``MemoryFilter()``: active memories of every kind (a frozen value, shared safely).
DEFAULT_FILTER = MemoryFilter()
#: How long a recall waits for a model that is still loading before answering without it.
MODEL_WAIT_S = 5.0
MAINTENANCE_EVERY_S = 3_600.0


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _refined_type(
    model: TypeModel, pending: sm.Pending, vector: np.ndarray | None, embedder: str
) -> MemoryType | None:
    """The type the text and its embedding together give an unfinished memory whose type was
    inferred, when that differs from the save-time type; None otherwise: a given type stays, and
    so does every type when the vector comes from another model than the type model's head knows."""
    if vector is None or not pending.type_inferred or not features(pending.content)[0].size:
        return None
    if not model.fits(embedder):
        return None
    refined = model.classify_combined(pending.content, vector)
    return refined if refined is not pending.type else None


@dataclass(slots=True)
class _Cached:
    generation: int
    at: float
    build_hits: tuple[int, ...]
    result: RecallResult


class MemoryService:
    def __init__(
        self,
        db: Database,
        embedder: Embedder,
        *,
        budgets: Budgets,
        clock: Clock = _utcnow,
        cache_size: int = 256,
        type_model: TypeModel | None = None,
    ) -> None:
        """``type_model`` refines inferred types in the background (by default the shipped one)."""
        self.db = db
        self._type_model = type_model
        self.embedder = embedder
        self.budgets = budgets
        self._clock = clock
        self._cache: cachetools.LRUCache[str, _Cached] = cachetools.LRUCache(maxsize=cache_size)
        self._cache_lock = threading.Lock()
        self._bumps: Counter[int] = Counter()
        self._bumps_lock = threading.Lock()
        self._last_maintenance = 0.0
        self._worker: BackgroundWorker | None = None
        self._vectors = VectorIndex()
        self.model_wait_s = MODEL_WAIT_S
        # The baseline for store_changed(): commits after this point count as changes.
        self._data_version_lock = threading.Lock()
        self._data_version = db.data_version()
        self._backups = backups.Backups(db, self.now)
        self._pauses = pauses.Pauses(db, self.now)
        self._exports = exports.Exports(db, self.now)

    # -- lifecycle -----------------------------------------------------------------------------

    def start_background(self, *, poll_s: float = 2.0) -> None:
        """Start the worker that finishes pending saves (idempotent)."""
        if self._worker is None:
            self._worker = BackgroundWorker(self._background_round, poll_s=poll_s)
            self._worker.start()

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Wait for the background worker to finish everything pending (for tests and shutdown)."""
        if self._worker is None:
            self.drain()
            return True
        return self._worker.wait_idle(timeout)

    def drain(self) -> None:
        """Do all pending background work now, in the calling thread."""
        while self._background_round():
            pass

    def close(self) -> None:
        """Stop the worker, write out pending reference bumps, close the store. Idempotent."""
        if self.embedder.state is ModelState.LOADING:
            # onnxruntime aborts the process if it exits mid-load; let the load settle first.
            self.embedder.wait_ready(60.0)
        if self._worker is not None:
            self._worker.stop()
            self._worker = None
        try:
            self._flush_bumps()
        finally:
            self.db.close()

    def now(self) -> datetime:
        return self._clock()

    # -- saving ----------------------------------------------------------------------------------

    def save(
        self,
        content: str,
        *,
        type: str | MemoryType | None = None,
        platform: str | None = None,
        pinned: bool = False,
        occurred_at: datetime | None = None,
    ) -> SaveResult:
        """Commit a memory durably and return; embedding and lifecycle checks follow in the background.

        Text already stored (same words, case and spacing aside) confirms that memory instead.
        """
        text = v.clean_content(content)
        mtype = v.parse_type(type) if type is not None else classify(text)
        bucket = bucket_for(mtype)
        source = v.clean_platform(platform)
        now_dt = self.now()
        now = now_dt.timestamp()
        when = v.to_utc(occurred_at).timestamp() if occurred_at is not None else now
        digest = q.norm_hash(text)
        with self.db.write() as conn:
            row = sm.find_active_by_hash(conn, digest)
            if row is not None:
                sm.confirm_memory(conn, row, source, now, pin=pinned)
                m = row.memory
                result = SaveResult(m.id, m.type, m.bucket, True, m.reference_count + 1)
            else:
                new = sm.insert_memory(
                    conn,
                    content=text,
                    type=mtype,
                    platform=source,
                    now=now,
                    occurred_at=when,
                    pinned=pinned,
                    type_inferred=type is None,
                )
                result = SaveResult(new.id, mtype, bucket, False, 1)
        if self._worker is not None:
            self._worker.wake()
        return result

    # -- recall and search ---------------------------------------------------------------------

    @property
    def semantic_search(self) -> bool:
        return self.embedder.state is not ModelState.UNAVAILABLE

    def _query_vector(self, query: str) -> np.ndarray | None:
        state = self.embedder.state
        if not query or state is ModelState.UNAVAILABLE:
            return None
        loading = state in (ModelState.LOADING, ModelState.DOWNLOADING)
        if loading and not self.embedder.wait_ready(self.model_wait_s):
            # Still loading (or downloading): answer from words and recency now rather than stall.
            return None
        try:
            return self.embedder.embed_query(query)
        except ModelUnavailable:
            log.warning("semantic search is off: %s", self.embedder.detail)
            return None

    def recall(
        self, query: str = "", *, count_use: bool = False, tuning: RecallTuning | None = None
    ) -> RecallResult:
        """The three-bucket context for ``query``. Never stale: any change to the store invalidates it.

        ``count_use`` says an assistant is given the result: each memory in it then gains a reference
        and its last-used time (written by the background round, cached answers included). The person
        looking (a preview, the command line) leaves it False, so looking never raises confidence.
        ``tuning`` ranks with other constants than the default (benchmarks compare them); such an
        answer is neither taken from the cache nor kept in it.
        """
        text = v.clean_query(query)
        key = text.casefold()
        generation = self.db.generation()
        with self._cache_lock:
            cached = self._cache.get(key) if tuning is None else None
        if (
            cached is not None
            and cached.generation == generation
            and time.monotonic() - cached.at < CACHE_TTL_S
            and cached.result.semantic_search == self.semantic_search
        ):
            if count_use:
                self._queue_bumps(cached.build_hits)
            return cached.result
        vector = self._query_vector(text)
        now = self.now()
        with self.db.read() as conn:
            generation = sm.generation(conn)
            if vector is not None:
                self._vectors.sync(conn)
            build = build_recall(
                conn,
                query=text,
                query_vector=vector,
                vectors=self._vectors,
                semantic=vector is not None or (not text and self.semantic_search),
                budgets=self.budgets,
                now=now,
                tuning=tuning or DEFAULT_TUNING,
            )
        if tuning is None:
            with self._cache_lock:
                self._cache[key] = _Cached(generation, time.monotonic(), build.hit_rowids, build.result)
        if count_use:
            self._queue_bumps(build.hit_rowids)
        return build.result

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        types: Sequence[str] | None = None,
        buckets: Sequence[str] | None = None,
        include_archived: bool = False,
        count_use: bool = False,
        tuning: RecallTuning | None = None,
    ) -> list[SearchHit]:
        """Memories matching ``query`` by words and meaning, best first (all buckets, any age).

        ``count_use``: an assistant is given the hits, so each gains a reference, as in :meth:`recall`.
        ``tuning``: as in :meth:`recall`.
        """
        text = v.clean_query(query)
        if not text:
            raise InvalidInput("The search query is empty; say what to look for.")
        if not 1 <= limit <= 100:
            raise InvalidInput("The limit must be between 1 and 100.")
        type_set = {v.parse_type(t) for t in types} if types else None
        bucket_set = {v.parse_bucket(b) for b in buckets} if buckets else None
        vector = self._query_vector(text)
        with self.db.read() as conn:
            if vector is not None:
                self._vectors.sync(conn)
            found = build_search(
                conn,
                query=text,
                query_vector=vector,
                vectors=self._vectors,
                limit=limit,
                types=type_set,
                buckets=bucket_set,
                include_archived=include_archived,
                tuning=tuning or DEFAULT_TUNING,
            )
        if count_use:
            self._queue_bumps([row.rowid for row, _ in found])
        return [SearchHit(row.memory, round(score, 4)) for row, score in found]

    # -- listing and editing ---------------------------------------------------------------------

    def get(self, memory_id: str) -> Memory:
        mid = v.clean_id(memory_id)
        with self.db.read() as conn:
            return q.load_provenance(conn, [_existing(conn, mid)])[0].memory

    def list(
        self,
        *,
        bucket: str | None = None,
        type: str | None = None,
        platform: str | None = None,
        status: str = "active",
        limit: int = 50,
        offset: int = 0,
    ) -> list[Memory]:
        """Memories, newest first, filtered by bucket, type, platform and status."""
        if not 1 <= limit <= 500 or not 0 <= offset <= MAX_OFFSET:
            raise InvalidInput(
                f"The limit must be between 1 and 500 and the offset between 0 and {MAX_OFFSET:,}."
            )
        try:
            state = MemoryStatus(status)
        except ValueError:
            names = ", ".join(s.value for s in MemoryStatus)
            raise InvalidInput(f"Unknown status {status[:40]!r}; use one of: {names}.") from None
        bucket_ = v.parse_bucket(bucket) if bucket is not None else None
        type_ = v.parse_type(type) if type is not None else None
        platform_ = v.clean_platform(platform) if platform is not None else None
        with self.db.read() as conn:
            return sm.list_memories(
                conn, status=state, bucket=bucket_, type=type_, platform=platform_, limit=limit, offset=offset
            )

    def _change(self, memory_id: str, apply: Callable[[Connection, q.Row, float], None]) -> Memory:
        mid = v.clean_id(memory_id)
        now = self.now().timestamp()
        with self.db.write() as conn:
            apply(conn, _existing(conn, mid), now)
            return q.load_provenance(conn, [_existing(conn, mid)])[0].memory

    def update(
        self,
        memory_id: str,
        *,
        content: str | None = None,
        type: str | None = None,
        pinned: bool | None = None,
        platform: str | None = None,
    ) -> Memory:
        """Edit a memory's text, type or pin. New text is embedded again in the background."""
        text = v.clean_content(content) if content is not None else None
        mtype = v.parse_type(type) if type is not None else None
        if text is None and mtype is None and pinned is None:
            raise InvalidInput("Nothing to change: give new content, a type, or pinned.")
        source = v.clean_platform(platform) if platform is not None else None

        def apply(conn: Connection, row: q.Row, now: float) -> None:
            sm.edit_memory(conn, row, now, content=text, type=mtype, pinned=pinned, platform=source)

        memory = self._change(memory_id, apply)
        if self._worker is not None:
            self._worker.wake()
        return memory

    def bring_back_text(self, earlier_id: str) -> Memory:
        """Make an earlier text of a memory (an :class:`EarlierText` id from :meth:`history`) its
        text again. That is an edit by the person in Tallei: the text it replaces becomes an earlier
        text in turn, the memory is embedded again, and the change reaches every process's feed and
        recall cache like any edit. Bringing back the text the memory already has changes nothing."""
        try:
            eid = v.clean_id(earlier_id)
        except InvalidInput:
            raise InvalidInput(f"{str(earlier_id)[:40]!r} is not the id of an earlier text.") from None
        now = self.now().timestamp()
        with self.db.write() as conn:
            row, text = sm.earlier_text(conn, eid)
            if text != row.memory.content:
                sm.edit_memory(
                    conn, row, now, content=text, platform=APP_PLATFORM, note=f"brought back {eid}"
                )
            memory = q.load_provenance(conn, [_existing(conn, row.memory.id)])[0].memory
        if self._worker is not None:
            self._worker.wake()
        return memory

    def pin(self, memory_id: str) -> Memory:
        return self.update(memory_id, pinned=True)

    def unpin(self, memory_id: str) -> Memory:
        return self.update(memory_id, pinned=False)

    def forget(self, memory_id: str) -> Memory:
        """Soft-delete: the memory leaves recall and search but stays in the file until purged."""

        def apply(conn: Connection, row: q.Row, now: float) -> None:
            if row.memory.status is not MemoryStatus.DELETED:
                sm.forget_memory(conn, row, now)
                sc.resolve_conflicts_of(conn, row.rowid, now, resolution="forgotten")

        return self._change(memory_id, apply)

    def restore(self, memory_id: str) -> Memory:
        """Undo a forget (or an archive): the memory is active again and re-embedded."""

        def apply(conn: Connection, row: q.Row, now: float) -> None:
            sm.restore_memory(conn, row, now)

        memory = self._change(memory_id, apply)
        if self._worker is not None:
            self._worker.wake()
        return memory

    def bring_back_replaced(self, memory_id: str) -> Memory:
        """Undo a supersede: the replaced memory is active again and the memory that replaced it
        stays, so both are recalled. The change reaches every process's feed and recall cache like a
        restore. The brought-back memory is embedded again but not checked against its neighbours
        again, so the background worker does not retire it a second time."""

        def apply(conn: Connection, row: q.Row, now: float) -> None:
            status = row.memory.status
            if status is not MemoryStatus.SUPERSEDED:
                now_is = "forgotten" if status is MemoryStatus.DELETED else str(status)
                raise InvalidInput(
                    f"Memory {row.memory.id} was not replaced by a newer one (it is {now_is}), "
                    "so there is nothing to bring back."
                )
            sm.restore_memory(conn, row, now)

        memory = self._change(memory_id, apply)
        if self._worker is not None:
            self._worker.wake()
        return memory

    def purge(self, memory_id: str) -> None:
        """Erase a memory for good: row, provenance, vector, text index and conflicts."""
        mid = v.clean_id(memory_id)
        now = self.now().timestamp()
        with self.db.write() as conn:
            sm.purge_memory(conn, _existing(conn, mid), now)

    # -- conflicts ---------------------------------------------------------------------------------

    def conflicts(self, *, include_resolved: bool = False) -> builtins.list[Conflict]:
        with self.db.read() as conn:
            return sc.list_conflicts(conn, include_resolved=include_resolved)

    def resolve_conflict(
        self, conflict_id: str, resolution: str | ConflictResolution, *, content: str | None = None
    ) -> Conflict:
        """Settle a conflict: keep one side, keep both, or replace both with ``content``."""
        cid = v.clean_id(conflict_id, "conflict")
        how = next((r for r in CHOSEN_RESOLUTIONS if r.value == str(resolution)), None)
        if how is None:
            names = ", ".join(r.value for r in CHOSEN_RESOLUTIONS)
            raise InvalidInput(f"Unknown resolution {str(resolution)[:40]!r}; use one of: {names}.")
        text = v.clean_content(content) if how is ConflictResolution.REPLACE else None
        if content is not None and how is not ConflictResolution.REPLACE:
            raise InvalidInput("Only the 'replace' resolution takes new content.")
        now = self.now().timestamp()
        with self.db.write() as conn:
            result = sc.resolve_conflict(conn, cid, how, now, content=text)
        if self._worker is not None:
            self._worker.wake()
        return result

    def reopen_conflict(self, conflict_id: str) -> Conflict:
        """Undo a conflict's resolution in one transaction and return it, open again.

        Brings back the side(s) it retired, forgets the merged memory a 'replace' saved, unpins what
        'keep both' pinned. Raises :class:`InvalidInput` for an open conflict, or one closed because
        a side was forgotten (restoring that memory is the undo there).
        """
        cid = v.clean_id(conflict_id, "conflict")
        now = self.now().timestamp()
        with self.db.write() as conn:
            result = sr.reopen_conflict(conn, cid, now)
        if self._worker is not None:
            self._worker.wake()  # the restored sides are embedded again
        return result

    # -- status ------------------------------------------------------------------------------------

    def status(self) -> StoreStatus:
        with self.db.read() as conn:
            counts = q.status_counts(conn)
            pending = sm.pending_count(conn)
            open_conflicts = sc.open_conflict_count(conn)
        return StoreStatus(
            path=str(self.db.path),
            key_source=self.db.key_source,
            counts={str(b): counts.get(("active", str(b)), 0) for b in Bucket},
            archived=sum(n for (s, _), n in counts.items() if s == "archived"),
            deleted=sum(n for (s, _), n in counts.items() if s == "deleted"),
            pending_embeddings=pending,
            open_conflicts=open_conflicts,
            semantic_search=self.semantic_search,
            model_state=f"{self.embedder.state}: {self.embedder.detail}",
            schema_version=self.db.schema_version,
        )

    # -- change feed -------------------------------------------------------------------------------

    def changes_since(self, seq: int, *, limit: int = 1000) -> ChangeBatch:
        """Events committed after ``seq`` (by any process), oldest first, at most ``limit``.

        Pass the batch's ``last_seq`` back next time. ``reload`` says the events after ``seq`` were
        pruned (or the store was replaced): reload whatever is shown instead of applying events.
        """
        if seq < 0:
            raise InvalidInput("The change sequence number cannot be negative; start from 0.")
        if not 1 <= limit <= 100_000:
            raise InvalidInput("The limit must be between 1 and 100,000.")
        with self.db.read() as conn:
            return se.read_changes(conn, seq, limit)

    def last_change_seq(self) -> int:
        """The newest event's ``seq`` (0 before any change): where a fresh view starts following."""
        with self.db.read() as conn:
            return se.last_seq(conn)

    def store_changed(self) -> bool:
        """True when any connection, in any process, committed since the previous call (or since this
        service was built). Cheap: one ``PRAGMA data_version``, no table is read."""
        with self._data_version_lock:
            version = self.db.data_version()
            changed = version != self._data_version
            self._data_version = version
        return changed

    # -- pausing assistants ------------------------------------------------------------------------

    def paused_platforms(self) -> frozenset[str]:
        """The platforms whose tool calls are refused, as set by any process on this store.

        Cheap enough to ask on every tool call: the set is cached and read again only after some
        connection committed (one ``PRAGMA data_version``, no table read, when nothing changed).
        """
        return self._pauses.paused()

    def set_platform_paused(self, platform: str, paused: bool) -> None:
        """Pause (or resume) an assistant platform's access: while paused, its tool calls answer with
        an error and read or write nothing. Idempotent; each real change is an event in the feed."""
        self._pauses.set(platform, paused)

    # -- background work ---------------------------------------------------------------------------

    def _queue_bumps(self, rowids: Sequence[int]) -> None:
        if rowids:
            with self._bumps_lock:
                self._bumps.update(rowids)

    def _flush_bumps(self) -> None:
        with self._bumps_lock:
            bumps, self._bumps = self._bumps, Counter()
        if not bumps:
            return
        now = self.now().timestamp()
        with self.db.write() as conn:
            sm.flush_bumps(conn, bumps, now, promote_at=PROMOTE_AT)

    def run_maintenance(self) -> tuple[int, int]:
        """Promote busy short-term memories and archive long-term ones untouched for a year.

        Returns (promoted, archived). Runs on the worker about hourly; callable directly.
        """
        now_dt = self.now()
        now = now_dt.timestamp()
        stale = (now_dt - ARCHIVE_AFTER).timestamp()
        with self.db.write() as conn:
            promoted = sm.promote_busy(conn, now, at_refs=PROMOTE_AT)
            archived = sm.archive_stale(conn, now, untouched_since=stale)
            trim_log(conn)
            se.prune_events(conn, now)
        self._last_maintenance = time.monotonic()
        return promoted, archived

    def _pending(self, limit: int) -> builtins.list[sm.Pending]:
        embed_too = self.embedder.state is not ModelState.UNAVAILABLE
        with self.db.read() as conn:
            return sm.pending_work(conn, limit, embed_too=embed_too)

    def _background_round(self) -> bool:
        """One round of background work; True if more is waiting."""
        self._flush_bumps()
        if time.monotonic() - self._last_maintenance > MAINTENANCE_EVERY_S:
            self.run_maintenance()
        self._auto_backup()
        batch = self._pending(EMBED_BATCH)
        if not batch:
            return False
        vectors: list[np.ndarray | None] = [None] * len(batch)
        if self.embedder.state is not ModelState.UNAVAILABLE:
            try:
                matrix = self.embedder.embed([p.content for p in batch])
                vectors = list(matrix)
            except ModelUnavailable:
                log.warning("semantic search is off: %s", self.embedder.detail)
        # Types are refined first: dedup, supersede and conflicts compare types and search buckets.
        model = self._type_model or load_model()
        refined = [
            _refined_type(model, p, vec, self.embedder.name) for p, vec in zip(batch, vectors, strict=True)
        ]
        batch = [
            replace(p, bucket=bucket_for(t)) if t is not None else p
            for p, t in zip(batch, refined, strict=True)
        ]
        neighbours = self._neighbours(batch, vectors)
        now = self.now().timestamp()
        with self.db.write() as conn:
            for p, vector, near, new_type in zip(batch, vectors, neighbours, refined, strict=True):
                if new_type is not None:
                    sm.refine_type(conn, p, new_type, now)
                # Gather, decide, apply: the store reads one case, a pure function rules on it.
                case = lr.gather_case(conn, p.rowid, p.content, vector, near)
                if case is not None:
                    lr.apply_decision(conn, case, decide(case), vector, now)
        return len(batch) == EMBED_BATCH

    def _neighbours(
        self, batch: Sequence[sm.Pending], vectors: Sequence[np.ndarray | None]
    ) -> builtins.list[builtins.list[tuple[int, float]] | None]:
        """Each new memory's nearest older memories in its bucket, found before the write lock.

        From the in-process index (a vec0 scan inside the write transaction blocked saves for
        seconds at 50,000 memories) plus the older members of this batch, which are not indexed
        yet. ``gather_case`` re-reads every candidate inside the transaction.
        """
        if all(v is None for v in vectors):
            return [None] * len(batch)
        with self.db.read() as conn:
            self._vectors.sync(conn)
        out: builtins.list[builtins.list[tuple[int, float]] | None] = []
        for i, (p, vector) in enumerate(zip(batch, vectors, strict=True)):
            if vector is None:
                out.append(None)
                continue
            near = [
                (r, s)
                for r, s in self._vectors.search(vector, lr.NEIGHBOURS_K, bucket=p.bucket)
                if r != p.rowid
            ]
            near += [
                (batch[j].rowid, float(np.dot(vector, other)))
                for j, other in enumerate(vectors[:i])
                if other is not None and batch[j].bucket is p.bucket
            ]
            near.sort(key=lambda pair: pair[1], reverse=True)
            out.append(near[: lr.NEIGHBOURS_K])
        return out

    # -- the embedding model ---------------------------------------------------------------------

    def model_status(self) -> ModelStatus:
        """Where the embedding model stands: loading, downloading (with progress), ready or off."""
        return self.embedder.status

    # -- table view: listing, history, platform usage --------------------------------------------

    def list_page(
        self,
        filter: MemoryFilter = DEFAULT_FILTER,
        *,
        sort: SortKey = SortKey.UPDATED,
        descending: bool = True,
        limit: int = 100,
        offset: int = 0,
        after: str | None = None,
    ) -> MemoryPage:
        """One page of the memories matching ``filter``, in ``sort`` order (ties: oldest row first
        ascending, newest first descending), with the total count and a keyset cursor.

        Page by ``offset``, or pass the previous page's ``next_cursor`` as ``after`` (not both): a
        cursor stays correct while memories are added or removed. Raises :class:`InvalidInput` for
        a limit outside 1..1000, a bad offset, a cursor from another order, or a malformed filter.
        """
        f = v.clean_filter(filter)
        order = v.parse_sort(sort)
        if type(descending) is not bool:
            raise InvalidInput("descending must be true or false.")
        if type(limit) is not int or not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"The page size must be between 1 and {MAX_PAGE:,}.")
        if type(offset) is not int or not 0 <= offset <= MAX_OFFSET:
            raise InvalidInput(f"The offset must be between 0 and {MAX_OFFSET:,}.")
        cursor = listing.decode_cursor(after, order, descending) if after is not None else None
        if cursor is not None and offset:
            raise InvalidInput("Give an offset or a page cursor, not both.")
        with self.db.read() as conn:
            memories, next_at = listing.list_page(
                conn, f, sort=order, descending=descending, limit=limit, offset=offset, after=cursor
            )
            total = listing.count(conn, f)
        return MemoryPage(
            memories=tuple(memories),
            total=total,
            next_cursor=listing.encode_cursor(next_at) if next_at is not None else None,
        )

    def count(self, filter: MemoryFilter = DEFAULT_FILTER) -> int:
        """How many memories match ``filter``."""
        f = v.clean_filter(filter)
        with self.db.read() as conn:
            return listing.count(conn, f)

    def history(self, memory_id: str) -> MemoryHistory:
        """A memory with its provenance, what it replaced or absorbed, what replaced it, its conflicts.

        Follows ``superseded_by`` links: a memory replaced by a conflict's resolution shows that in
        ``conflicts``.
        """
        mid = v.clean_id(memory_id)
        with self.db.read() as conn:
            found = listing.history(conn, mid)
            return replace(found, earlier=sm.earlier_texts(conn, _existing(conn, mid).rowid))

    def platform_usage(self) -> builtins.list[PlatformUsage]:
        """Every assistant platform that ever saved, confirmed or edited a memory: how many active
        memories it is part of (the count a ``platforms`` filter gives) and when it was last seen,
        latest first. What the person did in Tallei itself (:data:`APP_PLATFORM`: edits, merged
        conflicts) is no assistant's and is left out."""
        with self.db.read() as conn:
            return [u for u in listing.platform_usage(conn) if u.platform != APP_PLATFORM]

    # -- export, import and backups ----------------------------------------------------------------

    def export_memories(self) -> dict[str, Any]:
        """Every memory (all statuses, with provenance) and conflict, as the versioned export document."""
        return self._exports.export()

    def import_memories(self, document: Mapping[str, Any]) -> ImportReport:
        """Merge an export document into the store in one transaction (idempotent).

        The whole document is checked first: a bad one raises InvalidInput and changes nothing. New
        memories go through the background lifecycle (dedup, supersede, conflicts) like saves.
        """
        report = self._exports.import_document(document)
        if report.added and self._worker is not None:
            self._worker.wake()
        return report

    def configure_backups(
        self, folder: Path, *, keep: int = backups.DEFAULT_KEEP, every: timedelta = backups.AUTO_BACKUP_EVERY
    ) -> None:
        """Keep ``keep`` backups in ``folder`` and let the background worker make one when the newest
        is older than ``every`` (judged by this service's clock)."""
        self._backups.configure(folder, keep=keep, every=every)

    def backup_now(self, folder: Path) -> Path:
        """Copy the store, still encrypted with its key, into ``folder``; prune old backups; return the copy."""
        return self._backups.backup_now(folder)

    def _auto_backup(self) -> None:
        """Each background round's turn at the backup schedule, which the Backups keep."""
        self._backups.run_if_due()


def _existing(conn: Connection, memory_id: str) -> q.Row:
    return sm.existing(conn, memory_id)
