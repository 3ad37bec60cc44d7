"""Small SVG charts drawn on the server: no script and no chart library in the page."""

from __future__ import annotations

import math
from html import escape

BAR_HEIGHT = 22
WIDTH = 520


def pass_rate_bars(
    rows: list[tuple[str, float | None]],
    notes: dict[str, str] | None = None,
    intervals: dict[str, list[float] | None] | None = None,
) -> str:
    """One horizontal bar per criterion: its pass rate from 0 to 100 %, its 95% interval as a
    whisker across it; a criterion with no rate (every result errored or was skipped) says so from
    ``notes``."""
    label_width = 170
    height = BAR_HEIGHT * len(rows) + 10
    parts = [f'<svg class="chart pass-rates" width="{WIDTH}" height="{height}" role="img" aria-label="pass rates">']
    for index, (name, rate) in enumerate(rows):
        y = 5 + index * BAR_HEIGHT
        length = 0 if rate is None else (WIDTH - label_width - 50) * rate
        colour = "#9aa0a6" if rate is None else "#2e7d32" if rate >= 0.8 else "#f9a825" if rate >= 0.5 else "#c62828"
        shown = f"– {(notes or {}).get(name, '')}".strip() if rate is None else f"{rate:.0%}"
        parts.append(f'<text x="0" y="{y + 15}" class="label">{escape(name[:24])}</text>')
        parts.append(
            f'<rect class="bar" data-criterion="{escape(name)}" x="{label_width}" y="{y + 3}" width="{length:.1f}" '
            f'height="{BAR_HEIGHT - 6}" fill="{colour}"><title>{escape(name)}: {shown}</title></rect>'
        )
        bounds = (intervals or {}).get(name)
        right = label_width + length  # the label goes past the bar and its whisker, never across them
        if bounds:
            low, high = (label_width + (WIDTH - label_width - 50) * v for v in bounds)
            parts.append(whisker(low, high, y + BAR_HEIGHT / 2, f"95% interval {bounds[0]:.0%}–{bounds[1]:.0%}"))
            right = max(right, high)
        parts.append(f'<text x="{right + 6:.1f}" y="{y + 15}" class="value">{shown}</text>')
    parts.append("</svg>")
    return "".join(parts)


def whisker(low: float, high: float, mid: float, title: str, half: float = 4) -> str:
    """An interval drawn as a horizontal line with end ticks."""
    ends = f"M{low:.1f},{mid - half:.1f}V{mid + half:.1f}M{high:.1f},{mid - half:.1f}V{mid + half:.1f}"
    return (
        f'<path class="interval" d="M{low:.1f},{mid:.1f}H{high:.1f}{ends}" stroke="#202124" fill="none">'
        f"<title>{escape(title)}</title></path>"
    )


