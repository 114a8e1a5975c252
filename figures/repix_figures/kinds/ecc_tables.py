"""Figures of the ECC paper's tables (Wang, Wagner, Chen, SoCG 2022) from `repix table ecc-N` and
`repix table ecc-ablation` reports (harness/papers/ecc/tables.cpp and ablation.cpp write them):

- ecc-1: per input, the CPU's (omp) and the GPU's (gpu-opt; gpu-stream for the streamed sizes)
  times overall (file read included) and end to end, the GPU's speedup and its kernel
  throughput, the paper's values beside ours; in the speedup figure the paper's rows that cannot
  be reproduced (VICTRE, CMB) keep their bars, ours said to be missing with the report's reason.
- ecc-2: the GPU-only pipeline {smoothing; ECC} x N: the overall time per iteration (the setup
  amortised) and each step's time per iteration, against N.
- ecc-3: batches of N small images read from files: time per image against N for each image
  group, and the amortisation avg(N) / avg(1) beside the paper's.
- ecc-ablation: the optimisation ladder, median time and speedup over the ladder's first step per
  input (log scales), and the Nsight Compute counters of each step where the report has them.

Tables 2 and 3 are curves against N on log axes (several paper series a figure, which bars would
draw alike); the x label names the counts, as the axis ticks are powers of 2.
"""
from . import table
from ._bench_rows import dataset_labels, ordered_unique, short_dataset, slug
from ..core import Figure, Missing, number


def _spec_params(spec):
    """uniform:512x512x512:levels=1024:seed=1 -> {"levels": "1024", "seed": "1"}."""
    out = {}
    for part in str(spec or "").split(":")[1:]:
        if "=" in part:
            k, v = part.split("=", 1)
            out[k] = v
    return out


def _unique(labels, tiebreaks):
    """Labels made unique: a repeated one gets its tiebreak (e.g. the seed), then a running number."""
    given = list(labels)
    labels = [f"{lab}, {tie}" if given.count(lab) > 1 and tie else lab for lab, tie in zip(given, tiebreaks)]
    seen = {}
    for i, lab in enumerate(labels):
        if labels.count(lab) > 1:
            seen[lab] = seen.get(lab, 0) + 1
            labels[i] = f"{lab} #{seen[lab]}"
    return labels


def _hardware(report):
    hw = (report.get("paper") or {}).get("hardware") or {}
    return hw if isinstance(hw, dict) else {}


def _paper_gpu(report):
    gpu = str(_hardware(report).get("gpu") or "")
    return gpu.split(" (")[0] or "the paper's GPU"


def _no_gpu(report):
    """The report's "no GPU: <reason>", or ""."""
    gpu = str(report.get("gpu") or "")
    return gpu if gpu.startswith("no GPU") else ""


def _our_rows(report):
    """The table's rows, each with its "ours" part. The paper's transcription of the same table
    (results/paper/, "table" naming it too) has rows of the paper's numbers only: no figure of ours."""
    return [r for r in report.get("rows") or [] if isinstance(r, dict) and "ours" in r]


def _provenance_missing(report):
    prov = report.get("provenance")
    return [str(m) for m in (prov.get("missing") or [])] if isinstance(prov, dict) else []


# ---- Table 1 ----------------------------------------------------------------------------------

# What each of our Table 1 cells is measured by: (variant, scope) in the bench report inside the
# table's JSON. The GPU end to end is gpu-stream's where the size was streamed.
_T1_CELLS = {
    "cpu_overall_s": [("omp", "with-io")],
    "gpu_overall_s": [("gpu-opt", "with-io")],
    "cpu_end_to_end_s": [("omp", "end-to-end")],
    "gpu_end_to_end_s": [("gpu-stream", "end-to-end"), ("gpu-opt", "end-to-end")],
    "gpu_kernel_gvox_s": [("gpu-opt", "kernel")],
}


def _t1_results(report):
    inner = report.get("report") if isinstance(report.get("report"), dict) else {}
    return [r for r in inner.get("results") or [] if isinstance(r, dict) and r.get("family", "ecc") == "ecc"]


