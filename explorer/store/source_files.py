"""The files read into the knowledge base, by path: what sync compares a folder with (migration 020)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from explorer.records import SourceFile
from explorer.store.database import Connection, insert_rows


def list_source_files(con: Connection) -> dict[str, SourceFile]:
    """Every file read, by its absolute path."""
    rows = con.execute("SELECT path, size, mtime_ns, document_ids::VARCHAR[] FROM source_files").fetchall()
    return {path: SourceFile(path, size, mtime_ns, tuple(ids or ())) for path, size, mtime_ns, ids in rows}


def keep_source_files(con: Connection, files: Sequence[SourceFile]) -> None:
    """Record files as read now (a file read before is replaced), in a few statements: a vault moved keeps
    10,000 at once.
    """
    insert_rows(
        con,
        "source_files",
        ("path", "size", "mtime_ns", "document_ids"),
        [
            [file.path, file.size, file.mtime_ns, list(file.document_ids)]
            for file in {file.path: file for file in files}.values()  # a statement updates a row once
        ],
        "ON CONFLICT (path) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns, "
        "document_ids = excluded.document_ids, read_at = now()",
    )


def forget_source_files(con: Connection, paths: Collection[str]) -> None:
    """Forget files that are gone."""
    if paths:
        con.execute("DELETE FROM source_files WHERE path IN (SELECT unnest(?::VARCHAR[]))", [list(paths)])
