"""Prominence fades with age, rises with use; the store is refreshed from created_at and use."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from explorer.dreaming.prominence import ACTIVE, DORMANT, ProminenceConfig, prominence
from explorer.dreaming.service import refresh_prominence
from explorer.store import corpus

from .conftest import days_ago, memory, store

NOW = datetime(2025, 6, 1, tzinfo=UTC)


def aged(days: float, **fields) -> float:
    return prominence(memory(created_at=NOW - timedelta(days=days), **fields), NOW)


def test_fresh_memory_is_fully_prominent_and_fades_by_half_lives() -> None:
    assert aged(0) == 1.0
    assert aged(30) == pytest.approx(0.5)  # importance 0.5: a 30-day half-life
    assert aged(60) == pytest.approx(0.25)
    assert aged(10) > aged(20) > aged(40)


def test_importance_and_use_slow_the_fading() -> None:
    assert aged(40, importance=0.9) > aged(40, importance=0.5) > aged(40, importance=0.1)
    assert aged(40, access_count=4) > aged(40, access_count=1) > aged(40)
    assert aged(40, access_count=50) == aged(40, access_count=ProminenceConfig().max_uses)  # capped


def test_a_recent_use_makes_an_old_memory_prominent_again() -> None:
    old = memory(created_at=NOW - timedelta(days=300))
    used = memory(created_at=NOW - timedelta(days=300), access_count=1, last_accessed_at=NOW - timedelta(days=1))
    assert prominence(old, NOW) < DORMANT
    assert prominence(used, NOW) >= ACTIVE


def test_static_profile_never_fades() -> None:
    assert aged(1000, memory_type="static_profile") == 1.0
    assert aged(1000) < DORMANT


def test_naive_timestamps_are_read_as_utc() -> None:
    naive = memory(created_at=(NOW - timedelta(days=30)).replace(tzinfo=None))
    assert prominence(naive, NOW) == pytest.approx(0.5)


def test_refresh_writes_prominence_from_age_and_use(runtime) -> None:
    fresh, month, year = (
        memory("fresh note"),
        memory("a month old", created_at=days_ago(30)),
        memory("a year old", created_at=days_ago(365)),
    )
    store(runtime, [fresh, month, year])
    assert refresh_prominence(runtime) == 2  # the fresh one stays at 1.0
    with runtime.db.connect() as con:
        values = {n.id: n.prominence for n in corpus.get_nodes(con, [fresh.id, month.id, year.id], with_vectors=False)}
    assert values[fresh.id] == pytest.approx(1.0, abs=1e-4)
    assert values[month.id] == pytest.approx(0.5, abs=1e-3)
    assert values[year.id] < DORMANT
