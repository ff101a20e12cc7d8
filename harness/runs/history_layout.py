"""Where the history charts' text goes, so no label overprints another however close the runs are.

Runs are spaced evenly along a chart's x axis, so with many runs (nightly
runs for a season, or a week of runs a few minutes apart) the gap between
two points shrinks to a few pixels. Two series breaks at neighbouring runs
then put their "series break" labels on top of each other, and so do the
rotated dates under the axis. Here each break label takes the highest lane
(a row of text) in which it clears the label before it, and a break that
finds no free lane keeps its dashed marker and its tooltip (the runs table
lists every break) without text; dates are shown for every k-th run, k the
fewest runs whose spacing fits one date.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: Width of one character of the charts' 11 px text, a little above what system-ui fonts draw (about 6.2 px).
CHAR_WIDTH = 7.0
BREAK_TEXT = "series break"
LANE_HEIGHT = 14.0  # the 11 px text's line box is 13 px tall in Chromium
#: Dates are rotated -30 degrees: two parallel lines of text lie (anchor gap) x sin(30 degrees) apart, and must lie
#: at least one line box (13 px for 11 px text) apart.
DATE_SPACING = 28.0


def break_label_lanes(xs: Sequence[float], *, lanes: int, text: str = BREAK_TEXT, gap: float = 4.0) -> list[int | None]:
    """Per break (in x order, as drawn: text starting 3 px right of its marker) the lane its label takes, or None.

    Example: markers at x 100, 110 and 300 take lanes 0, 1 and 0.
    """
    width = len(text) * CHAR_WIDTH
    ends: list[float] = []  # per lane, where the last label placed in it ends
    placed: list[int | None] = []
    for x in xs:
        start = x + 3
        lane = next((k for k, end in enumerate(ends) if start >= end + gap), None)
        if lane is None and len(ends) < lanes:
            lane = len(ends)
            ends.append(0.0)
        if lane is not None:
            ends[lane] = start + width
        placed.append(lane)
    return placed


def shown_dates(count: int, step: float, spacing: float = DATE_SPACING) -> list[int]:
    """The indexes of the runs whose date is written under the axis: every k-th, from the first."""
    if count <= 0:
        return []
    every = 1 if step >= spacing or count == 1 else math.ceil(spacing / max(step, 1e-9))
    return list(range(0, count, every))
