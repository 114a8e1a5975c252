"""Figures of the max-tree seminar's table (Blin, LRDE 2021) from `repix table maxtree-seminar`
reports (harness/papers/maxtree/seminar.cpp writes them):

- the seminar's figures beside ours, one bar chart a unit (speedup over the parallel CPU
  algorithm, throughput, frames per second; then its times, shares and ratios): ours (the report's
  `figures`, from our fastest GPU variant), the seminar's (kind "paper") and, where the report has
  its rows, Blin's own code on our GPU (the peer `peer:blin-maxtree`, kind "peer") computed the way
  the table computes ours;
- the step breakdown (the seminar's slide 20 as numbers): for each input, the kernel time of each
  GPU variant stacked by step (tile build, merges, flatten), Blin's code beside them as one bar (a
  peer's phases are not ours to time).
"""
from . import table
from ._bench_rows import dataset_labels, ordered_unique, slug
from ..core import Figure, Missing, number

_PEER = "peer:blin-maxtree"          # Blin's code, kernel scope
_PEER_E2E = "peer:blin-maxtree-e2e"  # the same, host image in and parent image out

# unit -> (figure name, what is compared, y label, log scale)
_UNITS = {
    "speedup": ("seminar-speedup", "max-tree GPU kernel over the parallel CPU algorithm (omp), 6000x4000",
                "speedup (x)", False),
    "MB/s": ("seminar-throughput", "max-tree throughput, 6000x4000 8-bit", "MB/s (1 byte a pixel), log scale", True),
    "fps": ("seminar-fps", "max-tree frames per second at 1920x1080, 8-bit", "frames per second, log scale", True),
    "ms": ("seminar-ms", "max-tree times, 6000x4000 8-bit, and the border max-tree's savings", "ms", False),
    "pct": ("seminar-percent", "max-tree shares, 6000x4000 8-bit", "%", False),
    "ratio": ("seminar-ratio", "border max-tree: border pixels over border tree nodes", "ratio", False),
}

_QUANTITY = {
    "gpu_vs_parallel_cpu_speedup": "kernel vs omp",
    "kernel_throughput": "kernel",
    "end_to_end_throughput": "end to end",
    "kernel_fps_1920x1080": "kernel",
    "end_to_end_fps_1920x1080": "end to end",
    "kernel_ms_6000x4000": "kernel",
    "end_to_end_ms": "end to end",
    "copies_share_of_end_to_end": "copies' share of end to end",
    "border_extraction_space_saving": "border extraction: space",
    "border_size_reduction": "border size reduction",
    "border_horizontal_merge_saving": "border: merge saving",
    "border_extra_steps_cost": "border: extra steps",
}

# The CUDA-event phases every GPU variant of ours reports, in the algorithm's order.
_STEPS = (("build_ms", "tile build"), ("merge_ms", "merges (horizontal + vertical)"), ("flatten_ms", "flatten"))


def _params(spec):
    parts = str(spec or "").split(":")
    return parts[0], (parts[1] if len(parts) > 1 else ""), dict(p.split("=", 1) for p in parts[2:] if "=" in p)


def _seminar_input(row, shape):
    """The input standing for the seminar's: a natural (texture) 8-bit image, 4-connectivity."""
    kind, s, params = _params(row.get("dataset"))
    return (kind == "texture" and s == shape and params.get("dtype", "uint8") == "uint8"
            and row.get("connectivity", 4) == 4)


def _rows(report):
    return [r for r in report.get("variants") or [] if isinstance(r, dict) and r.get("variant")]


def _find(rows, variant, shape):
    return next((r for r in rows if r["variant"] == variant and _seminar_input(r, shape)), None)