def _t1_why(report, dataset, cells):
    """Why a Table 1 cell of ours has no number: the first of its bench cells that did not give
    one, as the bench report says (not run, failed), or that there is none."""
    results = _t1_results(report)
    for alternatives in cells:
        reasons = []
        for variant, scope in alternatives:
            hit = next((r for r in results if r.get("dataset") == dataset and r.get("variant") == variant
                        and r.get("scope") == scope), None)
            if hit is None:
                continue
            if hit.get("not_run") or not hit.get("samples_ms"):
                reasons.append(f"{variant} {scope}: {hit.get('not_run') or hit.get('verification') or 'not run'}")
            else:
                reasons = None  # this cell was measured: the next one is the culprit
                break
        if reasons is None:
            continue
        if reasons:
            return reasons[0]
        variant, scope = alternatives[-1]
        if variant.startswith("gpu") and _no_gpu(report):
            return _no_gpu(report)
        return f"no {variant} {scope} result on this input in the report"
    return "not in the report"


def _compact(shape):
    """512x512x512 -> 512^3, 8192x8192 -> 8192^2; other shapes as they are."""
    dims = str(shape).split("x")
    return f"{dims[0]}^{len(dims)}" if len(dims) > 1 and len(set(dims)) == 1 else str(shape)


def _t1_categories(rows, not_repro):
    """One category an input, short enough for a slanted axis label: ours in the report's order,
    then the paper's rows we cannot run."""
    base, ties = [], []
    for r in rows:
        base.append(f"{r.get('input', '?')} {_compact(r.get('shape', '?'))}")
        seed = _spec_params(r.get("dataset")).get("seed")
        ties.append(f"seed {seed}" if seed else "")
    for r in not_repro:
        base.append(f"{r.get('input', '?')} {_compact(r.get('shape', '?'))}")
        ties.append("")
    return _unique(base, ties)


class _Points:
    """One series being built: its points in category order and what it lacks, with why. On a log
    axis a time, rate or speedup of 0 is a cell that did not run (a bench row without samples):
    said, like a null, and never drawn."""

    def __init__(self, log=True):
        self.log = log
        self.x, self.y, self.missing = [], [], []

    def put(self, cat, value, why):
        v = number(value)
        if v is None or (self.log and v <= 0):
            self.missing.append(Missing(cat, why))
        else:
            self.x.append(cat)
            self.y.append(v)

    def add_to(self, fig, label, kind="ours", note=""):
        if fig.chart == "bars" and not self.y and self.missing:
            label += ": not measured"  # the renderer gives a bar series with no bar a legend patch still
        return fig.add(label, self.x, self.y, kind=kind, missing=self.missing, note=note)


