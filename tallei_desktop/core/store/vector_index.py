"""An in-process copy of the ``vec0`` vectors, for fast k-NN at recall time.

Why: SQLite drops a connection's whole page cache whenever another connection commits, and the vectors
are most of the file (50,000 memories ≈ 77 MB of encrypted pages). Scanning ``vec0`` right after any
save therefore re-reads and re-decrypts everything (~250 ms at 50,000). Here the vectors are held
decrypted in one numpy matrix per process and kept in step with the store through ``vector_log``: every
change to ``memory_vectors`` (by any process) appends the memory's rowid there in the same
transaction, and :meth:`VectorIndex.sync` applies only what changed since it last looked. If the log
was trimmed past that point, it reloads everything.

``vec0`` stays the store of record; this is a cache of it that can never be ahead of, or silently
behind, the snapshot it is synced in.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

import apsw
import numpy as np
import numpy.typing as npt

from tallei_desktop.core.models import Bucket

__all__ = ["VectorIndex"]

_CODES: dict[str, int] = {str(b): i for i, b in enumerate(Bucket)}
#: Log rows kept by :meth:`VectorIndex.trim_log`; a process further behind than this reloads.
LOG_KEEP = 20_000


class VectorIndex:
    def __init__(self, dim: int = 384) -> None:
        self._dim = dim
        self._lock = threading.Lock()
        self._matrix: npt.NDArray[np.float32] = np.zeros((0, dim), dtype=np.float32)
        self._bucket = np.zeros(0, dtype=np.int8)
        self._alive = np.zeros(0, dtype=bool)
        self._rowid = np.zeros(0, dtype=np.int64)
        self._slot: dict[int, int] = {}
        self._free: list[int] = []
        self._used = 0
        self._seq = -1  # -1: never loaded

    def __len__(self) -> int:
        return len(self._slot)

    def sync(self, conn: apsw.Connection) -> None:
        """Bring the index up to the snapshot ``conn`` reads; call inside a read transaction."""
        with self._lock:
            if self._seq < 0:
                self._load(conn)
                return
            changes: list[Any] = conn.execute(
                "SELECT seq, memory_rowid FROM vector_log WHERE seq > ? ORDER BY seq", (self._seq,)
            ).fetchall()
            if not changes:
                return
            if int(changes[0][0]) != self._seq + 1:
                oldest: Any = conn.execute("SELECT min(seq) FROM vector_log").fetchall()[0][0]
                if oldest is None or int(oldest) > self._seq + 1:
                    self._load(conn)  # the log no longer reaches back to us
                    return
            for rowid in {int(r) for _, r in changes}:
                found: list[Any] = conn.execute(
                    "SELECT embedding, bucket FROM memory_vectors WHERE rowid = ?", (rowid,)
                ).fetchall()
                if found:
                    self._put(rowid, bytes(found[0][0]), str(found[0][1]))
                else:
                    self._drop(rowid)
            self._seq = int(changes[-1][0])

    def search(
        self,
        vector: npt.NDArray[np.float32],
        k: int,
        *,
        bucket: Bucket | None = None,
        exclude: Bucket | None = None,
    ) -> list[tuple[int, float]]:
        """(rowid, cosine similarity) of the ``k`` most similar vectors, best first."""
        with self._lock:
            n = self._used
            if n == 0 or k <= 0:
                return []
            sims = self._matrix[:n] @ np.asarray(vector, dtype=np.float32)
            mask = ~self._alive[:n]
            if bucket is not None:
                mask |= self._bucket[:n] != _CODES[str(bucket)]
            if exclude is not None:
                mask |= self._bucket[:n] == _CODES[str(exclude)]
            sims[mask] = -np.inf
            take = min(k, n - int(mask.sum()))
            if take <= 0:
                return []
            top = np.argpartition(-sims, take - 1)[:take]
            top = top[np.argsort(-sims[top])]
            rowids = self._rowid[top]
        return [(int(r), float(s)) for r, s in zip(rowids, sims[top], strict=True)]

    def similarities(self, vector: npt.NDArray[np.float32], rowids: Iterable[int]) -> dict[int, float]:
        """rowid -> cosine similarity to ``vector`` for those of ``rowids`` that have a vector here."""
        with self._lock:
            slots = [(r, s) for r in rowids if (s := self._slot.get(r)) is not None]
            if not slots:
                return {}
            sims = self._matrix[[s for _, s in slots]] @ np.asarray(vector, dtype=np.float32)
        return {r: float(x) for (r, _), x in zip(slots, sims, strict=True)}

    def _load(self, conn: apsw.Connection) -> None:
        seq: Any = conn.execute("SELECT max(seq) FROM vector_log").fetchall()[0][0]
        rows: list[Any] = conn.execute("SELECT rowid, embedding, bucket FROM memory_vectors").fetchall()
        n = len(rows)
        self._matrix = np.zeros((max(n, 64), self._dim), dtype=np.float32)
        self._bucket = np.zeros(max(n, 64), dtype=np.int8)
        self._alive = np.zeros(max(n, 64), dtype=bool)
        self._rowid = np.zeros(max(n, 64), dtype=np.int64)
        self._slot = {}
        self._free = []
        for i, (rowid, blob, bucket) in enumerate(rows):
            self._matrix[i] = np.frombuffer(bytes(blob), dtype=np.float32)
            self._bucket[i] = _CODES.get(str(bucket), -1)
            self._alive[i] = True
            self._rowid[i] = int(rowid)
            self._slot[int(rowid)] = i
        self._used = n
        self._seq = int(seq) if seq is not None else 0

    def _put(self, rowid: int, blob: bytes, bucket: str) -> None:
        slot = self._slot.get(rowid)
        if slot is None:
            if self._free:
                slot = self._free.pop()
            else:
                if self._used == len(self._matrix):
                    self._grow()
                slot = self._used
                self._used += 1
            self._slot[rowid] = slot
        self._matrix[slot] = np.frombuffer(blob, dtype=np.float32)
        self._bucket[slot] = _CODES.get(bucket, -1)
        self._alive[slot] = True
        self._rowid[slot] = rowid

    def _drop(self, rowid: int) -> None:
        slot = self._slot.pop(rowid, None)
        if slot is not None:
            self._alive[slot] = False
            self._matrix[slot] = 0.0
            self._free.append(slot)

    def _grow(self) -> None:
        size = max(64, 2 * len(self._matrix))
        extra = size - len(self._matrix)
        self._matrix = np.vstack([self._matrix, np.zeros((extra, self._dim), dtype=np.float32)])
        self._bucket = np.concatenate([self._bucket, np.zeros(extra, dtype=np.int8)])
        self._alive = np.concatenate([self._alive, np.zeros(extra, dtype=bool)])
        self._rowid = np.concatenate([self._rowid, np.zeros(extra, dtype=np.int64)])


def trim_log(conn: apsw.Connection) -> None:
    """Drop log rows no process needs any more (it reloads if it was that far behind)."""
    conn.execute("DELETE FROM vector_log WHERE seq <= (SELECT max(seq) FROM vector_log) - ?", (LOG_KEEP,))
