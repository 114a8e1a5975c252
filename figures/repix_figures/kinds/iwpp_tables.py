"""Figures of the IWPP paper's tables (Teodoro et al., Parallel Computing 2013, section 5), drawn
from the reports `repix table iwpp-*` writes (harness/papers/iwpp/tables.cpp), with the paper's
numbers beside ours where the report carries them (a row's `paper`, `paper_claims`).

- iwpp-table1: the wavefront-phase time of each GPU queue version against the initial raster
  scans (one figure per marker and launch; log time, as ours and the paper's are decades apart),
  PF over Naive and TQ over PF per row, the same over all rows (the paper's 2.31x and 1.24x), and
  the pixels queued (why a marker can leave the wavefront phase nothing to do).
- iwpp-table2: the EDT speedup over one core per image size (one figure per scope), and the times
  against the size.
- iwpp-fig10: speedup over one core against threads, tiled vs non-tiled (lines, as the paper's).
- iwpp-fig11, iwpp-fig13: FH_GPU and SR_GPU speedups per tile size / tissue coverage (one figure
  per scope), and how much faster FH_GPU is than SR_GPU (the paper states only the mean, 2.6x, and
  the maximum, 3.1x, of that).
- iwpp-fig14: the EDT speedup per tissue coverage, one figure per scope.
- iwpp-fig15, iwpp-fig16: the multi-device speedup per configuration of GPUs and CPU groups.

Kernel-scope and end-to-end speedups are drawn apart: they differ by up to two orders of magnitude,
and on one linear axis (the paper's) the smaller would be flat. The paper's speedups go into both,
as its text does not say which of the two its timings are. Most points of the paper's Figures 10,
11, 13, 14 and 16 are only in its plots, which repix does not transcribe: what is drawn of the paper
is what its text and tables state, or what follows from them (said in the series' note and the
figure's notes).

The paper's own file (results/paper/iwpp-*.json, which carries the same `table` id) draws its
numbers alone. Cells that did not run, rows whose seq baseline did not run and outputs that did not
verify go into `missing` with the report's reason; a wavefront phase that had nothing to do (0 ms,
nothing queued: a measurement, not a gap) has no place on a log axis and no ratio, and is said in
the figure's notes.
"""
import re

from . import table
from ._bench_rows import ordered_unique, slug
from ..core import Figure, Missing, number

STATED = "stated in the text"
SCOPE_WORDS = {"kernel": "kernel scope: inputs on the GPU", "end-to-end": "end to end: host in, host out"}


# ---- what every IWPP report holds --------------------------------------------------------------

def _is_paper_file(report):
    """results/paper/iwpp-*.json: the paper's numbers as repix transcribed them, no measurement."""
    return "tool" not in report and "source" in report and isinstance(report.get("rows"), list)


def _dicts(v):
    return [x for x in v if isinstance(x, dict)] if isinstance(v, list) else []