@table("ecc-1")
def table1(report):
    rows = _our_rows(report)
    not_repro = [r for r in report.get("not_reproducible") or [] if isinstance(r, dict)]
    if not rows and not not_repro:
        return []
    cats = _t1_categories(rows, not_repro)
    ours_cats, nr_cats = cats[:len(rows)], cats[len(rows):]
    hw = _hardware(report)
    paper_gpu = _paper_gpu(report)

    def ours(field, cells, part="ours"):
        b = _Points()
        for cat, r in zip(ours_cats, rows):
            b.put(cat, (r.get(part) or {}).get(field), _t1_why(report, r.get("dataset"), cells))
        return b

    def paper(field, b=None):
        b = b or _Points()
        for cat, r in zip(ours_cats, rows):
            p = r.get("paper")
            if isinstance(p, dict):
                b.put(cat, p.get(field), "the paper's table has no value here")
            else:
                b.missing.append(Missing(cat, "the paper has no row at this input"))
        return b

    # Bars of one kind look alike (the paper's are hollow and hatched): one paper series a figure.
    cpu = Figure(name="t1-cpu", title="ECC Table 1: CPU time per input, ours (omp) vs the paper's (CHUNKYEuler)",
                 xlabel="input", ylabel="time (s), log scale", chart="bars", ylog=True, categories=list(ours_cats))
    ours("cpu_overall_s", [_T1_CELLS["cpu_overall_s"]]).add_to(cpu, "ours, overall (file read included)")
    ours("cpu_end_to_end_s", [_T1_CELLS["cpu_end_to_end_s"]]).add_to(cpu, "ours, end to end (in memory)")
    paper("cpu_overall_s").add_to(cpu, "paper, overall", kind="paper")

    gpu = Figure(name="t1-gpu", title="ECC Table 1: GPU time per input, ours (gpu-opt) vs the paper's",
                 xlabel="input", ylabel="time (s), log scale", chart="bars", ylog=True, categories=list(ours_cats))
    ours("gpu_overall_s", [_T1_CELLS["gpu_overall_s"]]).add_to(gpu, "ours, overall (file read included)")
    ours("gpu_end_to_end_s", [_T1_CELLS["gpu_end_to_end_s"]]).add_to(gpu, "ours, end to end (in memory)")
    paper("gpu_overall_s").add_to(gpu, f"paper, overall ({paper_gpu})", kind="paper")
    streamed = ordered_unique(r.get("dataset") for r in _t1_results(report)
                              if r.get("variant") == "gpu-stream" and r.get("scope") == "end-to-end")
    for cat, r in zip(ours_cats, rows):
        if r.get("dataset") in streamed:
            gpu.notes.append(f"end to end at {cat}: gpu-stream from the CPU generator, chunk by chunk "
                             "(generation included, one sample)")
    for f in (cpu, gpu):
        f.notes.append("overall: the .npy file read inside each sample (page cache not dropped), not the "
                       "paper's cold NVMe read; the paper has no end-to-end column")

    speed = Figure(name="t1-speedup", title="ECC Table 1: GPU speedup over the CPU (CPU time / GPU time) per input",
                   xlabel="input", ylabel="speedup (x), log scale", chart="bars", ylog=True, categories=list(cats))
    over = ours("ours_speedup_overall", [_T1_CELLS["cpu_overall_s"], _T1_CELLS["gpu_overall_s"]], part="ratios")
    # The paper's rows we cannot run keep their bars here, the table's headline column. Their reason
    # is given in full once a reason; the footer lists every point, so the others point to it.
    first_of = {}
    for cat, r in zip(nr_cats, not_repro):
        why = str(r.get("reason") or "no reason given")
        over.missing.append(Missing(cat, f"not reproducible: {why}" if why not in first_of
                                    else f"not reproducible, as {first_of[why]}"))
        first_of.setdefault(why, cat)
    over.add_to(speed, "ours, overall")
    ours("ours_speedup_end_to_end", [_T1_CELLS["cpu_end_to_end_s"], _T1_CELLS["gpu_end_to_end_s"]],
         part="ratios").add_to(speed, "ours, end to end")
    p = paper("overall_speedup")
    for cat, r in zip(nr_cats, not_repro):
        p.put(cat, (r.get("paper") if isinstance(r.get("paper"), dict) else r).get("overall_speedup"),
              "the paper's table has no value here")
    p.add_to(speed, "paper, overall (as printed)", kind="paper")

    kern = Figure(name="t1-kernel", title="ECC Table 1: kernel throughput, data in GPU memory, ours (gpu-opt) vs "
                                          "the paper's",
                  xlabel="input", ylabel="GVox/s, log scale", chart="bars", ylog=True, categories=list(ours_cats))
    ours("gpu_kernel_gvox_s", [_T1_CELLS["gpu_kernel_gvox_s"]]).add_to(kern, "ours")
    paper("gpu_kernel_gvox_s").add_to(kern, f"paper ({paper_gpu})", kind="paper")

    figs = [cpu, gpu, speed, kern]
    # The number of distinct values drives the binning, so the timings: said once a level count.
    by_levels = {}
    for cat, r in zip(ours_cats, rows):
        levels = _spec_params(r.get("dataset")).get("levels")
        if levels:
            by_levels.setdefault((levels, r.get("input") == "uniform"), []).append(cat)
    for (levels, uniform), where in by_levels.items():
        for f in figs:
            f.notes.append(f"{', '.join(where)}: {levels} distinct levels"
                           + (" (the paper's uniform noise: float [0, 1))" if uniform else ""))
    for cat, r in zip(ours_cats, rows):
        if r.get("verified") is False:
            for f in figs:
                f.notes.append(f"{cat}: NOT verified")
        for n in r.get("notes") or []:
            if "fallback" in str(n):
                kern.notes.append(f"{cat}: {n}")
    if not_repro:
        kinds = ", ".join(ordered_unique(str(r.get("input", "?")) for r in not_repro))
        for f in (cpu, gpu, kern):
            f.notes.append(f"the paper's rows not reproducible here ({kinds}): in t1-speedup")
    if hw:
        for f in figs:
            f.notes.append(f"paper: {hw.get('gpu', '?')}; CPU: {hw.get('cpu_baseline', '?')}, {hw.get('cpu', '?')}")
    return figs


