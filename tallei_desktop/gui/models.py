"""The one table model over the core's paged listing.

The model holds only the rows fetched so far; the listing, filtering and sorting are the core's.
``sort()`` and ``fetchMore()`` do not touch the store themselves: they ask whoever drives the model
(the page's controller) through :attr:`MemoryTableModel.sort_requested` and
:attr:`MemoryTableModel.more_wanted`, and the answer comes back through :meth:`replace` and
:meth:`append`, on the Qt thread.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from datetime import datetime

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)

from tallei_desktop.core import Memory, SortKey

__all__ = ["ID_ROLE", "MEMORY_ROLE", "Column", "MemoryTableModel", "short_time"]

MEMORY_ROLE = int(Qt.ItemDataRole.UserRole) + 1
ID_ROLE = int(Qt.ItemDataRole.UserRole) + 2

AnyIndex = QModelIndex | QPersistentModelIndex


class Column(enum.IntEnum):
    CONTENT = 0
    TYPE = 1
    PLATFORMS = 2
    CONFIDENCE = 3
    REFERENCES = 4
    LAST_USED = 5
    PINNED = 6


_HEADERS = {
    Column.CONTENT: "Memory",
    Column.TYPE: "Type",
    Column.PLATFORMS: "Assistants",
    Column.CONFIDENCE: "Confidence",
    Column.REFERENCES: "Used",
    Column.LAST_USED: "Last used",
    Column.PINNED: "Pinned",
}

#: Confidence follows the reference count, so both columns sort by it.
SORT_KEYS = {
    Column.CONTENT: SortKey.CONTENT,
    Column.TYPE: SortKey.TYPE,
    Column.PLATFORMS: SortKey.PLATFORM,
    Column.CONFIDENCE: SortKey.REFERENCES,
    Column.REFERENCES: SortKey.REFERENCES,
    Column.LAST_USED: SortKey.LAST_USED,
    Column.PINNED: SortKey.PINNED,
}

_PREVIEW_CHARS = 200


def short_time(when: datetime | None) -> str:
    """A date and time for a table cell, in local time; empty for never."""
    if when is None:
        return ""
    return when.astimezone().strftime("%Y-%m-%d %H:%M")


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _PREVIEW_CHARS else flat[: _PREVIEW_CHARS - 1] + "…"


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
            self._rows = fresh
            self._total = total
            if fresh:
                self.dataChanged.emit(self.index(0, 0), self.index(len(fresh) - 1, len(Column) - 1))
            return
        self.beginResetModel()
        self._rows = fresh
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
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        m = self._rows[index.row()]
        column = Column(index.column())
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(m, column)
        if role in (Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.AccessibleTextRole):
            return m.content if column is Column.CONTENT else self._display(m, column)
        if role == Qt.ItemDataRole.TextAlignmentRole and column is Column.REFERENCES:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == MEMORY_ROLE:
            return m
        if role == ID_ROLE:
            return m.id
        return None

    @staticmethod
    def _display(m: Memory, column: Column) -> str:
        if column is Column.CONTENT:
            return _one_line(m.content)
        if column is Column.TYPE:
            return str(m.type)
        if column is Column.PLATFORMS:
            return ", ".join(m.platforms)
        if column is Column.CONFIDENCE:
            return str(m.confidence).capitalize()
        if column is Column.REFERENCES:
            return str(m.reference_count)
        if column is Column.LAST_USED:
            return short_time(m.last_referenced_at) or "never"
        return "Pinned" if m.pinned else ""

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(Column):
            if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
                return _HEADERS[Column(section)]
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
