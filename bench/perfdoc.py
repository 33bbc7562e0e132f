"""bench/perfdoc.py: what the paired-round benchmarks share. Each writes its own section of
docs/PERFORMANCE.md, between its begin and end markers, and keeps the rest of the file; each
reports per-round ratios as median and interquartile range."""

import os
import statistics

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_section(begin, end, lines):
    """Puts `lines` (which start with `begin` and end with `end`) in place of the section, or
    at the end of the file when it has none yet. OUT names another file."""
    out = os.environ.get("OUT", os.path.join(REPO, "docs/PERFORMANCE.md"))
    text = open(out).read() if os.path.exists(out) else ""
    block = "\n".join(lines)
    if begin in text:
        text = text[:text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    open(out, "w").write(text)


def quartiles(xs):
    """(first quartile, median, third quartile) of `xs`."""
    xs = sorted(xs)
    if len(xs) < 2:
        return xs[0], xs[0], xs[0]
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[0], statistics.median(xs), q[2]