def histogram(
    name: str,
    scores: list[float],
    low: float,
    high: float,
    bins: int = 10,
    threshold: float | None = None,
    weights: list[int] | None = None,
) -> str:
    """Counts of scores in equal bins between the metric's min and max, each bar labelled with its
    count, and the pass threshold as a dashed line; ``weights[i]`` says how many scores equal ``scores[i]``."""
    if high <= low:
        high = low + 1
    # Judges' 1–5 and 0–7 scales get one bar per value; continuous scores get equal bins.
    integer = all(float(s).is_integer() for s in scores) and high - low <= 10
    edges = int(high - low) + 1 if integer else bins
    counts = [0] * edges
    for index, score in enumerate(scores):
        if integer:
            slot = int(round(score - low))
        else:
            slot = int((score - low) / (high - low) * edges)
        counts[min(max(slot, 0), edges - 1)] += 1 if weights is None else weights[index]
    tallest = max(counts) or 1
    width, height, top, bar = 260, 110, 14, 260 / edges
    parts = [
        f'<svg class="chart histogram" data-criterion="{escape(name)}" width="{width}" height="{top + height + 18}" '
        f'role="img" aria-label="score histogram for {escape(name)}"><g transform="translate(0,{top})">'
    ]
    for index, count in enumerate(counts):
        tall = height * count / tallest
        if count:
            parts.append(
                f'<text x="{index * bar + bar / 2:.1f}" y="{height - tall - 3:.1f}" class="tick count">{count}</text>'
            )
        label = f"{low + index:g}" if integer else f"{low + (high - low) * index / edges:.1f}"
        parts.append(
            f'<rect class="bin" x="{index * bar + 1:.1f}" y="{height - tall:.1f}" width="{bar - 2:.1f}" '
            f'height="{tall:.1f}" fill="#1565c0"><title>{label}: {count}</title></rect>'
        )
        if integer or index % 2 == 0:
            # A value on a discrete scale labels its bar; a continuous bin is labelled at its lower edge.
            at = index * bar + bar / 2 if integer else max(index * bar, 8)
            parts.append(f'<text x="{at:.1f}" y="{height + 14}" class="tick">{label}</text>')
    if not integer:  # the scale's top too, so the axis reads to the end (1.0, not 0.8)
        parts.append(f'<text x="{width - 4}" y="{height + 14}" class="tick" style="text-anchor: end">{high:.1f}</text>')
    if threshold is not None and low <= threshold <= high:
        x = (threshold - low) * bar + bar / 2 if integer else (threshold - low) / (high - low) * width
        parts.append(
            f'<line class="threshold" x1="{x:.1f}" x2="{x:.1f}" y1="-{top}" y2="{height}" stroke="#c62828" '
            f'stroke-dasharray="4 3"><title>threshold {threshold:g}</title></line>'
        )
    parts.append("</g></svg>")
    return "".join(parts)


OPERATION_COLOURS = {
    "invoke_agent": "#1a237e",
    "chat": "#00897b",
    "text_completion": "#00897b",
    "generate_content": "#00897b",
    "execute_tool": "#f9a825",
    "embeddings": "#6a1b9a",
}


def span_waterfall(rows: list[tuple[int, str, str, float, float, bool]]) -> str:
    """A trace's spans on one time axis, one bar per span, indented by depth.

    ``rows``: ``(depth, name, operation, start_ms, duration_ms, failed)`` in tree order, start
    relative to the trace's first span."""
    label_width, row_height, width = 280, 20, 760
    total = max((start + duration for _, _, _, start, duration, _ in rows), default=0.0) or 1.0
    scale = (width - label_width - 70) / total
    height = row_height * len(rows) + 26
    parts = [f'<svg class="chart waterfall" width="{width}" height="{height}" role="img" aria-label="spans over time">']
    step = _tick_step(total)
    for tick in range(int(total / step) + 1):  # a light grid line and a label every ``step`` ms
        x = label_width + tick * step * scale
        parts.append(f'<line class="grid" x1="{x:.1f}" y1="4" x2="{x:.1f}" y2="{height - 18}" stroke="#e0e0e0"/>')
        parts.append(f'<text x="{x:.1f}" y="{height - 4}" class="tick">{tick * step:g} ms</text>')
    for index, (depth, name, operation, start, duration, failed) in enumerate(rows):
        y = 4 + index * row_height
        x, length = label_width + start * scale, max(2.0, duration * scale)
        colour = OPERATION_COLOURS.get(operation, "#9aa0a6")
        outline = ' stroke="#c62828" stroke-width="2"' if failed else ""
        parts.append(f'<text x="{depth * 12}" y="{y + 14}" class="label">{escape(name[: 40 - depth])}</text>')
        parts.append(
            f'<rect class="span" data-operation="{escape(operation)}" x="{x:.1f}" y="{y + 3}" width="{length:.1f}" '
            f'height="{row_height - 6}" fill="{colour}"{outline}><title>{escape(name)}: {duration:.1f} ms'
            f"{' (error)' if failed else ''}</title></rect>"
        )
        shown = f"{duration:.1f}" if duration < 10 else f"{duration:.0f}"
        parts.append(f'<text x="{x + length + 4:.1f}" y="{y + 14}" class="value">{shown} ms</text>')
    parts.append("</svg>")
    return "".join(parts)


