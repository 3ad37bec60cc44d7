"""The server-drawn charts' arithmetic."""

from __future__ import annotations

import math
import re

from hypothesis import given
from hypothesis import strategies as st

from assay.report.charts import _tick_step, histogram, pass_rate_bars, span_waterfall


@given(st.floats(min_value=0.01, max_value=1e7))
def test_waterfall_ticks_are_round_and_four_to_ten(total):
    step = _tick_step(total)
    mantissa = step / 10 ** math.floor(math.log10(step) + 1e-9)
    assert round(mantissa, 6) in (1.0, 2.0, 5.0)
    assert 4 - 1e-9 <= total / step <= 10 + 1e-9


def test_waterfall_places_children_inside_their_parent():
    svg = span_waterfall(
        [
            (0, "invoke_agent a", "invoke_agent", 0.0, 100.0, False),
            (1, "chat m", "chat", 10.0, 40.0, False),
            (1, "execute_tool t", "execute_tool", 60.0, 5.0, True),
        ]
    )
    bars = svg.split("<rect")[1:]
    xs = [float(bar.split('x="')[1].split('"')[0]) for bar in bars]
    widths = [float(bar.split('width="')[1].split('"')[0]) for bar in bars]
    assert xs[0] < xs[1] < xs[2] and xs[1] + widths[1] <= xs[0] + widths[0] + 0.1
    assert "stroke" in bars[2] and "stroke" not in bars[1]


def test_a_histogram_axis_reads_to_the_top_of_its_scale():
    drawn = histogram("f1", [0.1, 0.45, 0.5, 0.95], 0.0, 1.0)
    ticks = re.findall(r'class="tick"[^>]*>([0-9.]+)</text>', drawn)
    assert ticks[0] == "0.0" and ticks[-1] == "1.0"


def test_a_rates_label_sits_past_its_whisker():
    drawn = pass_rate_bars([("exact", 0.5)], intervals={"exact": [0.3, 0.7]})
    whisker_end = float(re.search(r'd="M([0-9.]+),[0-9.]+H([0-9.]+)', drawn).group(2))
    label_x = float(re.search(r'<text x="([0-9.]+)"[^>]*class="value"', drawn).group(1))
    assert label_x > whisker_end
