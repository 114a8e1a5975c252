"""Figures of the AMI thesis's tables (Pal 2020, chapter 5: ranklets and auto-mutual information),
from the reports of `repix table ami-5.1` ... `ami-5.8`.

The eight reports come from one grid (harness/papers/ami/grid.cpp): `columns` (a family variant in
one scope, and the thesis's field it stands beside), `rows` (an image side, or a block size) whose
`cells` follow the columns (`seconds`, `paper_seconds`, `not_run`), and `ratios` (a time ratio of
ours beside the thesis's). So every table is drawn from the same few pieces: time against the
image side per variant (log-log lines), ratios as bars per side, and, for the block-size tables,
each block's time over the fastest block's. The thesis ran on other hardware (a Tesla C2070 and
two Xeon X5675): its times are drawn beside ours, but what compares across the two is the shape
of a curve and the ratios, not the seconds.
"""
from . import table
from ..core import Figure, Missing, number

SIDE = "image side (pixels; the image is side x side)"
SIZES = "image size"
SECONDS = "time per image (s)"

# The thesis's heading for each field a column of ours stands beside (its tables' own words).
THESIS_NAMES = {
    "seq_s": "sequential", "omp_s": "OpenMP", "cuda_s": "CUDA",
    "mi_kernel_ms": "MI kernel", "total_s": "total",
    "r8_omp_s": "OpenMP", "r8_cuda_s": "CUDA", "r32_omp_s": "OpenMP", "r32_cuda_s": "CUDA",
    "ranklet_s": "CUDA",
    "k1024_ms": "kernel", "t1024_s": "total", "k2048_ms": "kernel", "t2048_s": "total",
    "k128_ms": "reduction kernel, 128 threads", "seq_total_s": "total, sequential sum",
    "gpu1_s": "1 card", "gpu2_s": "2 cards",
}


class Grid:
    """One ami table report, read so that anything absent (a row, a cell, a time) is not measured,
    never a zero."""

    def __init__(self, report):
        self.report = report
        self.columns = [c if isinstance(c, dict) else {} for c in report.get("columns") or []]
        self.rows = [r for r in report.get("rows") or [] if isinstance(r, dict)]
        # The rows of one image side each (every table but 5.5's and 5.6's block rows).
        self.sized = [r for r in self.rows if _side(r) is not None]
        self.unverified = []   # notes: cells drawn although their output was not verified

    def find(self, heading):
        for i, c in enumerate(self.columns):
            if c.get("heading") == heading:
                return i
        return None

    def label(self, c):
        h = str(self.columns[c].get("heading", f"column {c}"))
        return h[:-4] if h.endswith(" (s)") else h

    def thesis_label(self, c):
        key = self.columns[c].get("paper_key") or ""
        return "thesis " + THESIS_NAMES.get(key, key)

    def cell(self, row, c):
        cells = row.get("cells") or []
        return cells[c] if c < len(cells) and isinstance(cells[c], dict) else {}

    def seconds(self, row, c, x=None):
        cell = self.cell(row, c)
        s = number(cell.get("seconds"))
        if s is not None and cell.get("verified") is False:
            self.unverified.append(f"{self.label(c)} at {x if x is not None else row.get('label')}: "
                                   "drawn, but its output was not verified against the reference")
        return s

    def thesis(self, row, c):
        return number(self.cell(row, c).get("paper_seconds"))

    def why(self, row, c):
        cell = self.cell(row, c)
        if cell.get("not_run"):
            return cell["not_run"]
        return "a time of 0 s in the report" if number(cell.get("seconds")) == 0 else "no time in the report"

    def paper(self, row):
        p = row.get("paper")
        return p if isinstance(p, dict) else {}

    def ratio(self, row, heading):
        for q in row.get("ratios") or []:
            if isinstance(q, dict) and q.get("ratio") == heading:
                return q
        return {}

    def thesis_hardware(self):
        hw = (self.report.get("paper") or {}).get("hardware") or {}
        parts = [str(hw[k]) for k in ("gpu", "cpu") if hw.get(k)]
        return "thesis: " + "; ".join(parts) if parts else ""


def _side(row):
    n = row.get("size")
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None


def _fmt_s(s):
    if s >= 1:
        return f"{s:.3g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} µs"