def _int(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _claims(report):
    return _dicts(report.get("claims" if _is_paper_file(report) else "paper_claims"))


def _text_notes(report, claims=True):
    """The paper's words that a figure of it should carry, and how the report was made."""
    out = []
    if claims:
        out += ["Paper: " + str(c["text"]) for c in _claims(report) if c.get("text")]
        notes = report.get("notes" if _is_paper_file(report) else "paper_notes")
        out += ["Paper: " + str(n) for n in notes] if isinstance(notes, list) else []
    prov = report.get("provenance")
    if isinstance(prov, dict):
        out.append(f"Built from the journal of a run that did not finish ({prov.get('rebuilt_from_journal', '?')}): "
                   "what it had not reached is missing")
    return out


def _measured_rows(report):
    """The speedup tables' rows (label, seq, cells); a paper file's rows are not these."""
    if _is_paper_file(report):
        return []
    return [r for r in _dicts(report.get("rows")) if isinstance(r.get("cells"), list)]


def _paper_rows(report):
    """(our row's label or None, the paper's row) for every paper row the report holds."""
    if _is_paper_file(report):
        return [(None, p) for p in _dicts(report.get("rows"))]
    return [(r.get("label"), r["paper"]) for r in _dicts(report.get("rows")) if isinstance(r.get("paper"), dict)
            and r["paper"]]


def _leading_int(text):
    m = re.match(r"\s*(\d+)", str(text))
    return int(m.group(1)) if m else None


def _not_run(t):
    v = t.get("not_run") if isinstance(t, dict) else None
    return v if isinstance(v, str) and v else ""


def _seq_why(row):
    """Why the row's seq baseline has no time ("" when it has one)."""
    seq = row.get("seq")
    if not isinstance(seq, dict):
        return "the row has no seq baseline"
    if _not_run(seq):
        return f"seq, the baseline, did not run: {_not_run(seq)}"
    if seq.get("verified") is False:
        return f"seq's output was wrong: {seq.get('verification', '?')}"
    if number(seq.get("median_ms")) is None:
        return "seq has no time in the report"
    return ""


def _cell_why(cell):
    """Why the cell has no time to draw ("" when it has one)."""
    if cell is None:
        return "no such cell in this row of the report"
    if _not_run(cell):
        return _not_run(cell)
    if cell.get("verified") is False:
        # The time of a wrong output is no result: said, not drawn.
        return f"its output was wrong: {cell.get('verification', '?')}"
    if number(cell.get("median_ms")) is None:
        return "no time in the report"
    return ""


def _find(row, variant, scope):
    return next((c for c in _dicts(row.get("cells")) if c.get("variant") == variant and c.get("scope") == scope), None)


def _speedup(row, cell):
    """(the cell's speedup over seq, "") or (None, why not)."""
    why = _cell_why(cell)
    if why:
        return None, why
    s = number(cell.get("speedup_vs_seq"))
    if s is not None:
        return s, ""
    why = _seq_why(row)
    if why:
        return None, why
    return number(row["seq"]["median_ms"]) / number(cell["median_ms"]), ""


def _columns(rows):
    """Every (variant, scope) in order of first appearance, as the report's markdown has them."""
    return ordered_unique((c.get("variant"), c.get("scope")) for r in rows for c in _dicts(r.get("cells")))


def _points(rows, xs_of_rows, value):
    """xs, ys and missing of one series: value(row) -> (y, "") or (None, why), or (None, None) for a
    measured value that has no point (said in the figure's notes), for each row with an x."""
    xs, ys, missing = [], [], []
    for r, x in zip(rows, xs_of_rows):
        if x is None:
            continue  # a row with no place on this figure's x
        y, why = value(r)
        if y is None:
            if why is not None:
                missing.append(Missing(x, why))
        else:
            xs.append(x)
            ys.append(y)
    return xs, ys, missing


# ---- the speedup tables: iwpp-table2, -fig10, -fig11, -fig13, -fig14 ---------------------------

def _speedup_figures(report, *, what, xlabel, x_of, names, paper_key="speedup", paper_label="paper",
                     paper_note=STATED, chart="bars", one_scope=False):
    """One speedup figure per scope (`one_scope`: the table has only one, the figure is "speedup"):
    each variant's speedup over seq at each row's x, the paper's beside it. x_of(label or paper row)
    is a row's place on x (a category, or a number for lines); names: the paper's names of our
    variants."""
    rows = _measured_rows(report)
    cols = _columns(rows)
    xs_all = [x_of(r.get("label")) for r in rows]
    paper = []
    for label, p in _paper_rows(report):
        v, x = number(p.get(paper_key)), x_of(label if label is not None else p)
        if v is not None and x is not None:
            paper.append((x, v))
    cats = ordered_unique([x for x in xs_all if x is not None] + [x for x, _ in paper]) if chart == "bars" else None
    figs = []
    # A paper file alone has no scope: one figure of its values.
    for scope in ordered_unique(s for _, s in cols) or [None]:
        name = "speedup" if one_scope or scope is None else slug("speedup", scope)
        title = what if one_scope or scope is None else f"{what}\n({SCOPE_WORDS.get(scope, scope)})"
        fig = Figure(name=name, title=title, xlabel=xlabel, ylabel="speedup over one CPU core (x)", chart=chart,
                     categories=cats, legend_outside=chart == "bars")
        for variant, sc in cols:
            if sc == scope:
                xs, ys, missing = _points(rows, xs_all, lambda r: _speedup(r, _find(r, variant, scope)))
                fig.add(names.get(variant, variant), xs, ys, missing=missing)
        if paper:
            fig.add(paper_label, [x for x, _ in paper], [v for _, v in paper], kind="paper", note=paper_note)
        fig.notes += _text_notes(report)
        if fig.series:
            figs.append(fig)
    return figs


def _size_label(v):
    """A size row's category: its label ("4096^2"); a paper row's from its size."""
    if isinstance(v, dict):
        return f"{v['size']}^2" if _int(v.get("size")) else None
    return v if isinstance(v, str) and v else None


def _coverage_label(v):
    if isinstance(v, dict):
        return f"{v['coverage']} %" if _int(v.get("coverage")) else None
    return v if isinstance(v, str) and v else None


EDT_NAMES = {"gpu-opt": "gpu-opt (exact separable EDT)", "gpu-queue-tq": "gpu-queue-tq (the paper's queue)"}
FH_SR_NAMES = {"gpu-queue-tq": "FH_GPU: gpu-queue-tq (the paper's queue)", "gpu-opt": "FH_GPU: gpu-opt (repix)",
               "gpu-sr": "SR_GPU: gpu-sr (raster scans)"}


@table("iwpp-table2")
def table2(report):
    figs = _speedup_figures(report, what="Table 2: distance transform speedup over one core per image size",
                            xlabel="image size (pixels)", x_of=_size_label, names=EDT_NAMES,
                            paper_label="paper: GPU", paper_note="its Table 2")
    for f in figs:
        if f.name == "speedup-kernel":
            # Ours in kernel scope are ~2500x, the paper's ~35x: on a linear axis its bars would
            # not show. The paper's Table 2 is a table, so a log axis departs from no plot of it.
            f.ylog = True
    if _measured_rows(report):
        figs.append(_table2_time(report))
    return figs


def _table2_time(report):
    """Table 2's point is that the speedup holds as the image grows: the times themselves against
    the side of the image (log-log), seq's with them."""
    rows = _measured_rows(report)
    fig = Figure(name="time", title="Table 2: distance transform time against image size, seq and the GPU variants",
                 xlabel="image side n (pixels, n x n)", ylabel="median time (ms)", xlog=True, ylog=True,
                 legend_outside=True)
    sides = [_leading_int(r.get("label")) for r in rows]

    def seq_time(r):
        why = _seq_why(r)
        return (None, why) if why else (number(r["seq"]["median_ms"]), "")

    def time_of(variant, scope):
        def value(r):
            c = _find(r, variant, scope)
            why = _cell_why(c)
            return (None, why) if why else (number(c["median_ms"]), "")
        return value

    xs, ys, missing = _points(rows, sides, seq_time)
    fig.add("seq (one core)", xs, ys, missing=missing)
    for variant, scope in _columns(rows):
        xs, ys, missing = _points(rows, sides, time_of(variant, scope))
        fig.add(f"{variant}, {scope}", xs, ys, missing=missing)
    fig.notes += _text_notes(report, claims=False)
    return fig


@table("iwpp-fig10")
def fig10(report):
    def threads(v):
        return _int(v.get("threads")) if isinstance(v, dict) else _leading_int(v)
    return _speedup_figures(report, what="Figure 10: multicore reconstruction speedup over one core against threads, "
                                         "tiled vs non-tiled",
                            xlabel="CPU threads", x_of=threads, chart="lines", one_scope=True,
                            names={"omp-tiled": "tiled (omp-tiled)", "omp-nontiled": "non-tiled (omp-nontiled)"},
                            paper_key="tiled_speedup", paper_label="paper: tiled")


def _fh_over_sr(report, *, what, xlabel, x_of):
    """How much faster FH_GPU (gpu-queue-tq, gpu-opt) is than SR_GPU (gpu-sr) per row, and over the
    rows (mean, max): the paper states only those two, as claims."""
    rows = _measured_rows(report)
    cols = _columns(rows)
    xs_all = [x_of(r.get("label")) for r in rows]
    fig = Figure(name="fh-over-sr", title=f"{what}: how much faster FH_GPU is than SR_GPU",
                 xlabel=xlabel, ylabel="SR_GPU time / FH_GPU time (x)", chart="bars",
                 categories=[x for x in xs_all if x is not None] + ["mean", "max"], legend_outside=True)
    comparisons = _dicts(report.get("comparisons"))
    for a in ("gpu-queue-tq", "gpu-opt"):
        for scope in ordered_unique(s for v, s in cols if v == a):
            cmp = next((c for c in comparisons if (c.get("a"), c.get("b"), c.get("scope")) == (a, "gpu-sr", scope)), {})
            per = {p.get("label"): number(p.get("ratio")) for p in _dicts(cmp.get("per_row"))}

            def ratio(r):
                ta, tb = _find(r, a, scope), _find(r, "gpu-sr", scope)
                if _cell_why(ta):
                    return None, f"{a}: {_cell_why(ta)}"
                if _cell_why(tb):
                    return None, f"gpu-sr: {_cell_why(tb)}"
                v = per.get(r.get("label"))
                return (v if v is not None else number(tb["median_ms"]) / number(ta["median_ms"])), ""
            xs, ys, missing = _points(rows, xs_all, ratio)
            if ys:
                # The report's own mean and max where it has them (the same rows), else ours of them.
                mean, top = number(cmp.get("mean")), number(cmp.get("max"))
                xs += ["mean", "max"]
                ys += [mean if mean is not None else sum(ys) / len(ys), top if top is not None else max(ys)]
            else:
                missing += [Missing(k, "no row has both times") for k in ("mean", "max")]
            fig.add(f"{a} over gpu-sr, {scope}", xs, ys, missing=missing)
    paper = []
    for c in _claims(report):
        w, v = str(c.get("what", "")), number(c.get("value"))
        key = w.split(" ", 1)[0]
        if v is not None and "FH_GPU/SR_GPU" in w and key in ("mean", "max"):
            paper.append((key, v))
    if paper:
        fig.add("paper: FH_GPU over SR_GPU", [k for k, _ in paper], [v for _, v in paper], kind="paper", note=STATED)
    fig.notes += _text_notes(report)
    return fig


@table("iwpp-fig11")
def fig11(report):
    figs = _speedup_figures(report, what="Figure 11: reconstruction speedup over one core per image size, "
                                         "FH_GPU vs SR_GPU",
                            xlabel="image (tile) size, pixels", x_of=_size_label, names=FH_SR_NAMES)
    figs.append(_fh_over_sr(report, what="Figure 11, per image size", xlabel="image (tile) size, pixels",
                            x_of=_size_label))
    return figs


@table("iwpp-fig13")
def fig13(report):
    figs = _speedup_figures(report, what="Figure 13: reconstruction speedup over one core per tissue coverage, "
                                         "FH_GPU vs SR_GPU",
                            xlabel="tissue coverage", x_of=_coverage_label, names=FH_SR_NAMES)
    figs.append(_fh_over_sr(report, what="Figure 13, per tissue coverage", xlabel="tissue coverage",
                            x_of=_coverage_label))
    return figs


@table("iwpp-fig14")
def fig14(report):
    figs = _speedup_figures(report, what="Figure 14: distance transform speedup over one core per tissue coverage",
                            xlabel="tissue coverage", x_of=_coverage_label, names=EDT_NAMES)
    if any(r.get("label") == "100 %" for r in _measured_rows(report)):
        for f in figs:
            # A mask with no background has no distance to compute: the full row is the blob
            # generator's densest.
            f.notes.insert(0, "100 %: blobs covering 99 % (a mask without background has no distances)")
    return figs


# ---- iwpp-fig15, -fig16: the multi-device configurations ------------------------------------------

def _gpus_label(n):
    return "1 GPU" if n == 1 else f"{n} GPUs"


def _multi_device(report, what):
    rows = [r for r in _measured_rows(report) if isinstance(r.get("label"), str)]
    labels = [r["label"] for r in rows]
    # The paper's rows under their own configurations: its last one (3 GPUs + CPU) is not ours
    # (2 GPUs + CPU groups); the report pairs them for its table, a figure keeps them apart.
    paper = {}  # config -> (speedup, GPUs, with CPUs, the paper's row)
    for _, p in _paper_rows(report):
        v, cfg = number(p.get("speedup")), p.get("config")
        if v is not None and isinstance(cfg, str):
            paper.setdefault(cfg, (v, _int(p.get("gpus")), bool(p.get("cpu")), p))
    # The GPUs-only speedup the text gives through the CPUs' gain (85.6x = 1.07 x the 3 GPUs'):
    # drawn, and said, where the paper's row of it is not in the report.
    derived = []
    for cfg, (v, g, cpu, p) in list(paper.items()):
        gain = number(p.get("over_gpus_only"))
        if cpu and gain and g and _gpus_label(g) not in paper:
            derived.append(f"Paper's {_gpus_label(g)}: {v:g}x / {gain:g} = {v / gain:.1f}x, its {cfg} over the gain "
                           "it gives the CPUs (the report has no row of it)")
            paper[_gpus_label(g)] = (v / gain, g, False, {})
    # x: by GPU count, then without CPUs before with them (ours and the paper's interleaved).
    keyed = [((_leading_int(lb) or 99, "CPU" in lb), lb) for lb in labels]
    keyed += [((g or 99, cpu), cfg) for cfg, (_, g, cpu, _) in paper.items()]
    cats = ordered_unique(lb for _, lb in sorted(keyed, key=lambda kv: kv[0]))
    fig = Figure(name="speedup", title=f"{what}:\nspeedup over one CPU core per configuration",
                 xlabel="devices", ylabel="speedup over one CPU core (x)", chart="bars", categories=cats,
                 legend_outside=True)
    for variant, scope in _columns(rows):
        xs, ys, missing = _points(rows, labels, lambda r: _speedup(r, _find(r, variant, scope)))
        fig.add(f"{variant}, {scope}", xs, ys, missing=missing)
    if paper:
        fig.add("paper: 3x M2090 + 12 cores", list(paper), [v for v, _, _, _ in paper.values()], kind="paper",
                note=STATED + ("; one derived, see below" if derived else ""))
        fig.notes += derived
    fig.notes += [f"{r['label']}: {r['note']}" for r in rows if r.get("note")]
    fig.notes.append("The paper's node had 3 GPUs; repix's table runs 1 GPU, 2 GPUs, and 2 GPUs with CPU groups")
    fig.notes += _text_notes(report)
    return [fig]


@table("iwpp-fig15")
def fig15(report):
    return _multi_device(report, "Figure 15(a): reconstruction on GPUs and CPU groups")


@table("iwpp-fig16")
def fig16(report):
    return _multi_device(report, "Figure 16: distance transform on GPUs and CPU groups")


# ---- iwpp-table1: the GPU queue ladder ---------------------------------------------------------

# The ladder in table order: the key of our wavefront times (`ours.wavefront_ms`), the variant,
# the paper's name and its column (none for the compiler's warp aggregation).
LADDER = (("atomic", "gpu-queue-atomic", "Naive", "atomic_ms"),
          ("warp_atomic", "gpu-queue-warp-atomic", "warp-atomic", None),
          ("scan", "gpu-queue-scan", "PF", "scan_ms"),
          ("tq", "gpu-queue-tq", "TQ", "tq_ms"))
# The steps of the ladder drawn as ratios: figure name, the report's ratio key, words, (numerator,
# denominator) of the wavefront times.
STEPS = (("pf-over-naive", "atomic_over_scan", "PF over Naive", ("atomic", "scan")),
         ("tq-over-pf", "scan_over_tq", "TQ over PF", ("scan", "tq")),
         (None, "atomic_over_warp_atomic", "warp-atomic over Naive", ("atomic", "warp_atomic")))
PAPER_SETUP = "Paper: a 4K x 4K tile with 100 % tissue, 4-connectivity, 1 block per SM, on a Tesla M2090"
RASTER_X = "initial raster + anti-raster scan pairs"


def _launch_words(b):
    n = _int(b.get("blocks_per_sm"))
    if n == 0:
        return "fit", "as many blocks per SM as fit"
    if n is not None:
        return f"{n}-per-sm", f"{n} block{'s' if n != 1 else ''} per SM"
    return "", str(b.get("launch", "launch not said"))


def _blocks(report):
    """(figure name part, words, block, its rows with a raster-scan count) per block."""
    out, seen = [], {}
    for b in _dicts(report.get("blocks")):
        tag, words = _launch_words(b)
        name = slug(b.get("marker", "marker"), tag)
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = f"{name}-{seen[name]}"  # the same marker and launch twice: both drawn
        rows = [r for r in _dicts(b.get("rows")) if _int(r.get("raster_scans")) is not None]
        out.append((name, f"{b.get('marker', '?')} marker, {words}", b, rows))
    return out


def _wavefront(row, key):
    return number(((row.get("ours") or {}).get("wavefront_ms") or {}).get(key))


def _queue_why(row, key):
    """Why the row has no wavefront time of `key`."""
    variant = next(v for k, v, _, _ in LADDER if k == key)
    q = next((q for q in _dicts(row.get("queues")) if q.get("variant") == variant), None)
    if q is None:
        return f"no {variant} timing in this row of the report"
    if _not_run(q):
        return _not_run(q)
    if q.get("verified") is False:
        return f"its output was wrong: {q.get('verification', '?')}"
    return "no wavefront-phase samples in the report"


def _scans_list(xs):
    return ", ".join(str(x) for x in ordered_unique(xs))


def _paper_by_scans(report, blocks):
    """raster scans -> the paper's row (the same in every block)."""
    out = {}
    for _, _, _, rows in blocks:
        for r in rows:
            if isinstance(r.get("paper"), dict) and r["paper"]:
                out.setdefault(r["raster_scans"], r["paper"])
    if _is_paper_file(report):
        for p in _dicts(report.get("rows")):
            if _int(p.get("raster_scans")) is not None:
                out.setdefault(p["raster_scans"], p)
    return dict(sorted(out.items()))


def _paper_ratio(p, num, den):
    a, b = number(p.get(f"{num}_ms")), number(p.get(f"{den}_ms"))
    return a / b if a is not None and b else None


@table("iwpp-table1")
def table1(report):
    blocks = _blocks(report)
    paper = _paper_by_scans(report, blocks)
    figs = []

    # The times, one figure per marker and launch (a paper file: the paper's alone).
    for name, words, b, rows in blocks or ([("", "", {}, [])] if paper else []):
        fig = Figure(name=slug("time", name), title="Table 1: wavefront-phase time of each GPU queue version"
                                                    + (f"\n({words})" if words else ""),
                     xlabel=RASTER_X, ylabel="wavefront phase (ms)", ylog=True, legend_outside=True)
        zeros = []
        for key, variant, paper_name, _ in LADDER:
            if not rows:
                break

            def wavefront(r):
                v = _wavefront(r, key)
                if v is not None and v <= 0:
                    zeros.append(r["raster_scans"])
                    return None, None
                return (v, "") if v is not None else (None, _queue_why(r, key))
            xs, ys, missing = _points(rows, [r["raster_scans"] for r in rows], wavefront)
            fig.add(f"{paper_name} ({variant})", xs, ys, missing=missing)
        for _, _, paper_name, col in LADDER:
            pts = [(n, number(p.get(col))) for n, p in paper.items()] if col else []
            pts = [(n, v) for n, v in pts if v is not None]
            if pts:
                fig.add(f"paper: {paper_name}", [n for n, _ in pts], [v for _, v in pts], kind="paper",
                        note="its Table 1")
        if zeros:
            fig.notes.append(f"Nothing queued after {_scans_list(zeros)} raster-scan pairs: the wavefront phase "
                             "took 0 ms (no point on a log axis)")
        if b.get("dataset"):
            fig.notes.append(f"Ours: {b['dataset']}, {b.get('connectivity', '?')}-connectivity")
        fig.notes.append(PAPER_SETUP)
        fig.notes += _text_notes(report, claims=False)
        figs.append(fig)

    # Each step of the ladder per row: how much faster it is than the step below.
    for name, key, words, (num, den) in STEPS:
        if name is None:
            continue  # the paper has no warp-atomic column: over all rows only
        fig = Figure(name=name, title=f"Table 1: {words} per row (wavefront-phase time ratio)",
                     xlabel=RASTER_X, ylabel=f"{words} (x)", legend_outside=True)
        undefined = {}
        for _, label, b, rows in blocks:
            def step(r):
                v = number((r.get("ratios") or {}).get(key))
                if v is not None:
                    return v, ""
                a, d = _wavefront(r, num), _wavefront(r, den)
                if a is None or d is None:
                    return None, _queue_why(r, num if a is None else den)
                if d > 0:
                    return a / d, ""  # a report without the row's ratios
                undefined.setdefault(label, []).append(r["raster_scans"])  # 0 ms: no ratio to draw
                return None, None
            xs, ys, missing = _points(rows, [r["raster_scans"] for r in rows], step)
            fig.add(label, xs, ys, missing=missing)
        # The report's ratio of the paper's times; a paper file's, from its times.
        pts = []
        for n, p in paper.items():
            row = next((r for _, _, _, rows in blocks for r in rows if r["raster_scans"] == n), {})
            v = number((row.get("ratios") or {}).get(key + "_paper"))
            v = v if v is not None else _paper_ratio(p, num, den)
            if v is not None:
                pts.append((n, v))
        if pts:
            fig.add(f"paper: {words}", [n for n, _ in pts], [v for _, v in pts], kind="paper",
                    note="from the times of its Table 1")
        for label, xs in undefined.items():
            fig.notes.append(f"{label}: no ratio after {_scans_list(xs)} raster-scan pairs (nothing queued, "
                             "the wavefront phases took 0 ms)")
        fig.notes.append(PAPER_SETUP)
        fig.notes += _text_notes(report, claims=False)
        figs.append(fig)

    # Over all rows (column sums, as the paper's 2.31x and 1.24x are): one bar per block.
    steps = [words for _, _, words, _ in STEPS]
    fig = Figure(name="speedup", title="Table 1: how much faster each step of the queue ladder is,\n"
                                       "over all rows (ratio of the wavefront-phase column sums)",
                 xlabel="step", ylabel="speedup (x)", chart="bars", categories=steps, legend_outside=True)
    for _, label, b, rows in blocks:
        all_rows = b.get("all_rows") or {}
        xs, ys, missing = [], [], []
        for _, key, words, (num, den) in STEPS:
            v = number(all_rows.get(key))
            gap = next((r for r in rows if _wavefront(r, num) is None or _wavefront(r, den) is None), None)
            if v is None and gap is None and rows:  # a report without the all-rows ratios: the same sums
                sums = [sum(_wavefront(r, k) for r in rows) for k in (num, den)]
                v = sums[0] / sums[1] if sums[1] > 0 else None
            if v is not None:
                xs.append(words)
                ys.append(v)
            elif gap is not None:
                k = num if _wavefront(gap, num) is None else den
                missing.append(Missing(words, f"at {gap['raster_scans']} scan pairs: {_queue_why(gap, k)}"))
            else:
                missing.append(Missing(words, "no row has a wavefront time" if not rows else
                                       "nothing queued in any row: the wavefront phases took 0 ms"))
        fig.add(label, xs, ys, missing=missing)
    pts = []
    for _, key, words, (num, den) in STEPS:
        v = next((number((b.get("all_rows") or {}).get(key + "_paper")) for _, _, b, _ in blocks
                  if number((b.get("all_rows") or {}).get(key + "_paper")) is not None), None)
        if v is None and paper and all(_paper_ratio(p, num, den) is not None for p in paper.values()):
            sums = [sum(number(p[f"{k}_ms"]) for p in paper.values()) for k in (num, den)]
            v = sums[0] / sums[1]
        if v is not None:
            pts.append((words, v))
    if pts:
        fig.add("paper", [w for w, _ in pts], [v for _, v in pts], kind="paper",
                note="from the times of its Table 1")
    fig.notes.append(PAPER_SETUP)
    fig.notes += _text_notes(report)
    figs.append(fig)

    # The pixels queued: why a marker can leave the wavefront phase nothing after a few scans, and
    # how far our inputs are from the paper's. One block per marker (the paper's launch where there
    # is one): the counts do not depend on the launch.
    fig = Figure(name="queued", title="Table 1: pixels queued against initial raster scans (gpu-queue-tq)",
                 xlabel=RASTER_X, ylabel="pixels", ylog=True, legend_outside=True)
    by_marker = {}
    for _, _, b, rows in blocks:
        m = b.get("marker", "?")
        if m not in by_marker or b.get("blocks_per_sm") == 1:
            by_marker[m] = rows
    zeros = {}
    for m, rows in by_marker.items():
        for key, words in (("initially_queued_tq", "initially"), ("total_queued_tq", "in total")):
            def queued(r):
                v = number((r.get("ours") or {}).get(key))
                if v is not None and v <= 0:
                    zeros.setdefault(m, []).append(r["raster_scans"])
                    return None, None
                return (v, "") if v is not None else (None, _queue_why(r, "tq"))
            xs, ys, missing = _points(rows, [r["raster_scans"] for r in rows], queued)
            fig.add(f"{m}: queued {words}", xs, ys, missing=missing)
    for key, words in (("initially_queued", "initially"), ("total_queued", "in total")):
        pts = [(n, number(p.get(key))) for n, p in paper.items()]
        pts = [(n, v) for n, v in pts if v is not None]
        if pts:
            fig.add(f"paper: queued {words}", [n for n, _ in pts], [v for _, v in pts], kind="paper",
                    note="its Table 1, as printed")
    for m, xs in zeros.items():
        fig.notes.append(f"{m}: nothing queued after {_scans_list(xs)} raster-scan pairs (0 pixels: no point on a "
                         "log axis)")
    fig.notes.append(PAPER_SETUP)
    fig.notes += _text_notes(report, claims=False)
    if fig.series:
        figs.append(fig)
    return figs
