"""The details pane of a memory: its full text, facts, who saved it, and its history, as HTML."""

from __future__ import annotations

import html

from tallei_desktop.core import CHOSEN_RESOLUTIONS, ConflictResolution, MemoryHistory
from tallei_desktop.gui.models import short_time

__all__ = ["REOPEN_SCHEME", "render_details"]

#: The detail pane's link scheme for undoing a conflict's outcome: ``reopen:<conflict id>``.
REOPEN_SCHEME = "reopen"


def render_details(details: MemoryHistory) -> str:
    """The detail pane's HTML: full text, facts, provenance trail and history."""
    m = details.memory
    e = html.escape
    facts = [
        ("Type", str(m.type)),
        ("Bucket", str(m.bucket).replace("_", "-")),
        ("Status", str(m.status)),
        ("Confidence", f"{str(m.confidence).capitalize()} (used {m.reference_count}×)"),
        ("Saved", short_time(m.created_at)),
        ("Changed", short_time(m.updated_at)),
        ("Last used", short_time(m.last_referenced_at) or "never"),
        ("Pinned", "yes" if m.pinned else "no"),
        ("Id", m.id),
    ]
    parts = [f"<p style='font-size:large'>{e(m.content).replace(chr(10), '<br>')}</p>", "<table>"]
    parts += [f"<tr><td><b>{e(k)}</b>&nbsp;</td><td>{e(v)}</td></tr>" for k, v in facts]
    parts.append("</table><h4>Who saved it</h4><ul>")
    trail = m.provenance or ()
    parts += [f"<li>{e(p.action)} by <b>{e(p.platform)}</b>, {e(short_time(p.at))}</li>" for p in trail]
    if not trail:
        parts.append(f"<li>saved by <b>{e(m.platform)}</b>, {e(short_time(m.created_at))}</li>")
    parts.append("</ul>")
    history: list[str] = []
    history += [f"<li>replaced by “{e(n.content[:120])}” ({e(n.id)})</li>" for n in details.replaced_by]
    history += [
        f"<li>replaced “{e(o.content[:120])}” from <b>{e(o.platform)}</b></li>" for o in details.replaced
    ]
    history += [
        f"<li>absorbed the duplicate “{e(o.content[:120])}” from <b>{e(o.platform)}</b></li>"
        for o in details.merged
    ]
    for c in details.conflicts:
        other = c.memory_b if c.memory_a.id == m.id else c.memory_a
        outcome = f"resolved: {c.resolution}" if c.resolution else "open"
        undo = ""
        if c.resolution in CHOSEN_RESOLUTIONS:
            label = "undo" if c.resolution is ConflictResolution.KEEP_BOTH else "bring back"
            undo = f" <a href='{REOPEN_SCHEME}:{e(c.id)}'>{label}</a>"
        history.append(
            f"<li>conflict with “{e(other.content[:120])}” from <b>{e(other.platform)}</b> ({e(outcome)}){undo}</li>"
        )
    if history:
        parts.append("<h4>History</h4><ul>" + "".join(history) + "</ul>")
    return "".join(parts)