def _finish(fig, grid):
    """The notes a grid's figure carries: the thesis's hardware where its points are drawn, and
    each cell of ours drawn although its output was not verified."""
    if any(s.kind == "paper" and s.y for s in fig.series):
        hw = grid.thesis_hardware()
        if hw:
            fig.notes.append(hw)
    seen = set()
    for n in grid.unverified:
        if n not in seen:
            fig.notes.append(n)
            seen.add(n)
    grid.unverified = []
    return fig


# ---- time against the image side --------------------------------------------------------------

def ours_line(fig, grid, c, label=None):
    xs, ys, missing = [], [], []
    for r in grid.sized:
        s = grid.seconds(r, c, r.get("label"))
        if s is None:
            missing.append(Missing(_side(r), grid.why(r, c)))
        else:
            xs.append(_side(r))
            ys.append(s)
    return fig.add(label or grid.label(c), xs, ys, missing=missing)


def thesis_line(fig, grid, values, label, note=""):
    """values(row) -> the thesis's seconds for that row or None; a series only where it has some
    (a size the thesis did not run is left out: it is not a measurement of ours)."""
    xs, ys = [], []
    for r in grid.sized:
        v = values(r)
        if v is not None:
            xs.append(_side(r))
            ys.append(v)
    if xs:
        return fig.add(label, xs, ys, kind="paper", note=note)
    return None


def time_figure(grid, name, title, columns):
    """Ours for each column, then the thesis's column beside each that has one."""
    fig = Figure(name=name, title=title, xlabel=SIDE, ylabel=SECONDS, xlog=True, ylog=True)
    for c in columns:
        ours_line(fig, grid, c)
    for c in columns:
        if grid.columns[c].get("paper_key"):
            thesis_line(fig, grid, lambda r, c=c: grid.thesis(r, c), grid.thesis_label(c))
    return fig


# ---- ratios per image side --------------------------------------------------------------------

def _reasons(grid, row, headings):
    """Why a ratio of ours is not there: the not-run reasons of the columns it divides, each
    reason once (two columns skipped for one reason say it together)."""
    by_reason = {}
    for h in headings:
        c = grid.find(h)
        if c is None:
            by_reason.setdefault(f"no column '{h}' in the report", [])
        elif not number(grid.cell(row, c).get("seconds")):
            by_reason.setdefault(grid.why(row, c), []).append(grid.label(c))
    out = [(" and ".join(cols) + ": " if cols else "") + why for why, cols in by_reason.items()]
    return "; ".join(out) or "no ratio in the report"


def ratio_bars(grid, name, title, ylabel, specs, scale=1.0, ylog=False, ideal=None):
    """Bars per image side of the report's ratios. specs: (ratio heading, our label, the thesis's
    label or "", the headings of the two columns it divides). The values are the report's, times
    `scale` (1/2 turns a 2-GPU speedup into an efficiency). `ideal`: (label, y) drawn as a line
    across every side (1 for break-even, 2 for a perfect 2-GPU speedup)."""
    cats = [str(r.get("label")) for r in grid.sized]
    fig = Figure(name=name, title=title, xlabel=SIZES, ylabel=ylabel, chart="bars", ylog=ylog, categories=cats)
    for heading, label, thesis_label, divides in specs:
        xs, ys, missing, txs, tys = [], [], [], [], []
        for r, cat in zip(grid.sized, cats):
            q = grid.ratio(r, heading)
            ours, theirs = number(q.get("ours")), number(q.get("paper"))
            if ours is None:
                missing.append(Missing(cat, _reasons(grid, r, divides)))
            else:
                xs.append(cat)
                ys.append(ours * scale)
            if theirs is not None:
                txs.append(cat)
                tys.append(theirs * scale)
        fig.add(label, xs, ys, missing=missing)
        if thesis_label and txs:
            fig.add(thesis_label, txs, tys, kind="paper")
    if ideal:
        fig.add(ideal[0], list(cats), [ideal[1]] * len(cats), kind="bound")
        fig.notes.append(f"dash-dot line: {ideal[0]} ({ideal[1]:g})")
    return fig


# ---- block sizes: each block's time over the fastest block's ------------------------------------