# ---- Table 2 ----------------------------------------------------------------------------------

def _n_label(what, counts):
    """The x label of a count axis (decades: the paper's rows are powers of 10), naming the counts."""
    return f"{what} N = {', '.join(str(n) for n in counts)} (log scale)"


def _iterations(key):
    """"pipeline x100" (a journal key) -> 100."""
    tail = key.rsplit("x", 1)[-1]
    return int(tail) if key.startswith("pipeline x") and tail.isdigit() else None


@table("ecc-2")
def table2(report):
    rows = [r for r in _our_rows(report) if isinstance(r.get("iterations"), int)]
    lost = [n for n in (_iterations(k) for k in _provenance_missing(report)) if n is not None]
    counts = sorted(set([r["iterations"] for r in rows] + lost))
    if not counts:
        return []
    by_n = {r["iterations"]: r for r in rows}
    no_gpu = _no_gpu(report)

    def why_not(r):
        if r is None:
            return "not in the journal the table was rebuilt from (its run did not finish)"
        if no_gpu:
            return no_gpu
        return r.get("verification") or "not run"

    def series(fig, field, label_ours, label_paper):
        o, p = _Points(), _Points()
        for n in counts:
            r = by_n.get(n)
            o.put(n, ((r or {}).get("ours") or {}).get(field), why_not(r))
            if r is None:
                continue  # nothing of the paper's is in the report without the row
            if isinstance(r.get("paper"), dict):
                p.put(n, r["paper"].get(field), "the paper's table has no value here")
            else:
                p.missing.append(Missing(n, f"the paper has no row at N = {n}"))
        o.add_to(fig, label_ours)
        p.add_to(fig, label_paper, kind="paper")

    ds = short_dataset(str(report.get("dataset") or "?"))
    paper_gpu = _paper_gpu(report)
    overall = Figure(name="t2-overall",
                     title=f"ECC Table 2: time per iteration of {{smoothing; ECC}} x N on {ds}, ours vs paper",
                     xlabel=_n_label("iterations", counts), ylabel="overall / N (ms), log scale", xlog=True, xlog_base=10, ylog=True)
    series(overall, "overall_avg_ms", "ours", f"paper ({paper_gpu})")
    overall.notes.append("overall: setup (buffers, plan, one upload) + the loop; the paper's N = 1 holds its "
                         "one-time GPU overhead")
    ctx = number(report.get("cuda_context_ms"))
    if ctx is not None:
        overall.notes.append(f"outside ours: the CUDA context's creation, {ctx:.1f} ms once a process")
    disk = number(report.get("disk_read_ms"))
    paper_disk = [number((r.get("paper") or {}).get("disk_read_ms")) for r in rows if isinstance(r.get("paper"), dict)]
    paper_disk = [d for d in paper_disk if d is not None]
    if disk is not None:
        said = f"the input's file read, once (not in the loop): ours {disk:.2f} ms"
        if paper_disk:
            said += f", paper {min(paper_disk):.2f} to {max(paper_disk):.2f} ms"
        overall.notes.append(said)

    steps = Figure(name="t2-steps",
                   title=f"ECC Table 2: each step's time per iteration against N on {ds}, ours vs paper",
                   xlabel=_n_label("iterations", counts), ylabel="time per iteration (ms), log scale", xlog=True, xlog_base=10,
                   ylog=True)
    series(steps, "ecc_exec_avg_ms", "ours ECC exec", "paper ECC exec")
    series(steps, "gaussian_exec_avg_ms", "ours smoothing", "paper smoothing")
    series(steps, "ecc_mem_avg_ms", "ours ECC mem (curve to host)", "paper ECC mem")
    if report.get("smoothing"):
        steps.notes.append(f"smoothing: {str(report['smoothing']).split(' (')[0]}")
    for r in rows:
        if r.get("verified") is False and (r.get("ours") or {}).get("overall_ms") is not None:
            for f in (overall, steps):
                f.notes.append(f"N = {r['iterations']}: NOT verified ({r.get('verification', '')})")
    return [overall, steps]


