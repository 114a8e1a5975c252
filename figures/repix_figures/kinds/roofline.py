"""Roofline from bench reports: each row's achieved throughput as a fraction of its measured
bound (the report's `pct_of_bound` against `bound`: DRAM read, pinned H2D, ...), per family and
scope; the bound is the line at 1."""
from . import bench
from ._bench_rows import dataset_labels, grouped, ordered_unique, slug
from ..core import Figure, Missing, number


@bench
def roofline(report):
    figs = []
    rows_with_bound = lambda r: (r.get("family"), r.get("scope"))
    for (family, scope), rows in grouped(report, rows_with_bound).items():
        bounded = [r for r in rows if number(r.get("pct_of_bound")) is not None and r.get("bound")]
        if not bounded:
            continue
        variants = ordered_unique(r["variant"] for r in bounded)
        bounds = ordered_unique(r["bound"] for r in bounded)
        fig = Figure(name=slug("roofline", family, scope),
                     title=f"{family}: throughput as a fraction of the {', '.join(bounds)} bound, {scope} scope",
                     xlabel="variant", ylabel="fraction of the bound", chart="bars", categories=variants)
        datasets = ordered_unique(r["dataset"] for r in bounded)
        names = dataset_labels(datasets)
        for ds in datasets:
            got = {}
            for r in bounded:
                if r["dataset"] == ds:
                    got.setdefault(r["variant"], number(r["pct_of_bound"]) / 100.0)
            xs = [v for v in variants if v in got]
            missing = [Missing(v, "no bounded row of it on this input") for v in variants if v not in got]
            fig.add(names[ds], xs, [got[v] for v in xs], missing=missing)
        fig.add("bound", list(variants), [1.0] * len(variants), kind="bound")
        bound_info = {b.get("name"): b for b in report.get("bounds") or [] if isinstance(b, dict)}
        for b in bounds:
            info = bound_info.get(b)
            if info:
                fig.notes.append(f"{b}: {info.get('value', 0):.1f} {info.get('unit', '')} ({info.get('how', '')})")
        figs.append(fig)
    return figs
