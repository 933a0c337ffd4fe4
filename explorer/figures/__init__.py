"""Plotly figure builders: pure functions, data in, ``go.Figure`` out.

The figure code never lives in the engine or the pages: :mod:`map` draws the
session map, :mod:`charts` the small charts of the pages, :mod:`palette` holds the
colours they share.
"""
