"""The figure model every kind builds, and the one renderer that draws it.

A figure kind reads a repix JSON report and returns Figure objects: plain data (what is on each
axis, each series' points, the paper's points beside ours, what was not measured and why). The
renderer draws a Figure with matplotlib into NAME.svg and NAME.png and writes NAME.points.json, the
model itself: exactly the points that were drawn, so that a test (or a reader) can check a figure
against its report without reading pixels. Kinds never call matplotlib; the renderer never reads
a report.

A point that was not measured (a skipped row, a 2-GPU configuration on a 1-GPU machine) is never
drawn as a zero: it goes into the series' `missing` list and the renderer writes "not measured"
and the reason on the figure.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from typing import List, Optional

# What a series is: our measurement, the paper's value (drawn hollow, dashed), a peer's (another
# project's code on the same GPU), or a bound (the roofline's ceiling).
KINDS = ("ours", "paper", "peer", "bound")
CHARTS = ("lines", "bars", "stacked")


@dataclass
class Missing:
    x: object          # where the point would be (a number, or a category)
    why: str           # the report's reason


@dataclass
class Series:
    label: str
    x: list
    y: list
    kind: str = "ours"
    missing: List[Missing] = field(default_factory=list)
    note: str = ""     # e.g. "read off the paper's plot"
    steps: bool = False  # a step function (constant until the next x), as the ECC curve is

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"series kind {self.kind!r} is not one of {KINDS}")
        if len(self.x) != len(self.y):
            raise ValueError(f"series {self.label!r}: {len(self.x)} x values, {len(self.y)} y values")
        for v in self.y:
            if v is None or (isinstance(v, float) and (math.isnan(v) or math.isinf(v))):
                raise ValueError(f"series {self.label!r}: a y value is {v!r}; a point not measured goes to missing")


@dataclass
class Figure:
    name: str          # file stem suffix: <report stem>.<name>.svg
    title: str
    xlabel: str
    ylabel: str
    chart: str = "lines"
    series: List[Series] = field(default_factory=list)
    xlog: bool = False
    xlog_base: int = 2   # 2 for image sides and thread counts, 10 for counts such as 1, 10, 100
    ylog: bool = False
    categories: Optional[list] = None   # bars/stacked: the x categories in order
    notes: List[str] = field(default_factory=list)
    source: str = ""   # filled by draw(): the report and the commit that measured it
    legend_outside: bool = False  # the legend right of the axes (a wider figure), where it would hide data

    def __post_init__(self):
        if self.chart not in CHARTS:
            raise ValueError(f"chart {self.chart!r} is not one of {CHARTS}")

    def add(self, *args, **kwargs) -> Series:
        s = Series(*args, **kwargs)
        self.series.append(s)
        return s

    def measured_points(self) -> int:
        return sum(len(s.y) for s in self.series if s.kind == "ours")

    def to_json(self) -> dict:
        return asdict(self)


def number(v) -> Optional[float]:
    """A finite float, or None (JSON null, a string, NaN, a missing key)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    v = float(v)
    return v if math.isfinite(v) else None


# ---- rendering --------------------------------------------------------------------------------

class MatplotlibMissing(RuntimeError):
    pass


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise MatplotlibMissing(f"matplotlib is not installed for {os.sys.executable} ({e})") from e
    return plt


_STYLE = {  # kind -> line/marker style
    "ours": dict(linestyle="-", marker="o", fillstyle="full"),
    "paper": dict(linestyle="--", marker="s", fillstyle="none"),
    "peer": dict(linestyle=":", marker="^", fillstyle="full"),
    "bound": dict(linestyle="-.", marker="", fillstyle="full"),
}


def _missing_text(fig: Figure) -> List[str]:
    out = []
    for s in fig.series:
        for m in s.missing:
            out.append(f"{s.label} at {m.x}: not measured ({m.why})")
    return out