def relative_bars(name, title, xlabel, points, our_label="ours", thesis_label="thesis", unit=""):
    """points: (category, our seconds or None, why not, the thesis's seconds or None), one per
    block. Each series is divided by its own fastest block, so 1 marks the best block and the
    shapes of ours and the thesis's compare although their seconds differ a thousandfold."""
    # A time of 0 s (below a timer's resolution) cannot be the unit the others are counted in;
    # Grid.why says so for ours.
    points = [(cat, s if s else None, why, t if t else None) for cat, s, why, t in points]
    cats = [p[0] for p in points]
    fig = Figure(name=name, title=title, xlabel=xlabel, ylabel="time / the fastest block's time",
                 chart="bars", categories=cats)
    ours = [(cat, s) for cat, s, _, _ in points if s is not None]
    missing = [Missing(cat, why) for cat, s, why, _ in points if s is None]
    if ours:
        best_cat, best = min(ours, key=lambda p: p[1])
        fig.add(f"{our_label} (fastest: {best_cat}{unit}, {_fmt_s(best)})", [c for c, _ in ours],
                [s / best for _, s in ours], missing=missing)
    else:
        fig.add(our_label, [], [], missing=missing)
    theirs = [(cat, t) for cat, _, _, t in points if t is not None]
    if theirs:
        best_cat, best = min(theirs, key=lambda p: p[1])
        fig.add(f"{thesis_label} (fastest: {best_cat}{unit}, {_fmt_s(best)})", [c for c, _ in theirs],
                [t / best for _, t in theirs], kind="paper")
    return fig


# ---- the tables -------------------------------------------------------------------------------

@table("ami-5.1")
def t51(report):
    g = Grid(report)
    seq, omp = g.find("seq (s)"), g.find("omp (s)")
    cols = [c for c in (seq, omp) if c is not None]
    fig = Figure(name="time", xlabel=SIDE,
                 title="Table 5.1: AMI, both stages (r = 8), sequential vs OpenMP time per image, ours vs thesis",
                 ylabel=SECONDS, xlog=True, ylog=True)
    for c in cols:
        ours_line(fig, g, c)
    # From 2048^2 on the thesis did not run its sequential code: it extrapolated it from its
    # OpenMP trend line, so those points are a series of their own, not a measurement.
    predicted = lambda r: bool(g.paper(r).get("seq_predicted"))  # noqa: E731
    if seq is not None:
        thesis_line(fig, g, lambda r: None if predicted(r) else g.thesis(r, seq), "thesis sequential")
        thesis_line(fig, g, lambda r: g.thesis(r, seq) if predicted(r) else None, "thesis sequential",
                    note="extrapolated by the thesis, not run")
    if omp is not None:
        thesis_line(fig, g, lambda r: g.thesis(r, omp), "thesis OpenMP")
    _finish(fig, g)
    guessed = [str(r.get("label")) for r in g.sized if predicted(r)]
    speed = ratio_bars(g, "speedup", "Table 5.1: OpenMP speedup over sequential (seq / omp), ours vs thesis",
                       "speedup (x)", [("omp speedup", "omp over seq",
                                        "thesis OpenMP over sequential", ("seq (s)", "omp (s)"))])
    if guessed:
        speed.notes.append("the thesis's speedups at " + ", ".join(guessed) + " divide its extrapolated sequential time")
    return [fig, _finish(speed, g)]


@table("ami-5.2")
def t52(report):
    g = Grid(report)
    title = "Table 5.2: auto-mi on the GPU, kernels and end-to-end total per image, ours vs thesis"
    time = _finish(time_figure(g, "time", title, range(len(g.columns))), g)
    # The thesis's point: its kernels are a small part of the total (allocation and transfers
    # dominate); the share is a ratio of two times on one machine, so it compares across the two.
    cats = [str(r.get("label")) for r in g.sized]
    share = Figure(name="kernel-share", xlabel=SIZES,
                   title="Table 5.2: share of the kernels in the feature stage's total time (kernels / total)",
                   ylabel="kernels / total", chart="bars", categories=cats)
    for variant in _ordered(c.get("variant") for c in g.columns):
        k = _column(g, variant, "kernel")
        t = _column(g, variant, "end-to-end")
        if k is None or t is None:
            continue
        xs, ys, missing, txs, tys = [], [], [], [], []
        for r, cat in zip(g.sized, cats):
            ours = _over(g.seconds(r, k, cat), g.seconds(r, t, cat))
            if ours is None:
                missing.append(Missing(cat, _reasons(g, r, [g.columns[i]["heading"] for i in (k, t)])))
            else:
                xs.append(cat)
                ys.append(ours)
            theirs = _over(g.thesis(r, k), g.thesis(r, t))
            if theirs is not None:
                txs.append(cat)
                tys.append(theirs)
        share.add(variant, xs, ys, missing=missing)
        if txs:  # gpu-naive's columns: gpu-opt stands beside nothing of the thesis's
            share.add("thesis MI kernel / total", txs, tys, kind="paper")
    share.notes.append("kernels and total are separate runs, so a share near 1 can pass 1 by their noise")
    title = "Table 5.2: gpu-opt's speedup over gpu-naive, end to end (ours; the thesis has no gpu-opt)"
    speed = ratio_bars(g, "speedup", title, "speedup (x)", [("total / gpu-opt total", "gpu-opt over gpu-naive", "",
                                        ("gpu-naive total (s)", "gpu-opt total (s)"))], ylog=True)
    return [time, _finish(share, g), _finish(speed, g)]


