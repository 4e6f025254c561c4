"""The store: the only package that imports apsw or holds an SQL statement.

Code outside it receives a :data:`Connection` from ``Database.read()`` / ``Database.write()`` and only
passes it on to the store's operations.
"""

from __future__ import annotations

from typing import TypeAlias

import apsw

__all__ = ["Connection"]

#: An open connection inside a transaction the caller holds (lifecycle and service code pass it on).
Connection: TypeAlias = apsw.Connection
