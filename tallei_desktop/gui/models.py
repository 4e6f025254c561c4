"""The one table model over the core's paged listing.

The model holds only the rows fetched so far; the listing, filtering and sorting are the core's.
``sort()`` and ``fetchMore()`` do not touch the store themselves: they ask whoever drives the model
(the page's controller) through :attr:`MemoryTableModel.sort_requested` and
:attr:`MemoryTableModel.more_wanted`, and the answer comes back through :meth:`replace` and
:meth:`append`, on the Qt thread.
"""

from __future__ import annotations

import enum
import html
from collections.abc import Sequence
from datetime import datetime, timedelta

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QStyle

from tallei_desktop.core import Memory, SortKey

__all__ = [
    "ID_ROLE",
    "IN_CONFLICT",
    "MEMORY_ROLE",
    "Column",
    "MemoryTableModel",
    "happened",
    "short_date",
    "short_time",
    "tooltip_html",
    "uses_since_saved",
]

MEMORY_ROLE = int(Qt.ItemDataRole.UserRole) + 1
ID_ROLE = int(Qt.ItemDataRole.UserRole) + 2

AnyIndex = QModelIndex | QPersistentModelIndex


class Column(enum.IntEnum):
    CONTENT = 0
    TYPE = 1
    PLATFORMS = 2
    SAVED = 3
    HAPPENED = 4
    CONFIDENCE = 5
    REFERENCES = 6
    LAST_USED = 7
    PINNED = 8


_HEADERS = {
    Column.CONTENT: "Memory",
    Column.TYPE: "Type",
    Column.PLATFORMS: "Assistants",
    Column.SAVED: "Saved",
    Column.HAPPENED: "Happened",
    Column.CONFIDENCE: "Confidence",
    Column.REFERENCES: "Used",
    Column.LAST_USED: "Last used",
    Column.PINNED: "Pinned",
}

#: What each header counts or shows, in the words its tooltip uses.
_HEADER_TIPS = {
    Column.CONTENT: "What the memory says",
    Column.TYPE: "What kind of memory it is",
    Column.PLATFORMS: "The assistants that saved or confirmed it",
    Column.SAVED: "When an assistant first saved it",
    Column.HAPPENED: "When the event happened, where it differs from when it was saved",
    Column.CONFIDENCE: "How sure Tallei is, from how often assistants saved or used it",
    Column.REFERENCES: "How often assistants used or confirmed it since it was saved (your own looks do not count)",
    Column.LAST_USED: "When an assistant last used it (your own looks do not count)",
    Column.PINNED: "Pinned memories always reach your assistants first",
}

#: Confidence follows the reference count, so both columns sort by it.
SORT_KEYS = {
    Column.CONTENT: SortKey.CONTENT,
    Column.TYPE: SortKey.TYPE,
    Column.PLATFORMS: SortKey.PLATFORM,
    Column.SAVED: SortKey.CREATED,
    Column.HAPPENED: SortKey.OCCURRED,
    Column.CONFIDENCE: SortKey.REFERENCES,
    Column.REFERENCES: SortKey.REFERENCES,
    Column.LAST_USED: SortKey.LAST_USED,
    Column.PINNED: SortKey.PINNED,
}

#: Shown for a memory that is one side of an open conflict.
IN_CONFLICT = "Your assistants disagree about this; see Conflicts."

_PREVIEW_CHARS = 200
#: An occurred time this close to the saved time says nothing more.
_SAME_MOMENT = timedelta(minutes=1)


def short_time(when: datetime | None) -> str:
    """A date and time for a table cell, in local time; empty for never."""
    if when is None:
        return ""
    return when.astimezone().strftime("%Y-%m-%d %H:%M")


def short_date(when: datetime) -> str:
    """A date for a table cell, in local time."""
    return when.astimezone().strftime("%Y-%m-%d")


def happened(m: Memory) -> datetime | None:
    """When ``m`` happened, where that is not simply when it was saved (an event told later)."""
    if abs(m.occurred_at - m.created_at) > _SAME_MOMENT:
        return m.occurred_at
    return None


