"""Ordered, named, transactional schema migrations; the version lives in ``PRAGMA user_version``.

Times are stored as UTC Unix seconds (REAL). ``memories.rowid`` joins the vector and text indexes;
``memories.id`` is the public id.
"""

from __future__ import annotations

from collections.abc import Callable

import apsw

from tallei_desktop.core.errors import StoreUnavailable

__all__ = ["EMBEDDING_DIM", "MIGRATIONS", "SCHEMA_VERSION", "migrate"]

EMBEDDING_DIM = 384


def _v1_initial(conn: apsw.Connection) -> None:
    conn.execute(
        f"""
        CREATE TABLE meta (
            key   TEXT PRIMARY KEY,
            value INTEGER NOT NULL
        ) WITHOUT ROWID;
        INSERT INTO meta (key, value) VALUES ('generation', 0);

        CREATE TABLE memories (
            rowid              INTEGER PRIMARY KEY,
            id                 TEXT NOT NULL UNIQUE,
            content            TEXT NOT NULL,
            norm_hash          TEXT NOT NULL,
            type               TEXT NOT NULL,
            bucket             TEXT NOT NULL,
            platform           TEXT NOT NULL,
            created_at         REAL NOT NULL,
            updated_at         REAL NOT NULL,
            occurred_at        REAL NOT NULL,
            reference_count    INTEGER NOT NULL DEFAULT 1,
            last_referenced_at REAL,
            pinned             INTEGER NOT NULL DEFAULT 0,
            status             TEXT NOT NULL DEFAULT 'active',
            superseded_by      TEXT,
            embedded           INTEGER NOT NULL DEFAULT 0,
            processed          INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX memories_bucket ON memories (status, bucket, reference_count DESC);
        CREATE INDEX memories_recent ON memories (status, bucket, occurred_at DESC);
        CREATE INDEX memories_hash ON memories (norm_hash) WHERE status = 'active';
        CREATE INDEX memories_pending ON memories (processed, embedded) WHERE processed = 0 OR embedded = 0;

        CREATE TABLE provenance (
            memory_rowid INTEGER NOT NULL REFERENCES memories (rowid) ON DELETE CASCADE,
            platform     TEXT NOT NULL,
            at           REAL NOT NULL,
            action       TEXT NOT NULL
        );
        CREATE INDEX provenance_memory ON provenance (memory_rowid);

        CREATE TABLE conflicts (
            id          TEXT PRIMARY KEY,
            a_rowid     INTEGER NOT NULL REFERENCES memories (rowid) ON DELETE CASCADE,
            b_rowid     INTEGER NOT NULL REFERENCES memories (rowid) ON DELETE CASCADE,
            status      TEXT NOT NULL DEFAULT 'open',
            created_at  REAL NOT NULL,
            resolved_at REAL,
            resolution  TEXT,
            UNIQUE (a_rowid, b_rowid)
        );
        CREATE INDEX conflicts_open ON conflicts (status);

        CREATE VIRTUAL TABLE memory_fts USING fts5 (
            content, content = 'memories', content_rowid = 'rowid', tokenize = 'porter unicode61'
        );
        CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
            INSERT INTO memory_fts (rowid, content) VALUES (new.rowid, new.content);
        END;
        CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
            INSERT INTO memory_fts (memory_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
        END;
        CREATE TRIGGER memories_fts_update AFTER UPDATE OF content ON memories BEGIN
            INSERT INTO memory_fts (memory_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
            INSERT INTO memory_fts (rowid, content) VALUES (new.rowid, new.content);
        END;

        CREATE VIRTUAL TABLE memory_vectors USING vec0 (
            embedding float[{EMBEDDING_DIM}] distance_metric = cosine,
            bucket text
        );
        """
    )


def _v2_vector_log(conn: apsw.Connection) -> None:
    # vec0 tables take no triggers, so the code that changes a vector appends here itself.
    conn.execute(
        """
        CREATE TABLE vector_log (
            seq          INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_rowid INTEGER NOT NULL
        );
        """
    )


