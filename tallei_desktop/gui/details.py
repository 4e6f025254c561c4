"""The details pane of a memory: its full text, facts, who saved it, and its history, as HTML."""

from __future__ import annotations

import html

from tallei_desktop.core import (
    APP_PLATFORM,
    CHOSEN_RESOLUTIONS,
    Bucket,
    Confidence,
    Conflict,
    ConflictResolution,
    Memory,
    MemoryHistory,
    MemoryStatus,
    Provenance,
)
from tallei_desktop.gui.models import short_time, uses_since_saved

__all__ = [
    "CONFLICT_SCHEME",
    "MEMORY_SCHEME",
    "REOPEN_SCHEME",
    "REVIVE_SCHEME",
    "VERSION_SCHEME",
    "render_details",
]

#: The detail pane's link scheme for undoing a conflict's outcome: ``reopen:<conflict id>``.
REOPEN_SCHEME = "reopen"
#: The detail pane's link scheme for going to an open conflict: ``conflict:<conflict id>``.
CONFLICT_SCHEME = "conflict"
#: The detail pane's link scheme for making an earlier text current again: ``version:<earlier text id>``.
VERSION_SCHEME = "version"
#: The detail pane's link scheme for going to another memory: ``memory:<memory id>``.
MEMORY_SCHEME = "memory"
#: The detail pane's link scheme for bringing back a memory a newer one replaced: ``revive:<memory id>``.
REVIVE_SCHEME = "revive"
#: How much of an edit's earlier text the trail quotes.
PREVIOUS_CHARS = 300

_CONFIDENCE = {
    Confidence.UNCONFIRMED: "Unconfirmed",
    Confidence.MED: "Medium",
    Confidence.HIGH: "High",
}
#: The page an active memory is listed on.
_PAGE = {Bucket.PREFERENCE: "Preferences", Bucket.LONG_TERM: "Long-term", Bucket.SHORT_TERM: "Recent"}
_STATUS = {
    MemoryStatus.ACTIVE: "active",
    MemoryStatus.ARCHIVED: "archived: no assistant used it for a year",
    MemoryStatus.SUPERSEDED: "replaced by a newer memory",
    MemoryStatus.MERGED: "folded into an earlier copy of the same memory",
    MemoryStatus.DELETED: "forgotten",
}
_LISTED = {
    MemoryStatus.ARCHIVED: "Archived",
    MemoryStatus.DELETED: "Forgotten",
    MemoryStatus.SUPERSEDED: "Replaced",
}


def _who(platform: str) -> str:
    """An assistant's name, or "you in Tallei" for what the person did in this app."""
    return "you in Tallei" if platform == APP_PLATFORM else platform


def _times(n: int) -> str:
    return "once" if n == 1 else "twice" if n == 2 else f"{n:,} times"


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _facts(m: Memory) -> list[tuple[str, str]]:
    since = uses_since_saved(m)
    listed = _PAGE[m.bucket] if m.status is MemoryStatus.ACTIVE else _LISTED.get(m.status)
    facts = [("Type", str(m.type))]
    if listed is not None:
        facts.append(("Listed under", listed))
    facts += [
        ("Status", _STATUS[m.status]),
        ("Confidence", _CONFIDENCE[m.confidence]),
        (
            "Used or confirmed",
            f"{_times(since)} since it was saved" if since > 0 else "not since it was saved",
        ),
        ("Last used or confirmed", short_time(m.last_referenced_at) or "not yet"),
        ("Saved", short_time(m.created_at)),
        ("Changed", short_time(m.updated_at)),
        ("Pinned", "yes" if m.pinned else "no"),
        ("Id", m.id),
    ]
    return facts


def _trail_entry(p: Provenance, details: MemoryHistory) -> str:
    e = html.escape
    line = f"{e(p.action)} by <b>{e(_who(p.platform))}</b>, {e(short_time(p.at))}"
    if p.previous is not None:
        line += f"; before: “{e(_clip(p.previous, PREVIOUS_CHARS))}”"
        # The history lists the same edits as earlier texts, each with the id that brings it back.
        earlier = next(
            (
                t
                for t in details.earlier
                if (t.replaced_at, t.replaced_by, t.content) == (p.at, p.platform, p.previous)
            ),
            None,
        )
        if earlier is not None and earlier.content != details.memory.content:
            line += f" <a href='{VERSION_SCHEME}:{e(earlier.id)}'>bring back</a>"
    return f"<li>{line}</li>"


