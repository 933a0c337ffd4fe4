"""The schema as numbered SQL files, applied in order by :class:`explorer.store.Database` (a package so they ship)."""
