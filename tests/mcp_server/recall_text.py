"""Reading the context block that recall_memories answers with, as a program would: its ids by section."""

from __future__ import annotations

import re

#: The block's section headings, by the bucket each shows.
SECTIONS = {
    "Preferences": "preferences",
    "Long-term memory": "long_term",
    "Recent": "short_term",
    "More matches": "more",
}
_HEADING = re.compile(r"^## (.+)$")
_MEMORY_LINE = re.compile(r"^- \[[^\]]*· id ([0-9a-f]{12})(?: · pinned)?\] ")


def ids_by_section(text: str) -> dict[str, list[str]]:
    """Each bucket's memory ids in the order the block lists them; every bucket is present."""
    found: dict[str, list[str]] = {bucket: [] for bucket in SECTIONS.values()}
    bucket: str | None = None
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading is not None:
            bucket = SECTIONS[heading.group(1)]
            continue
        memory = _MEMORY_LINE.match(line)
        if memory is not None:
            assert bucket is not None, f"a memory line before any section: {line!r}"
            found[bucket].append(memory.group(1))
    return found


def line_of(text: str, memory_id: str) -> str:
    """The one line of the block that shows ``memory_id``."""
    [line] = [line for line in text.splitlines() if f"· id {memory_id}" in line]
    return line