def _outcome(c: Conflict, m: Memory) -> str:
    """What became of conflict ``c``, told from the side of ``m``, in plain words."""
    if c.resolution is None:
        return "open"
    mine_first = c.memory_a.id == m.id
    kept_this = {
        ConflictResolution.KEEP_FIRST: mine_first,
        ConflictResolution.KEEP_SECOND: not mine_first,
    }
    if c.resolution in kept_this:
        return "you kept this one" if kept_this[c.resolution] else "you kept the other one"
    return {
        ConflictResolution.KEEP_BOTH: "you kept both",
        ConflictResolution.REPLACE: "you merged both into one new memory",
        ConflictResolution.FORGOTTEN: "settled when one of the two was forgotten",
    }[c.resolution]


def _conflict_entry(c: Conflict, m: Memory) -> str:
    e = html.escape
    other = c.memory_b if c.memory_a.id == m.id else c.memory_a
    link = ""
    if c.resolution is None:
        link = f" <a href='{CONFLICT_SCHEME}:{e(c.id)}'>settle it</a>"
    elif c.resolution in CHOSEN_RESOLUTIONS:
        label = "undo" if c.resolution is ConflictResolution.KEEP_BOTH else "bring back"
        link = f" <a href='{REOPEN_SCHEME}:{e(c.id)}'>{label}</a>"
    return (
        f"<li>conflict with “{e(other.content[:120])}” from <b>{e(_who(other.platform))}</b> "
        f"({e(_outcome(c, m))}){link}</li>"
    )


def _replaced_entry(old: Memory, *, revivable: bool) -> str:
    """A memory this one replaced: a link that opens it, and one that brings it back."""
    e = html.escape
    line = (
        f"replaced “<a href='{MEMORY_SCHEME}:{e(old.id)}'>{e(old.content[:120])}</a>” "
        f"from <b>{e(_who(old.platform))}</b>"
    )
    if revivable and old.status is MemoryStatus.SUPERSEDED:
        line += f" <a href='{REVIVE_SCHEME}:{e(old.id)}'>bring back</a>"
    return f"<li>{line}</li>"


def render_details(details: MemoryHistory) -> str:
    """The detail pane's HTML: full text, facts, provenance trail and history."""
    m = details.memory
    e = html.escape
    parts = [f"<p style='font-size:large'>{e(m.content).replace(chr(10), '<br>')}</p>", "<table>"]
    parts += [f"<tr><td><b>{e(k)}</b>&nbsp;</td><td>{e(v)}</td></tr>" for k, v in _facts(m)]
    if m.status is MemoryStatus.SUPERSEDED and details.replaced_by:
        # The memory that stands in its place now, near the top: why this one is not recalled.
        now = details.replaced_by[-1]
        parts.append(
            f"<tr><td><b>Replaced by</b>&nbsp;</td><td>“<a href='{MEMORY_SCHEME}:{e(now.id)}'>"
            f"{e(_clip(now.content, 120))}</a>” from <b>{e(_who(now.platform))}</b></td></tr>"
        )
    parts.append("</table><h4>Who saved and changed it</h4><ul>")
    trail = m.provenance or ()
    parts += [_trail_entry(p, details) for p in trail]
    if not trail:
        parts.append(f"<li>saved by <b>{e(_who(m.platform))}</b>, {e(short_time(m.created_at))}</li>")
    parts.append("</ul>")
    history: list[str] = []
    history += [
        f"<li>replaced by “<a href='{MEMORY_SCHEME}:{e(n.id)}'>{e(n.content[:120])}</a>” ({e(n.id)})</li>"
        for n in details.replaced_by
    ]
    # A memory a settled conflict retired comes back through that conflict's own link.
    settled = {
        (c.memory_b if c.memory_a.id == m.id else c.memory_a).id
        for c in details.conflicts
        if c.resolution in CHOSEN_RESOLUTIONS
    }
    history += [_replaced_entry(o, revivable=o.id not in settled) for o in details.replaced]
    history += [
        f"<li>absorbed the duplicate “{e(o.content[:120])}” from <b>{e(_who(o.platform))}</b></li>"
        for o in details.merged
    ]
    history += [_conflict_entry(c, m) for c in details.conflicts]
    if history:
        parts.append("<h4>History</h4><ul>" + "".join(history) + "</ul>")
    return "".join(parts)