@table("ami-5.3")
def t53(report):
    g = Grid(report)
    time = time_figure(g, "time", "Table 5.3: auto-mi feature vector, OpenMP vs CUDA time per image, ours vs thesis",
                       range(len(g.columns)))
    speed = ratio_bars(g, "speedup", "Table 5.3: GPU speedup over OpenMP (omp / GPU), ours vs thesis",
                       "speedup over omp (x)",
                       [("CUDA speedup over omp", "gpu-naive over omp", "thesis CUDA over OpenMP",
                         ("omp (s)", "gpu-naive (s)")),
                        ("gpu-opt over omp", "gpu-opt over omp", "", ("omp (s)", "gpu-opt (s)"))],
                       ylog=True, ideal=("break-even", 1.0))
    return [_finish(time, g), _finish(speed, g)]


@table("ami-5.4")
def t54(report):
    g = Grid(report)
    figs = []
    # One figure per window: r = 32 sorts 16 times the values per pixel, and the thesis's
    # point differs between the two (OpenMP wins at r = 8, CUDA breaks even at r = 32).
    for w in _ordered(str(c.get("heading", "")).split(" ")[0] for c in g.columns):
        cols = [i for i, c in enumerate(g.columns) if str(c.get("heading", "")).startswith(w + " ")]
        if not w.startswith("r") or not cols:
            continue
        window = f"r = {w[1:]}"
        title = f"Table 5.4: ranklet transform ({window}), OpenMP vs CUDA time per image, ours vs thesis"
        time = time_figure(g, f"time-{w}", title, cols)
        for s in time.series:  # the window is in the title; the legend names the variant
            if s.label.startswith(w + " "):
                s.label = s.label[len(w) + 1:]
        title = f"Table 5.4: ranklet ({window}) CUDA speedup over OpenMP (omp / gpu-naive), ours vs thesis"
        speed = ratio_bars(g, f"speedup-{w}", title, "speedup over omp (x)",
                           [(f"{w} CUDA over omp", "gpu-naive over omp", "thesis CUDA over OpenMP",
                             (f"{w} omp (s)", f"{w} gpu-naive (s)"))],
                           ylog=True, ideal=("break-even", 1.0))
        figs += [_finish(time, g), _finish(speed, g)]
    return figs


@table("ami-5.5")
def t55(report):
    g = Grid(report)
    figs = []
    c = 0  # the table's one column: ranklet gpu-naive end to end
    if not g.columns:
        return figs
    for n in _ordered(_side(r) for r in g.rows if _side(r) and r.get("block")):
        points = []
        for r in g.rows:
            if _side(r) == n and r.get("block"):
                cat = f"{r['block']} x {r['block']}"
                points.append((cat, g.seconds(r, c, r.get("label")), g.why(r, c), g.thesis(r, c)))
        fig = relative_bars(f"blocks-{n}", f"Table 5.5: ranklet gpu-naive (r = 8) at {n}^2 by thread block, ours vs thesis",
                            "thread block (threads x threads)", points, thesis_label="thesis CUDA")
        figs.append(_finish(fig, g))
    return figs


@table("ami-5.6")
def t56(report):
    g = Grid(report)
    figs = []
    rows = [r for r in g.rows if r.get("block")]
    for c, col in enumerate(g.columns):
        n = col.get("size")
        kernels = col.get("scope") == "kernel"
        points = [(str(r["block"]), g.seconds(r, c, r.get("label")), g.why(r, c), g.thesis(r, c)) for r in rows]
        what = "kernels" if kernels else "end to end"
        fig = relative_bars(f"{'kernels' if kernels else 'total'}-{n}",
                            f"Table 5.6: auto-mi gpu-naive {what} at {n}^2 by 1-D block size, ours vs thesis",
                            "threads per block", points, thesis_label=g.thesis_label(c), unit=" threads")
        if kernels:
            fig.notes.append("kernels: ours the counting and NMI kernels, the thesis's its MI kernel")
        figs.append(_finish(fig, g))
    return figs