# ---- Table 3 ----------------------------------------------------------------------------------

_CPU_BATCH_VOXELS = 2 ** 27  # the CPU column's budget a batch (harness/papers/ecc/table3.cpp)


def _voxels(shape):
    n = 1
    for d in str(shape).split("x"):
        if not d.isdigit():
            return None
        n *= int(d)
    return n


@table("ecc-3")
def table3(report):
    rows = [r for r in _our_rows(report) if isinstance(r.get("count"), int)]
    groups = ordered_unique((r.get("input", "?"), r.get("shape", "?")) for r in rows)
    if not groups:
        return []
    no_gpu = _no_gpu(report)
    paper_gpu = _paper_gpu(report)
    ctx = number(report.get("cuda_context_ms"))

    def why_gpu(r):
        v = str(r.get("verification") or "")
        if v.startswith("not run"):
            return v
        return no_gpu or v or "not run"

    def why_cpu(r):
        v = str(r.get("verification") or "")
        if v.startswith("not run"):
            return v
        vox = _voxels(r.get("shape"))
        if vox is not None and r["count"] * vox > _CPU_BATCH_VOXELS:
            return "omp not timed: the CPU column stops at 2^27 voxels a batch (time budget)"
        return "omp not timed at this batch size"

    figs = []
    amort = Figure(name="t3-amortisation",
                   title="ECC Table 3: amortisation of the GPU time per image, avg(N) / avg(1), ours vs paper",
                   xlabel=_n_label("images in the batch", sorted({r["count"] for r in rows})),
                   ylabel="avg(N) / avg(1), log scale", xlog=True, xlog_base=10,
                   ylog=True)
    for inp, shape in groups:
        rs = sorted((r for r in rows if (r.get("input", "?"), r.get("shape", "?")) == (inp, shape)),
                    key=lambda r: r["count"])
        fig = Figure(name=slug("t3", inp, shape),
                     title=f"ECC Table 3: time per image against batch size, {inp} {shape} read from files, "
                           "ours vs paper",
                     xlabel=_n_label("images in the batch", [r["count"] for r in rs]),
                     ylabel="time per image (ms), log scale", xlog=True, xlog_base=10,
                     ylog=True)
        gpu_o, gpu_p, read_o, read_p, dev, cpu = _Points(), _Points(), _Points(), _Points(), _Points(), _Points()
        am_o, am_p = _Points(), _Points()
        for r in rs:
            n, o, p = r["count"], r.get("ours") or {}, r.get("paper")
            gpu_o.put(n, o.get("gpu_overall_avg_ms"), why_gpu(r))
            read_o.put(n, o.get("gpu_disk_read_avg_ms"), why_gpu(r))
            dev.put(n, o.get("gpu_device_resident_avg_ms"), why_gpu(r))
            cpu.put(n, o.get("cpu_omp_avg_ms"), why_cpu(r))
            am_o.put(n, (r.get("ratios") or {}).get("amortisation_ours"), why_gpu(r))
            if isinstance(p, dict):
                gpu_p.put(n, p.get("gpu_overall_avg_ms"), "the paper's table has no value here")
                read_p.put(n, p.get("gpu_disk_read_avg_ms"), "the paper's table has no value here")
                am_p.put(n, (r.get("ratios") or {}).get("amortisation_paper"), "the paper's table has no value here")
            else:
                for b in (gpu_p, read_p, am_p):
                    b.missing.append(Missing(n, f"the paper has no row at N = {n}"))
        gpu_o.add_to(fig, "ours GPU overall")
        gpu_p.add_to(fig, f"paper GPU overall ({paper_gpu})", kind="paper")
        read_o.add_to(fig, "ours file read")
        read_p.add_to(fig, "paper file read", kind="paper")
        dev.add_to(fig, "ours GPU, batch already in GPU memory")
        cpu.add_to(fig, "ours CPU (read + omp)")
        paths = ordered_unique(r.get("gpu_path") for r in rs if r.get("gpu_path"))
        if paths:
            fig.notes.append(f"GPU path: {', '.join(paths)}; overall = set-up, file read, one upload, the ECC of "
                             "every image, every curve on the host")
        if ctx is not None:
            fig.notes.append(f"outside ours: the CUDA context's creation, {ctx:.1f} ms once a process")
        for r in rs:
            if r.get("verified") is False:
                fig.notes.append(f"N = {r['count']}: NOT verified ({r.get('verification', '')})")
        figs.append(fig)
        am_o.add_to(amort, f"ours, {inp} {shape}")
        am_p.add_to(amort, f"paper, {inp} {shape}", kind="paper")
    return figs + [amort]