def tooltip_html(text: str, note: str | None = None) -> str:
    """``text`` as a rich-text tooltip, which Qt wraps at a readable width instead of one long line."""
    body = f"<p style='white-space:pre-wrap'>{html.escape(text.strip())}</p>"
    return body + (f"<p><b>{html.escape(note)}</b></p>" if note else "")


def uses_since_saved(m: Memory) -> int:
    """How often assistants used or confirmed it since it was saved (the save itself is the first count)."""
    return max(0, m.reference_count - 1)


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _PREVIEW_CHARS else flat[: _PREVIEW_CHARS - 1] + "…"


_COLUMNS = tuple(Column)
#: The roles :meth:`MemoryTableModel.data` answers; every other role is None at once.
_ROLES = frozenset(
    int(r)
    for r in (
        Qt.ItemDataRole.DisplayRole,
        Qt.ItemDataRole.ToolTipRole,
        Qt.ItemDataRole.AccessibleTextRole,
        Qt.ItemDataRole.DecorationRole,
        Qt.ItemDataRole.TextAlignmentRole,
        MEMORY_ROLE,
        ID_ROLE,
    )
)


class MemoryTableModel(QAbstractTableModel):
    """Rows of :class:`Memory`, fetched a page at a time; columns as :class:`Column`."""

    #: (sort key, descending): the person clicked a header; reload in that order.
    sort_requested = Signal(object, bool)
    #: offset: the view scrolled near the end; fetch the page that starts there.
    more_wanted = Signal(int)

    def __init__(self, parent: object = None) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        self._rows: list[Memory] = []
        self._total = 0
        self._fetching = False
        self._in_conflict: frozenset[str] = frozenset()
        self._warning: QIcon | None = None
        # Each row's cell texts, made on first paint: a view asks for them on every repaint, and
        # under a stream of saves from other processes it repaints often.
        self._texts: dict[int, tuple[str, ...]] = {}

    # -- filling -------------------------------------------------------------------------------

    @property
    def total(self) -> int:
        """Rows matching the current query, fetched or not."""
        return self._total

    def memories(self) -> list[Memory]:
        return list(self._rows)

    def replace(self, memories: Sequence[Memory], total: int) -> None:
        """Show ``memories`` as the first rows. Same rows in the same order: update in place."""
        self._fetching = False
        fresh = list(memories)
        if [m.id for m in fresh] == [m.id for m in self._rows]:
            changed = [
                row for row, (old, new) in enumerate(zip(self._rows, fresh, strict=True)) if old != new
            ]
            self._rows = fresh
            self._total = total
            # Only the rows that differ are repainted: a reload that finds nothing new costs nothing.
            for row in changed:
                self._texts.pop(row, None)
            if changed:
                self.dataChanged.emit(self.index(changed[0], 0), self.index(changed[-1], len(Column) - 1))
            return
        self.beginResetModel()
        self._rows = fresh
        self._texts.clear()
        self._total = total
        self.endResetModel()

    def append(self, offset: int, memories: Sequence[Memory], total: int) -> None:
        """Add the page that starts at ``offset`` (ignored unless it follows the rows held)."""
        self._fetching = False
        self._total = total
        if offset != len(self._rows) or not memories:
            return
        self.beginInsertRows(QModelIndex(), len(self._rows), len(self._rows) + len(memories) - 1)
        self._rows.extend(memories)
        self.endInsertRows()

    def set_in_conflict(self, memory_ids: frozenset[str]) -> None:
        """Mark the rows of these memories as one side of an open conflict."""
        if memory_ids == self._in_conflict:
            return
        self._in_conflict = memory_ids
        if self._rows:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._rows) - 1, 0))

    def in_conflict(self, memory_id: str) -> bool:
        return memory_id in self._in_conflict

    def fetch_failed(self) -> None:
        self._fetching = False

    def row_of(self, memory_id: str) -> int:
        """The row showing ``memory_id``, or -1."""
        for row, m in enumerate(self._rows):
            if m.id == memory_id:
                return row
        return -1

    def memory_at(self, row: int) -> Memory | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    # -- QAbstractTableModel -----------------------------------------------------------------------

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(Column)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if role not in _ROLES:
            return None  # most roles a view asks for (fonts, colours, sizes …): answered first
        row = index.row()
        if not index.isValid() or not 0 <= row < len(self._rows):
            return None
        m = self._rows[row]
        if role == Qt.ItemDataRole.DisplayRole:
            texts = self._texts.get(row)
            if texts is None:
                texts = self._texts[row] = tuple(self._display(m, c) for c in _COLUMNS)
            return texts[index.column()]
        column = _COLUMNS[index.column()]
        flagged = m.id in self._in_conflict
        if role == Qt.ItemDataRole.ToolTipRole:
            if column is Column.CONTENT:
                return tooltip_html(m.content, IN_CONFLICT if flagged else None)
            return self._tip(m, column)
        if role == Qt.ItemDataRole.AccessibleTextRole:
            if column is Column.CONTENT:
                return f"{m.content} ({IN_CONFLICT})" if flagged else m.content
            return self._display(m, column)
        if role == Qt.ItemDataRole.DecorationRole and column is Column.CONTENT and flagged:
            return self._warning_icon()
        if role == Qt.ItemDataRole.TextAlignmentRole and column is Column.REFERENCES:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == MEMORY_ROLE:
            return m
        if role == ID_ROLE:
            return m.id
        return None

    def _warning_icon(self) -> QIcon:
        if self._warning is None:
            style = QApplication.style()
            self._warning = style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
        return self._warning

    @classmethod
    def _tip(cls, m: Memory, column: Column) -> str:
        if column is Column.REFERENCES:
            n = uses_since_saved(m)
            if n == 0:
                return "No assistant has used or confirmed it since it was saved"
            return f"Used or confirmed by assistants {n} time{'' if n == 1 else 's'} since it was saved"
        if column is Column.LAST_USED:
            when = short_time(m.last_referenced_at)
            return (
                f"Last used or confirmed by an assistant {when}" if when else "No assistant has used it yet"
            )
        if column is Column.SAVED:
            return f"Saved {short_time(m.created_at)} by {m.platform}"
        if column is Column.HAPPENED:
            at = happened(m)
            return f"Happened {short_time(at)}" if at else ""
        return cls._display(m, column)

    @staticmethod
    def _display(m: Memory, column: Column) -> str:
        if column is Column.CONTENT:
            return _one_line(m.content)
        if column is Column.TYPE:
            return str(m.type)
        if column is Column.PLATFORMS:
            return ", ".join(m.platforms)
        if column is Column.SAVED:
            return short_date(m.created_at)
        if column is Column.HAPPENED:
            when = happened(m)
            return short_date(when) if when else ""
        if column is Column.CONFIDENCE:
            return str(m.confidence).capitalize()
        if column is Column.REFERENCES:
            return str(uses_since_saved(m))
        if column is Column.LAST_USED:
            return short_date(m.last_referenced_at) if m.last_referenced_at else "never"
        return "Pinned" if m.pinned else ""

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(Column):
            if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
                return _HEADERS[Column(section)]
            if role == Qt.ItemDataRole.ToolTipRole:
                return _HEADER_TIPS[Column(section)]
        elif orientation == Qt.Orientation.Vertical and role == Qt.ItemDataRole.DisplayRole:
            return section + 1
        return None

    def canFetchMore(self, parent: AnyIndex = QModelIndex()) -> bool:  # noqa: B008
        return not parent.isValid() and not self._fetching and len(self._rows) < self._total

    def fetchMore(self, parent: AnyIndex = QModelIndex()) -> None:  # noqa: B008
        if self.canFetchMore(parent):
            self._fetching = True
            self.more_wanted.emit(len(self._rows))

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if 0 <= column < len(Column):
            self.sort_requested.emit(SORT_KEYS[Column(column)], order == Qt.SortOrder.DescendingOrder)
