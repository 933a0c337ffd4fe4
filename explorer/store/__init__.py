"""The storage layer: the only place in the product that speaks SQL.

``Database`` owns the file, its connections and its schema; the modules beside it
hold the queries for one part of the product each (``corpus``, ``events``,
``calls`` …), as functions that take a connection and typed records.
"""

from explorer.store.database import Connection, Database, DatabaseBusy, SchemaMismatch, StoreError

__all__ = ["Connection", "Database", "DatabaseBusy", "SchemaMismatch", "StoreError"]