def render(fig: Figure, out_dir: str, stem: str) -> List[str]:
    """Draws `fig` into out_dir/<stem>.<fig.name>.{svg,png,points.json}; returns the paths."""
    plt = _pyplot()
    base = os.path.join(out_dir, f"{stem}.{fig.name}")
    mpl_fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=100)
    if fig.chart == "lines":
        for s in fig.series:
            st = _STYLE[s.kind]
            label = s.label + (f" ({s.note})" if s.note else "")
            if s.y:
                style = dict(st)
                if len(s.x) > 64:  # markers would hide the line
                    style["marker"] = ""
                if s.steps:
                    style["drawstyle"] = "steps-post"
                ax.plot(s.x, s.y, label=label, **style)
            elif s.missing:
                ax.plot([], [], label=label + ": not measured", **st)
    else:
        cats = fig.categories or sorted({x for s in fig.series for x in s.x}, key=str)
        index = {c: i for i, c in enumerate(cats)}
        bar_series = [s for s in fig.series if s.kind != "bound"]
        n = max(1, len(bar_series)) if fig.chart == "bars" else 1
        width = 0.8 / n
        bottoms = [0.0] * len(cats)
        for k, s in enumerate(bar_series):
            xs = [index[x] for x in s.x]
            if fig.chart == "bars":
                offs = [x - 0.4 + width * (k + 0.5) for x in xs]
                hatch = "//" if s.kind == "paper" else ("xx" if s.kind == "peer" else None)
                # The paper's bars hollow and hatched, each in its own colour of the cycle, so that
                # two of them in one chart stay apart.
                colour = f"C{k % 10}"
                ax.bar(offs, s.y, width=width, label=s.label + (f" ({s.note})" if s.note else ""),
                       hatch=hatch, fill=s.kind != "paper", color=colour if s.kind != "paper" else None,
                       edgecolor=colour if s.kind == "paper" else None)
                for m in s.missing:
                    if m.x in index:
                        ax.text(index[m.x] - 0.4 + width * (k + 0.5), 0.02, "not\nmeasured", rotation=90,
                                ha="center", va="bottom", fontsize=7, transform=ax.get_xaxis_transform())
            else:
                hatch = "//" if s.kind == "peer" else None
                if not s.y:
                    # Nothing of it measured: no zero-height bars, only a hollow legend entry saying so
                    # (a zero-size patch: an empty bar call gets a filled default one in the legend).
                    from matplotlib.patches import Rectangle
                    ax.add_patch(Rectangle((0, 0), 0, 0, fill=False, edgecolor="grey", hatch=hatch,
                                           label=s.label + ": not measured"))
                    continue
                # Bars only where the series has points: a zero-height bar on top of a stack would pin
                # the axis there (matplotlib keeps a bar's base in view without margin).
                ax.bar(xs, s.y, bottom=[bottoms[x] for x in xs], width=0.6, label=s.label, hatch=hatch)
                for x, y in zip(xs, s.y):
                    bottoms[x] += y
        # Every category keeps its place, one with no bar (not measured) at the end included.
        ax.set_xlim(-0.5, len(cats) - 0.5)
        if fig.chart == "stacked":  # a stack with nothing in it says why there
            empty = {m.x for s in bar_series for m in s.missing if m.x in index and bottoms[index[m.x]] == 0}
            for x in sorted(empty, key=index.get):  # in axis order: a redrawn figure is the same file
                ax.text(index[x], 0.02, "not\nmeasured", rotation=90, ha="center", va="bottom", fontsize=7,
                        transform=ax.get_xaxis_transform())
        for s in fig.series:
            if s.kind == "bound":
                for x, y in zip(s.x, s.y):
                    if x in index:
                        ax.hlines(y, index[x] - 0.45, index[x] + 0.45, colors="black", linestyles="-.")
        ax.set_xticks(range(len(cats)))
        ax.set_xticklabels([str(c) for c in cats], rotation=20 if len(cats) > 4 else 0, ha="right" if len(cats) > 4 else "center",
                           fontsize=8)
    if fig.xlog and fig.chart == "lines":
        ax.set_xscale("log", base=fig.xlog_base)
    if fig.ylog:
        ax.set_yscale("log")
    ax.set_xlabel(fig.xlabel)
    ax.set_ylabel(fig.ylabel)
    ax.set_title(fig.title, fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    if any(s.y or s.missing for s in fig.series):
        if fig.legend_outside:
            mpl_fig.set_size_inches(10.0, 4.8)
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
            mpl_fig.subplots_adjust(right=0.7)
        else:
            ax.legend(fontsize=7, loc="best")
    footer = list(fig.notes) + _missing_text(fig)
    if fig.measured_points() == 0:
        footer.insert(0, "nothing of ours was measured for this figure")
        ax.text(0.5, 0.5, "not measured", ha="center", va="center", transform=ax.transAxes, fontsize=14, alpha=0.6)
    if fig.source:
        footer.append(fig.source)
    if footer:
        mpl_fig.text(0.01, 0.01, "\n".join(footer), fontsize=6, va="bottom", ha="left", wrap=True)
        mpl_fig.subplots_adjust(bottom=0.16 + 0.028 * len(footer))
    paths = []
    for ext in ("svg", "png"):
        p = f"{base}.{ext}"
        # SVG without a date or random ids, so that a figure redrawn from the same report is the same file.
        kwargs = {"metadata": {"Date": None}} if ext == "svg" else {"metadata": {"Software": None}}
        if fig.legend_outside:
            kwargs["bbox_inches"] = "tight"  # a long legend entry widens the picture, not cut off
        # Text kept as text in the SVG (searchable, and what the tests read), not as glyph paths.
        with plt.rc_context({"svg.hashsalt": "repix", "svg.fonttype": "none"}):
            mpl_fig.savefig(p + ".tmp", format=ext, **kwargs)
        os.replace(p + ".tmp", p)
        paths.append(p)
    plt.close(mpl_fig)
    p = f"{base}.points.json"
    with open(p + ".tmp", "w") as f:
        json.dump(fig.to_json(), f, indent=1, default=str)
        f.write("\n")
    os.replace(p + ".tmp", p)
    paths.append(p)
    return paths