def _peer_value(q, rows):
    """Blin's code's value of seminar quantity `q`, computed from its rows as the table computes
    ours: (value, why not). (None, None) where the quantity is not one a peer has."""
    big_k, big_e = _find(rows, _PEER, "6000x4000"), _find(rows, _PEER_E2E, "6000x4000")
    frame_k, frame_e = _find(rows, _PEER, "1920x1080"), _find(rows, _PEER_E2E, "1920x1080")
    how = {  # quantity -> (row, value from it, what is needed)
        "gpu_vs_parallel_cpu_speedup": (big_k, lambda r: number(r.get("speedup_over_omp")), f"{_PEER} 6000x4000"),
        "kernel_throughput": (big_k, lambda r: _times(number(r.get("gpx_per_s")), 1000), f"{_PEER} 6000x4000"),
        "kernel_ms_6000x4000": (big_k, lambda r: number(r.get("kernel_ms")), f"{_PEER} 6000x4000"),
        "kernel_fps_1920x1080": (frame_k, lambda r: _per_second(number(r.get("kernel_ms"))), f"{_PEER} 1920x1080"),
        "end_to_end_ms": (big_e, lambda r: number(r.get("end_to_end_ms")), f"{_PEER_E2E} 6000x4000"),
        "end_to_end_throughput": (big_e, lambda r: _times(number(r.get("gpx_per_s")), 1000),
                                  f"{_PEER_E2E} 6000x4000"),
        "end_to_end_fps_1920x1080": (frame_e, lambda r: _per_second(number(r.get("end_to_end_ms"))),
                                     f"{_PEER_E2E} 1920x1080"),
    }
    if q not in how:
        return None, None
    row, value, needed = how[q]
    if not any(r["variant"] in (_PEER, _PEER_E2E) for r in rows):
        return None, "no row of Blin's code in the report (the bench reports it was built from have none)"
    if row is None:
        return None, f"no {needed} row (8-bit natural image, 4-conn.) in the report"
    v = value(row)
    return (v, None) if v is not None else (None, f"{needed}: no time in the report")


def _times(v, k):
    return None if v is None else v * k


def _per_second(ms):
    return None if ms is None or ms <= 0 else 1000.0 / ms


def _best_gpu(rows):
    """Our GPU variant the seminar's figures are compared with, chosen as the table chooses it:
    the fastest kernel on the seminar's 6000x4000 input, a peer never."""
    best = None
    for r in rows:
        ms = number(r.get("kernel_ms"))
        if ms is not None and not r["variant"].startswith("peer:") and _seminar_input(r, "6000x4000"):
            if best is None or ms < best[1]:
                best = (r["variant"], ms)
    return best[0] if best else ""


def _hardware_gpu(report):
    hw = (report.get("paper") or {}).get("hardware") or {}
    return str(hw.get("gpu") or "").split(" (")[0] if isinstance(hw, dict) else ""


def _headline(report, rows):
    figures = [f for f in report.get("figures") or [] if isinstance(f, dict) and f.get("quantity")]
    best = _best_gpu(rows)
    gpu = _hardware_gpu(report)
    figs = {}
    unplotted = {}
    for f in figures:
        q, unit = str(f["quantity"]), str(f.get("unit") or "")
        ours, seminar = number(f.get("ours")), number(f.get("seminar"))
        if ours is None and seminar is None:
            unplotted.setdefault(unit, []).append(q)  # a bar chart on the slides, ours elsewhere
            continue
        if unit not in figs:
            name, what, ylabel, log = _UNITS.get(unit, (slug("seminar", unit), f"seminar figures in {unit}", unit,
                                                        False))
            figs[unit] = (Figure(name=name, title=f"{what[0].upper()}{what[1:]}: ours vs Blin's seminar",
                                 xlabel="", ylabel=ylabel, chart="bars", ylog=log, categories=[]),
                          [], [], [])
        fig, o, s, p = figs[unit]
        cat = _QUANTITY.get(q, q.replace("_", " "))
        if cat in fig.categories:
            cat = f"{cat} ({q})"
        fig.categories.append(cat)
        # On a log axis a value that is not positive cannot be drawn: said, with the number.
        o.append((cat, ours, str(f.get("ours_from") or "no number of ours in the report")))
        s.append((cat, seminar, "no number in the seminar"))
        p.append((cat,) + _peer_value(q, rows))
    out = []
    for unit, (fig, o, s, p) in figs.items():
        # Both of our GPU's bars first, then the seminar's.
        series = ((f"ours ({best})" if best else "ours", "ours", o),
                  ("Blin's code on our GPU (peer)", "peer", p),
                  (f"Blin's seminar ({gpu})" if gpu else "Blin's seminar", "paper", s))
        for label, kind, points in series:
            xs, ys, missing = [], [], []
            for cat, v, why in points:
                if v is not None and not (fig.ylog and v <= 0):
                    xs.append(cat)
                    ys.append(v)
                elif v is not None:
                    missing.append(Missing(cat, f"{v:g} cannot be drawn on a log axis"))
                elif why:
                    missing.append(Missing(cat, why))
            if xs or missing:
                # A bar series with no bar would still get a legend patch: its label says so.
                fig.add(label + ("" if xs else ": not measured"), xs, ys, kind=kind, missing=missing)
        if unit in unplotted:
            fig.notes.append(f"not drawn, a number on neither side: {', '.join(unplotted.pop(unit))} (bar charts "
                             "in the seminar; ours in the steps figures and the table)")
        fig.xlabel = ("seminar figure, 1920x1080" if unit == "fps" else "seminar figure, 6000x4000 8-bit image, "
                      "4-connectivity")
        fig.notes.append("the seminar: one natural 6000x4000 8-bit image (not named); ours: the camera texture "
                         "at those sizes")
        out.append(fig)
    if out and unplotted:
        out[0].notes.append("not drawn, a number on neither side: "
                            + ", ".join(q for qs in unplotted.values() for q in qs))
    return out


