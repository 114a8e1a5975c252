"""Scaling from bench reports: where the same variant ran on the same input with several GPU or
thread counts (its `options.gpus` / `options.threads`), time and parallel efficiency against the
count. Efficiency is T(1) / (n T(n)); without a 1-count row it is not drawn (said on the figure)."""
from . import bench
from ._bench_rows import dataset_labels, grouped, slug
from ..core import Figure, Missing


KNOBS = (("gpus", "GPUs"), ("threads", "CPU threads"))


@bench
def scaling(report):
    figs = []
    groups = grouped(report, lambda r: (r.get("family"), r.get("variant"), r.get("scope")))
    for (family, variant, scope), rows in groups.items():
        for knob, noun in KNOBS:
            counts = {}
            for r in rows:
                n = (r.get("options") or {}).get(knob)
                if isinstance(n, int) and not isinstance(n, bool) and n > 0:
                    counts.setdefault(r["dataset"], {}).setdefault(n, float(r["median_ms"]))
            if not any(len(c) >= 2 for c in counts.values()):
                continue
            time = Figure(name=slug("scaling", family, variant, scope, knob, "time"),
                          title=f"{family}/{variant}: time against {noun}, {scope} scope",
                          xlabel=noun, ylabel="median time (ms)", ylog=True)
            eff = Figure(name=slug("scaling", family, variant, scope, knob, "efficiency"),
                         title=f"{family}/{variant}: parallel efficiency T(1) / (n T(n)), {scope} scope",
                         xlabel=noun, ylabel="efficiency")
            names = dataset_labels(list(counts))
            for ds, c in counts.items():
                if len(c) < 2:
                    continue
                ns = sorted(c)
                time.add(names[ds], ns, [c[n] for n in ns])
                if 1 in c:
                    eff.add(names[ds], ns, [c[1] / (n * c[n]) for n in ns])
                else:
                    eff.add(names[ds], [], [], missing=[Missing(1, f"no 1-{knob[:-1]} row in the report")])
            figs += [time, eff]
    return figs
