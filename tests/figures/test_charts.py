"""The small charts of the pages."""

from __future__ import annotations

from explorer.figures.charts import StrengthPoint, count_bars, scores_by_step, strength_by_step, year_bars
from explorer.figures.palette import domain_colours


def test_count_bars_largest_first_and_domains_in_their_map_colour() -> None:
    figure = count_bars({"art": 3, "python": 10, "love": 3}, "Nodes by domain", colour_by_name=True)
    bar = figure.data[0]
    assert list(bar.y) == ["python", "art", "love"] and list(bar.x) == [10, 3, 3]
    colours = domain_colours(["art", "python", "love"])
    assert list(bar.marker.color) == [colours["python"], colours["art"], colours["love"]]


def test_year_bars_in_order_every_year_in_place_and_undated_counted_in_the_title() -> None:
    figure = year_bars({2003: 4, None: 7, 2000: 2})
    assert list(figure.data[0].x) == [2000, 2001, 2002, 2003] and list(figure.data[0].y) == [2, 0, 0, 4]
    assert figure.layout.title.text == "Nodes by year (7 undated)"
    assert figure.layout.xaxis.visible and figure.layout.yaxis.visible


def test_year_bars_without_a_year_draw_no_axis() -> None:
    figure = year_bars({None: 5})
    assert list(figure.data[0].x) == [] and figure.layout.title.text == "Nodes by year (5 undated)"
    assert figure.layout.xaxis.visible is False and figure.layout.yaxis.visible is False


def test_strength_by_step_keeps_the_strongest_resonances() -> None:
    points = [StrengthPoint(f"r{i}", f"theme {i}", step, float(i + step)) for i in range(12) for step in (1, 2)]
    figure = strength_by_step(points, top=3)
    assert [t.name for t in figure.data] == ["theme 11", "theme 10", "theme 9"]
    assert list(figure.data[0].x) == [1, 2] and list(figure.data[0].y) == [12.0, 13.0]


def test_scores_by_step_draws_the_keys_present() -> None:
    figure = scores_by_step([1, 2], [{"score": 0.5, "novelty": 0.2}, {"score": 0.6, "novelty": 0.1}])
    assert [t.name for t in figure.data] == ["score", "novelty"]
    assert list(figure.data[0].y) == [0.5, 0.6]