def _tick_step(total_ms: float) -> float:
    """A round step (1, 2 or 5 times a power of ten) giving four to ten ticks over ``total_ms``."""
    step = 10 ** math.floor(math.log10(total_ms / 4)) if total_ms > 0 else 1.0
    for factor in (1, 2, 5, 10):
        if total_ms / (step * factor) <= 10:
            return float(step * factor)
    return float(step * 10)


def rate_intervals(rows: list[tuple[str, float | None, tuple[float, float] | None, str]]) -> str:
    """One bar per row for a rate in percent, its 95% interval drawn as a whisker across it.

    ``rows``: ``(label, rate, (low, high), note)``; a rate of None (nothing decided) draws no bar."""
    label_width, bar_width = 190, WIDTH - 190 - 110
    height = BAR_HEIGHT * len(rows) + 10
    parts = [
        f'<svg class="chart rate-intervals" width="{WIDTH}" height="{height}" role="img" '
        'aria-label="attack success rates with 95% intervals">'
    ]
    for index, (label, rate, interval, note) in enumerate(rows):
        y = 5 + index * BAR_HEIGHT
        parts.append(f'<text x="0" y="{y + 15}" class="label">{escape(label[:28])}</text>')
        if rate is not None:
            length = bar_width * rate / 100
            colour = "#c62828" if rate >= 20 else "#f9a825" if rate > 0 else "#2e7d32"
            parts.append(
                f'<rect class="bar" data-label="{escape(label)}" x="{label_width}" y="{y + 3}" '
                f'width="{max(length, 1):.1f}" height="{BAR_HEIGHT - 6}" fill="{colour}" opacity="0.8">'
                f"<title>{escape(label)}: {rate:.1f}% {escape(note)}</title></rect>"
            )
        if interval is not None:
            low, high = (label_width + bar_width * v / 100 for v in interval)
            title = f"95% interval {interval[0]:.1f}–{interval[1]:.1f}%"
            parts.append(whisker(low, high, y + BAR_HEIGHT / 2, title, 5))
        shown = "–" if rate is None else f"{rate:.0f}%"
        value_x = label_width + bar_width + 8
        parts.append(f'<text x="{value_x}" y="{y + 15}" class="value">{shown} {escape(note)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def difference_bars(rows: list[tuple[str, float, tuple[float, float] | None, str]], span: float = 30.0) -> str:
    """Differences in points around a zero line, each with its interval; ``span`` points each side."""
    label_width, plot = 200, WIDTH - 200 - 80
    zero = label_width + plot / 2
    height = BAR_HEIGHT * len(rows) + 10
    parts = [
        f'<svg class="chart differences" width="{WIDTH}" height="{height}" role="img" aria-label="differences">',
        f'<line x1="{zero}" y1="0" x2="{zero}" y2="{height}" stroke="#9aa0a6"/>',
    ]

    def x(value: float) -> float:
        return zero + plot / 2 * max(-1.0, min(1.0, value / span))

    for index, (label, delta, interval, note) in enumerate(rows):
        y = 5 + index * BAR_HEIGHT
        colour = "#c62828" if interval and interval[1] < 0 else "#2e7d32" if interval and interval[0] > 0 else "#9aa0a6"
        start, end = sorted((zero, x(delta)))
        parts.append(f'<text x="0" y="{y + 15}" class="label">{escape(label[:30])}</text>')
        parts.append(
            f'<rect class="bar" x="{start:.1f}" y="{y + 3}" width="{max(end - start, 1):.1f}" '
            f'height="{BAR_HEIGHT - 6}" fill="{colour}" opacity="0.8"/>'
        )
        if interval:
            parts.append(
                whisker(
                    x(interval[0]),
                    x(interval[1]),
                    y + BAR_HEIGHT / 2,
                    f"95% interval {interval[0]:+.1f}–{interval[1]:+.1f} points",
                )
            )
        value_x = label_width + plot + 6
        parts.append(f'<text x="{value_x}" y="{y + 15}" class="value">{delta:+.1f} {escape(note)}</text>')
    parts.append("</svg>")
    return "".join(parts)