@table("ami-5.7")
def t57(report):
    g = Grid(report)
    s, t = g.find("lag sum (s)"), g.find("gpu-naive total (s)")
    fig = Figure(name="time", xlabel=SIDE,
                 title="Table 5.7: the per-lag NMI sum (ours: on the host) and the feature stage, ours vs thesis",
                 ylabel=SECONDS, xlog=True, ylog=True)
    for c in (s, t):
        if c is not None:
            ours_line(fig, g, c)
    if s is not None:
        thesis_line(fig, g, lambda r: g.thesis(r, s), "thesis reduction kernel, 128 threads")
        # The thesis's 256-thread kernel (blank at 128^2: 127 lags do not fill 256 threads).
        thesis_line(fig, g, lambda r: _ms(g.paper(r).get("k256_ms")), "thesis reduction kernel, 256 threads")
    if t is not None:
        thesis_line(fig, g, lambda r: g.thesis(r, t), "thesis total, sequential sum")
    _finish(fig, g)
    cats = [str(r.get("label")) for r in g.sized]
    share = Figure(name="share", xlabel=SIZES,
                   title="Table 5.7: share of the lag sum in the feature stage's total (sum / total), ours vs thesis",
                   ylabel="lag sum / total", chart="bars", ylog=True, categories=cats)
    if s is not None and t is not None:
        xs, ys, missing, txs, tys = [], [], [], [], []
        for r, cat in zip(g.sized, cats):
            ours = _over(g.seconds(r, s, cat), g.seconds(r, t, cat))
            if ours is None:
                missing.append(Missing(cat, _reasons(g, r, ["lag sum (s)", "gpu-naive total (s)"])))
            else:
                xs.append(cat)
                ys.append(ours)
            theirs = _over(g.thesis(r, s), number(g.paper(r).get("t128_s")))
            if theirs is not None:
                txs.append(cat)
                tys.append(theirs)
        share.add("host lag sum / gpu-naive total", xs, ys, missing=missing)
        if txs:
            share.add("thesis 128-thread kernel / its total", txs, tys, kind="paper")
    return [fig, _finish(share, g)]


@table("ami-5.8")
def t58(report):
    g = Grid(report)
    one, two = g.find("1 GPU (s)"), g.find("2 GPUs (s)")
    cols = [c for c in (one, two) if c is not None]
    time = time_figure(g, "time", "Table 5.8: auto-mi multi-device on 1 and 2 GPUs, time per image, ours vs thesis", cols)
    # The thesis also ran 3 cards; ours has no 3-GPU column, its line stays the thesis's alone.
    thesis_line(time, g, lambda r: number(g.paper(r).get("gpu3_s")), "thesis 3 cards", note="no 3-GPU run of ours")
    divides = ("1 GPU (s)", "2 GPUs (s)")
    speed = ratio_bars(g, "speedup", "Table 5.8: speedup of 2 GPUs over 1 (T1 / T2), ours vs thesis", "speedup (x)",
                       [("speedup, 2 GPUs", "2 GPUs over 1", "thesis 2 cards over 1", divides)], ideal=("ideal", 2.0))
    eff = ratio_bars(g, "efficiency", "Table 5.8: parallel efficiency on 2 GPUs (T1 / (2 T2)), ours vs thesis", "efficiency",
                     [("speedup, 2 GPUs", "2 GPUs", "thesis 2 cards", divides)], scale=0.5, ideal=("ideal", 1.0))
    return [_finish(time, g), _finish(speed, g), _finish(eff, g)]


# ---- small helpers ----------------------------------------------------------------------------

def _ordered(values):
    out = []
    for v in values:
        if v is not None and v not in out:
            out.append(v)
    return out


def _column(grid, variant, scope):
    for i, c in enumerate(grid.columns):
        if c.get("variant") == variant and c.get("scope") == scope:
            return i
    return None


def _over(a, b):
    """a / b, or None where either is not there (or b is 0)."""
    return a / b if a is not None and b else None


def _ms(v):
    v = number(v)
    return None if v is None else v * 1e-3