# ---- the ablation ladder ----------------------------------------------------------------------

# Nsight Compute counters drawn for each step (percentages, one axis).
_COUNTERS = (("achieved_occupancy_pct", "achieved occupancy"),
             ("dram_throughput_pct_of_peak", "DRAM throughput, % of peak"),
             ("l2_throughput_pct_of_peak", "L2 throughput, % of peak"))


@table("ecc-ablation")
def ablation(report):
    rows = [r for r in report.get("rows") or []
            if isinstance(r, dict) and r.get("variant") and number(r.get("median_ms"))]
    if not rows:
        return []
    variants = ordered_unique(r["variant"] for r in rows)
    datasets = ordered_unique(r.get("dataset", "?") for r in rows)
    names = dataset_labels(datasets)
    time = Figure(name="ablation-time",
                  title="ECC optimisation ladder: median kernel time of each step, per input",
                  xlabel="variant (ladder order)", ylabel="median kernel time (ms), log scale", chart="bars",
                  ylog=True, categories=list(variants))
    speed = Figure(name="ablation-speedup",
                   title="ECC optimisation ladder: speedup of each step over the ladder's first, per input",
                   xlabel="variant (ladder order)", ylabel="speedup (x), log scale", chart="bars", ylog=True,
                   categories=list(variants))
    counter_figs = []
    for ds in datasets:
        by_v = {}
        for r in rows:
            if r.get("dataset", "?") == ds:
                by_v.setdefault(r["variant"], r)
        first = next(by_v[v] for v in variants if v in by_v)
        base = first.get("first_variant") or first["variant"]
        t, s = _Points(), _Points()
        for v in variants:
            r = by_v.get(v)
            if r is None:
                why = "no row of it on this input in the report"
                t.missing.append(Missing(v, why))
                s.missing.append(Missing(v, why))
                continue
            t.put(v, r["median_ms"], "no time")
            # The report's own gain (gain_over_first; gain_over_naive in older reports), else the ratio.
            gain = number(r.get("gain_over_first"))
            if gain is None:
                gain = number(r.get("gain_over_naive"))
            if gain is None:
                gain = number(first["median_ms"]) / number(r["median_ms"])
            s.put(v, gain, "no gain")
            if r.get("verified") is False:
                time.notes.append(f"{v} on {names[ds]}: NOT verified")
        t.add_to(time, names[ds])
        s.add_to(speed, f"{names[ds]} (vs {base})")
        with_ncu = {v: r["ncu"] for v, r in by_v.items() if isinstance(r.get("ncu"), dict)}
        if with_ncu:
            fig = Figure(name=slug("ablation-counters", names[ds] if len(datasets) > 1 else ""),
                         title=f"ECC optimisation ladder: Nsight Compute counters of each step on {names[ds]}",
                         xlabel="variant (ladder order)", ylabel="% (kernels weighted by duration)", chart="bars",
                         categories=[v for v in variants if v in by_v])
            for key, label in _COUNTERS:
                b = _Points(log=False)
                for v in fig.categories:
                    c = with_ncu.get(v)
                    b.put(v, (c or {}).get(key), "no Nsight Compute counters of this step in the report"
                          if c is None else f"no {key} in this step's counters")
                b.add_to(fig, label)
            stalls = [f"{v}: {with_ncu[v]['top_stall']}" for v in fig.categories
                      if v in with_ncu and with_ncu[v].get("top_stall")]
            if stalls:
                fig.notes.append("top stall: " + "; ".join(stalls))
            counter_figs.append(fig)
    steps = [next((r.get("step") for r in rows if r["variant"] == v and r.get("step")), "?") for v in variants]
    if any(s != "?" for s in steps):
        time.notes.append("the steps, in the variants' order: " + ", ".join(steps))
    return [time, speed] + counter_figs
