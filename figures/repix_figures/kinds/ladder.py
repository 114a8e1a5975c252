"""Ablation ladders from bench reports: each family's variants in ladder order (the report's row
order), the median time of each on each input (log scale) and the speedup over the ladder's first
step on that input. Peers (`peer:<id>`) are marked in the axis labels."""
from . import bench
from ._bench_rows import dataset_labels, grouped, ordered_unique, slug
from ..core import Figure, Missing


def _label(v):
    return v + " (peer)" if v.startswith("peer:") else v


@bench
def ladders(report):
    figs = []
    for (family, scope), rows in grouped(report, lambda r: (r.get("family"), r.get("scope"))).items():
        variants = ordered_unique(r["variant"] for r in rows)
        if len(variants) < 2:
            continue  # one variant: no ladder
        datasets = ordered_unique(r["dataset"] for r in rows)
        names = dataset_labels(datasets)
        cats = [_label(v) for v in variants]
        time = Figure(name=slug("ladder", family, scope, "time"),
                      title=f"{family}: median time per variant, {scope} scope",
                      xlabel="variant (ladder order)", ylabel="median time (ms)", chart="bars", ylog=True,
                      categories=cats)
        speed = Figure(name=slug("ladder", family, scope, "speedup"),
                       title=f"{family}: speedup over the first step on each input, {scope} scope",
                       xlabel="variant (ladder order)", ylabel="speedup (x)", chart="bars", ylog=True,
                       categories=cats)
        for ds in datasets:
            by_variant = {}
            for r in rows:
                if r["dataset"] == ds:
                    by_variant.setdefault(r["variant"], r)  # the first row of a (variant, input)
            first = next((by_variant[v] for v in variants if v in by_variant), None)
            xs, ts, ss, missing = [], [], [], []
            for v in variants:
                if v in by_variant:
                    xs.append(_label(v))
                    ts.append(float(by_variant[v]["median_ms"]))
                    ss.append(float(first["median_ms"]) / float(by_variant[v]["median_ms"]))
                else:
                    missing.append(Missing(_label(v), "no row of it on this input in the report"))
            time.add(names[ds], xs, ts, missing=list(missing))
            speed.add(f"{names[ds]} (vs {first['variant']})", xs, ss, missing=list(missing))
        figs += [time, speed]
    return figs