def _v3_token_counts(conn: apsw.Connection) -> None:
    # Recall decides dump-all vs hybrid from the long-term bucket's total tokens; a generated column
    # in a covering index answers that without reading (and decrypting) every memory's text.
    conn.execute(
        """
        ALTER TABLE memories ADD COLUMN tokens INTEGER GENERATED ALWAYS AS ((length(content) + 3) / 4) VIRTUAL;
        CREATE INDEX memories_tokens ON memories (status, bucket, tokens);
        CREATE INDEX memories_created ON memories (status, bucket, created_at DESC);
        """
    )


def _v4_events(conn: apsw.Connection) -> None:
    # The change feed: one row per committed change, written in the change's own transaction.
    # AUTOINCREMENT so a pruned seq is never handed out again (readers compare against it).
    conn.execute(
        """
        CREATE TABLE events (
            seq         INTEGER PRIMARY KEY AUTOINCREMENT,
            kind        TEXT NOT NULL,
            at          REAL NOT NULL,
            memory_id   TEXT,
            conflict_id TEXT,
            platform    TEXT,
            detail      TEXT NOT NULL DEFAULT ''
        );
        """
    )


def _v5_listing_order(conn: apsw.Connection) -> None:
    # The table view lists by last change, newest first, and pages through that order by keyset
    # (updated_at, rowid). Status is last and not first on purpose: an index that leads with status
    # draws the planner away from memories_hash in save's duplicate lookup (a scan of every active
    # memory per save); the listing asks for this index by writing its status filter as +m.status.
    conn.execute("CREATE INDEX memories_updated ON memories (updated_at, rowid, status);")


def _v6_paused_platforms(conn: apsw.Connection) -> None:
    # Assistants the person has paused: every process on the store refuses their tool calls.
    conn.execute(
        """
        CREATE TABLE paused_platforms (
            platform  TEXT PRIMARY KEY,
            paused_at REAL NOT NULL
        ) WITHOUT ROWID;
        """
    )


def _v7_type_inferred(conn: apsw.Connection) -> None:
    # Whether the type was inferred from the text (the background worker may refine it once the
    # embedding exists) or given by the caller, an edit or an import (never changed by the worker).
    # Memories saved before this migration count as given: nothing known about them is overridden.
    conn.execute("ALTER TABLE memories ADD COLUMN type_inferred INTEGER NOT NULL DEFAULT 0;")


def _v8_edit_history(conn: apsw.Connection) -> None:
    # An edit's provenance entry keeps the text it replaced, so the history can show what changed.
    # Edits recorded before this migration have none: that text is gone.
    conn.execute("ALTER TABLE provenance ADD COLUMN previous TEXT;")


#: Append only. Each entry runs in its own transaction and moves ``user_version`` to its index + 1.
MIGRATIONS: tuple[tuple[str, Callable[[apsw.Connection], None]], ...] = (
    ("initial schema", _v1_initial),
    ("vector change log", _v2_vector_log),
    ("token counts and newest-first index", _v3_token_counts),
    ("change feed", _v4_events),
    ("listing order index", _v5_listing_order),
    ("paused assistants", _v6_paused_platforms),
    ("inferred types", _v7_type_inferred),
    ("text before each edit", _v8_edit_history),
)
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(conn: apsw.Connection) -> int:
    """Bring the schema up to date; safe to call from several processes at once. Returns the version."""
    while True:
        # BEGIN IMMEDIATE takes the write lock first, so two processes never migrate at once.
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = int(conn.execute("PRAGMA user_version").fetchall()[0][0] or 0)
            if version > SCHEMA_VERSION:
                raise StoreUnavailable(
                    f"The memory store was written by a newer Tallei (schema {version}, this one knows "
                    f"{SCHEMA_VERSION}). Update Tallei to open it."
                )
            if version == SCHEMA_VERSION:
                conn.execute("COMMIT")
                return version
            _name, step = MIGRATIONS[version]
            step(conn)
            conn.execute(f"PRAGMA user_version = {version + 1}")
            conn.execute("COMMIT")
        except BaseException:
            if not conn.getautocommit():
                conn.execute("ROLLBACK")
            raise
