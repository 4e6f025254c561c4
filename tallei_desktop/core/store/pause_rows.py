"""The rows of paused assistant platforms: their tool calls are refused by every process.

``core/pauses.py`` caches the set for the service; this is its SQL.
"""

from __future__ import annotations

import apsw

from tallei_desktop.core.models import EventKind
from tallei_desktop.core.store.events import record_event

__all__ = ["paused_platforms", "set_paused"]


def paused_platforms(conn: apsw.Connection) -> frozenset[str]:
    return frozenset(str(p) for (p,) in conn.execute("SELECT platform FROM paused_platforms"))


def set_paused(conn: apsw.Connection, platform: str, paused: bool, now: float) -> bool:
    """Pause or resume ``platform``; records an event and returns True only when that changed anything."""
    if paused:
        changed = conn.execute(
            "INSERT INTO paused_platforms (platform, paused_at) VALUES (?, ?) "
            "ON CONFLICT (platform) DO NOTHING RETURNING platform",
            (platform, now),
        ).fetchall()
    else:
        changed = conn.execute(
            "DELETE FROM paused_platforms WHERE platform = ? RETURNING platform", (platform,)
        ).fetchall()
    if changed:
        kind = EventKind.PLATFORM_PAUSED if paused else EventKind.PLATFORM_RESUMED
        record_event(conn, kind, at=now, platform=platform)
    return bool(changed)