def _steps(report, rows):
    inputs = ordered_unique((r.get("dataset", "?"), r.get("connectivity", 4)) for r in rows)
    names = dataset_labels(ordered_unique(str(ds) for ds, _ in inputs))  # short, whole where two would meet
    figs = []
    for ds, conn in inputs:
        rs = [r for r in rows if (r.get("dataset", "?"), r.get("connectivity", 4)) == (ds, conn)]
        # The kernel-scope variants: ours on the GPU, and Blin's code. The CPU variants have no kernel
        # scope (host clock, end to end) and are a hundred times longer: in the table, not here.
        gpu = [r for r in rs if number(r.get("kernel_ms")) is not None and not r["variant"].startswith("peer:")]
        peer = next((r for r in rs if r["variant"] == _PEER and number(r.get("kernel_ms")) is not None), None)
        seminar_input = bool(rs) and (_seminar_input(rs[0], "6000x4000") or _seminar_input(rs[0], "1920x1080"))
        if not gpu and not peer:
            continue
        label = f"{names[str(ds)]}, {conn}-conn."
        peer_cat = _PEER
        cats = [r["variant"] for r in gpu] + ([peer_cat] if peer or seminar_input else [])
        fig = Figure(name=slug("steps", names[str(ds)], f"{conn}conn"),
                     title=f"Max-tree kernel time by step, {label}: ours"
                           + (" and Blin's code" if peer_cat in cats else ""),
                     xlabel="variant", ylabel="kernel time (ms)", chart="stacked", categories=cats)
        for key, step in _STEPS:
            xs, ys, missing = [], [], []
            for r in gpu:
                v = number(r.get(key))
                if v is None:
                    missing.append(Missing(r["variant"], f"no {step} time of it in the report"))
                else:
                    xs.append(r["variant"])
                    ys.append(v)
            if peer:
                missing.append(Missing(peer_cat, "Blin's code has no step times (its phases are not ours to time)"))
            fig.add(step, xs, ys, missing=missing)
        if peer:
            fig.add("Blin's code, whole kernel", [peer_cat], [number(peer["kernel_ms"])], kind="peer")
        elif seminar_input:
            why = ("no row of Blin's code in the report (the bench reports it was built from have none)"
                   if not any(r["variant"].startswith(_PEER) for r in rows) else f"no {_PEER} row on this input")
            fig.add("Blin's code, whole kernel", [], [], kind="peer", missing=[Missing(peer_cat, why)])
        fig.notes.append("steps: CUDA-event phase times of the last timed run (their sum is near the median kernel "
                         "time); the seminar's slide 20 has no numbers")
        cpu = [r["variant"] for r in rs if number(r.get("kernel_ms")) is None and not r["variant"].startswith("peer:")]
        if cpu:
            fig.notes.append(f"not drawn: the CPU variants ({', '.join(cpu)}), end to end only, in the table")
        bad = [r["variant"] for r in gpu if r.get("verified") is False]
        if bad:
            fig.notes.append(f"NOT verified: {', '.join(bad)}")
        figs.append(fig)
    return figs


@table("maxtree-seminar")
def seminar(report):
    rows = _rows(report)
    return _headline(report, rows) + _steps(report, rows)
