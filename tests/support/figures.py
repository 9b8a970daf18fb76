"""Checks on drawn figures shared by the tests."""

from __future__ import annotations


def assert_legends_clear_of_panels(fig) -> None:
    """No legend (figure-level or a panel's) overlaps the drawing area of any visible panel."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert legends
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for ax in fig.axes:
            if not ax.get_visible():
                continue
            frame = ax.get_window_extent(renderer)
            overlap = box.intersection(box, frame)
            assert overlap is None or overlap.width * overlap.height < 1.0, (
                f"legend {[t.get_text() for t in legend.get_texts()]} covers panel {ax.get_title()!r}"
            )
