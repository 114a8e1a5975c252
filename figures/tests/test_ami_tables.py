"""The figures of the AMI thesis's tables (ami-5.1 ... ami-5.8), drawn from reports trimmed from
committed ones (tests/fixtures/ami/): every plotted point checked against the report's numbers,
ours and the thesis's, and every cell that did not run checked to be a `missing` entry with the
report's reason, never a zero."""
import html
import json
import os
import re
import tempfile
import unittest

from repix_figures import figures_of
from repix_figures.core import render

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "ami")

# The reasons the harness writes for a cell it did not run (harness/papers/ami/grid.cpp).
ABOVE_1024 = "skipped: not run above 1024^2 (minutes per image; see above)"
ABOVE_2048 = "skipped: not run above 2048^2 (minutes per image; see above)"
ABOVE_4096 = "skipped: not run above 4096^2 (minutes per image; see above)"
ONE_GPU = "skipped: 1 GPU visible, 2 needed"
NOT_IN_JOURNAL = "missing: not in the journal (the run stopped before this measurement)"


def load(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return json.load(f)


def by_name(figs):
    return {f.name: f for f in figs}


def series(fig, label):
    found = [s for s in fig.series if s.label == label]
    if len(found) != 1:
        raise AssertionError(f"{fig.name}: {len(found)} series labelled {label!r} in {[s.label for s in fig.series]}")
    return found[0]


def column(rep, heading):
    return [c["heading"] for c in rep["columns"]].index(heading)


def times(rep, heading, key="seconds"):
    """(sizes, values) of one column where the value is there, in row order."""
    c = column(rep, heading)
    pts = [(r["size"], r["cells"][c][key]) for r in rep["rows"] if r["cells"][c][key] is not None]
    return [p[0] for p in pts], [p[1] for p in pts]


def ratios(rep, heading, key):
    pts = [(r["label"], q[key]) for r in rep["rows"] for q in r["ratios"] if q["ratio"] == heading and q[key] is not None]
    return [p[0] for p in pts], [p[1] for p in pts]


def missing(s):
    return [(m.x, m.why) for m in s.missing]


def svg_text(path):
    """The SVG's text, its wrapped lines joined again (the renderer wraps a long footer line at a
    space, into several text elements)."""
    with open(path) as f:
        return " ".join(html.unescape(t) for t in re.findall(r">([^<]*)</text>", f.read()))


class Points(unittest.TestCase):
    def assertLine(self, s, rep, heading, key="seconds", kind="ours"):
        self.assertEqual(s.kind, kind)
        self.assertEqual((s.x, s.y), times(rep, heading, key))


class T51(Points):
    def test_seq_and_omp_against_size_with_the_thesis_extrapolation_apart(self):
        rep = load("ami-5.1.json")
        f = by_name(figures_of(rep))
        self.assertEqual(list(f), ["time", "speedup"])
        t = f["time"]
        self.assertTrue(t.xlog and t.ylog)
        self.assertLine(series(t, "seq"), rep, "seq (s)")
        self.assertEqual(missing(series(t, "seq")), [(2048, ABOVE_1024)])
        self.assertLine(series(t, "omp"), rep, "omp (s)")
        self.assertEqual(series(t, "omp").x, [128, 1024, 2048])
        measured, guessed = [s for s in t.series if s.label == "thesis sequential"]
        self.assertEqual((measured.kind, measured.x, measured.y), ("paper", [128, 1024], [3.2519, 179.1006]))
        self.assertEqual((guessed.kind, guessed.x, guessed.y), ("paper", [2048], [11118.7916]))
        self.assertIn("extrapolated", guessed.note)
        self.assertLine(series(t, "thesis OpenMP"), rep, "omp (s)", "paper_seconds", "paper")

    def test_speedup_bars_ours_beside_the_thesis(self):
        rep = load("ami-5.1.json")
        s = by_name(figures_of(rep))["speedup"]
        self.assertEqual((s.chart, s.categories), ("bars", ["128^2", "1024^2", "2048^2"]))
        ours = series(s, "omp over seq")
        self.assertEqual((ours.x, ours.y), ratios(rep, "omp speedup", "ours"))
        self.assertEqual(missing(ours), [("2048^2", "seq: " + ABOVE_1024)])
        thesis = series(s, "thesis OpenMP over sequential")
        self.assertEqual((thesis.kind, thesis.x, thesis.y), ("paper",) + ratios(rep, "omp speedup", "paper"))
        self.assertTrue(any("2048^2" in n and "extrapolated" in n for n in s.notes))


class T52(Points):
    def test_kernels_and_totals_their_share_and_gpu_opt_over_gpu_naive(self):
        rep = load("ami-5.2.json")
        f = by_name(figures_of(rep))
        self.assertEqual(list(f), ["time", "kernel-share", "speedup"])
        t = f["time"]
        for h, label in (("gpu-naive kernels (s)", "gpu-naive kernels"), ("gpu-naive total (s)", "gpu-naive total"),
                         ("gpu-opt kernels (s)", "gpu-opt kernels"), ("gpu-opt total (s)", "gpu-opt total")):
            self.assertLine(series(t, label), rep, h)
        self.assertEqual(missing(series(t, "gpu-naive kernels")), [(8192, ABOVE_2048)])
        self.assertEqual(missing(series(t, "gpu-naive total")), [(8192, ABOVE_2048)])
        self.assertLine(series(t, "thesis MI kernel"), rep, "gpu-naive kernels (s)", "paper_seconds", "paper")
        self.assertLine(series(t, "thesis total"), rep, "gpu-naive total (s)", "paper_seconds", "paper")
        self.assertEqual(series(t, "thesis MI kernel").y[-1], 811.2414375)  # the thesis's ms, in seconds
        self.assertEqual(len([s for s in t.series if s.kind == "paper"]), 2)  # gpu-opt: no thesis column

        share = f["kernel-share"]
        r = rep["rows"]
        naive = series(share, "gpu-naive")
        self.assertEqual(naive.x, ["128^2", "2048^2"])
        self.assertEqual(naive.y, [r[i]["cells"][0]["seconds"] / r[i]["cells"][1]["seconds"] for i in (0, 1)])
        self.assertEqual(missing(naive), [("8192^2", "gpu-naive kernels and gpu-naive total: " + ABOVE_2048)])
        opt = series(share, "gpu-opt")
        self.assertEqual(opt.y, [x["cells"][2]["seconds"] / x["cells"][3]["seconds"] for x in r])
        thesis = series(share, "thesis MI kernel / total")
        self.assertEqual(thesis.y, [x["cells"][0]["paper_seconds"] / x["cells"][1]["paper_seconds"] for x in r])

        sp = series(f["speedup"], "gpu-opt over gpu-naive")
        self.assertEqual((sp.x, sp.y), ratios(rep, "total / gpu-opt total", "ours"))
        self.assertEqual(missing(sp), [("8192^2", "gpu-naive total: " + ABOVE_2048)])
        self.assertFalse([s for s in f["speedup"].series if s.kind == "paper"])


class T53(Points):
    def test_omp_against_the_gpu_and_the_speedups(self):
        rep = load("ami-5.3.json")
        f = by_name(figures_of(rep))
        self.assertEqual(list(f), ["time", "speedup"])
        t = f["time"]
        self.assertLine(series(t, "omp"), rep, "omp (s)")
        self.assertEqual(missing(series(t, "omp")), [(8192, ABOVE_4096)])
        self.assertLine(series(t, "gpu-naive"), rep, "gpu-naive (s)")
        self.assertEqual(missing(series(t, "gpu-naive")), [(8192, ABOVE_2048)])
        self.assertLine(series(t, "gpu-opt"), rep, "gpu-opt (s)")
        self.assertLine(series(t, "thesis OpenMP"), rep, "omp (s)", "paper_seconds", "paper")
        self.assertLine(series(t, "thesis CUDA"), rep, "gpu-naive (s)", "paper_seconds", "paper")

        s = f["speedup"]
        self.assertTrue(s.ylog)
        naive = series(s, "gpu-naive over omp")
        self.assertEqual((naive.x, naive.y), ratios(rep, "CUDA speedup over omp", "ours"))
        self.assertEqual(missing(naive), [("8192^2", f"omp: {ABOVE_4096}; gpu-naive: {ABOVE_2048}")])
        thesis = series(s, "thesis CUDA over OpenMP")
        self.assertEqual((thesis.x, thesis.y), ratios(rep, "CUDA speedup over omp", "paper"))
        self.assertEqual(thesis.y[0], 0.12512930462371646)  # the thesis's GPU lost at 128^2
        opt = series(s, "gpu-opt over omp")
        self.assertEqual((opt.x, opt.y), ratios(rep, "gpu-opt over omp", "ours"))
        self.assertEqual(missing(opt), [("8192^2", "omp: " + ABOVE_4096)])
        even = series(s, "break-even")
        self.assertEqual((even.kind, even.y), ("bound", [1.0, 1.0, 1.0]))

    def test_a_run_on_sizes_the_thesis_has_not_draws_ours_alone(self):
        rep = load("ami-5.3.json")
        for r in rep["rows"]:  # what `--sizes small` writes: no thesis row, no thesis values
            r["paper"] = None
            for c in r["cells"]:
                c["paper_seconds"] = None
            for q in r["ratios"]:
                q["paper"] = None
        for fig in figures_of(rep):
            self.assertFalse([s for s in fig.series if s.kind == "paper"], fig.name)
            self.assertFalse([n for n in fig.notes if n.startswith("thesis:")], fig.name)


class T54(Points):
    def test_one_time_and_one_speedup_figure_per_window(self):
        rep = load("ami-5.4.json")
        f = by_name(figures_of(rep))
        self.assertEqual(list(f), ["time-r8", "speedup-r8", "time-r32", "speedup-r32"])
        for w in ("r8", "r32"):
            t = f[f"time-{w}"]
            for v in ("omp", "gpu-naive", "gpu-opt"):
                self.assertLine(series(t, v), rep, f"{w} {v} (s)")
            self.assertLine(series(t, "thesis OpenMP"), rep, f"{w} omp (s)", "paper_seconds", "paper")
            self.assertLine(series(t, "thesis CUDA"), rep, f"{w} gpu-naive (s)", "paper_seconds", "paper")
            s = f[f"speedup-{w}"]
            ours = series(s, "gpu-naive over omp")
            self.assertEqual((ours.x, ours.y), ratios(rep, f"{w} CUDA over omp", "ours"))
            thesis = series(s, "thesis CUDA over OpenMP")
            self.assertEqual((thesis.x, thesis.y), ratios(rep, f"{w} CUDA over omp", "paper"))
        t32 = f["time-r32"]
        self.assertEqual(missing(series(t32, "omp")), [(2048, ABOVE_1024), (8192, ABOVE_1024)])
        self.assertEqual(missing(series(t32, "gpu-naive")), [(8192, ABOVE_2048)])
        self.assertEqual(missing(series(f["time-r8"], "omp")), [(8192, ABOVE_4096)])
        self.assertEqual(missing(series(f["speedup-r32"], "gpu-naive over omp")),
                         [("2048^2", "r32 omp: " + ABOVE_1024),
                          ("8192^2", f"r32 omp: {ABOVE_1024}; r32 gpu-naive: {ABOVE_2048}")])
        self.assertIn("r = 32", t32.title)


class T55(Points):
    def test_each_block_over_the_fastest_at_each_size(self):
        rep = load("ami-5.5.json")
        f = by_name(figures_of(rep))
        self.assertEqual(list(f), ["blocks-128", "blocks-1024"])
        for n, fig in ((128, f["blocks-128"]), (1024, f["blocks-1024"])):
            rows = [r for r in rep["rows"] if r["size"] == n]
            cats = [f"{b} x {b}" for b in (2, 4, 8, 16, 32)]
            self.assertEqual((fig.chart, fig.categories), ("bars", cats))
            ours_s = [r["cells"][0]["seconds"] for r in rows]
            thesis_s = [r["cells"][0]["paper_seconds"] for r in rows]
            ours, thesis = fig.series
            self.assertEqual((ours.kind, ours.x, ours.y), ("ours", cats, [s / min(ours_s) for s in ours_s]))
            self.assertEqual((thesis.kind, thesis.x, thesis.y), ("paper", cats, [s / min(thesis_s) for s in thesis_s]))
        self.assertEqual(series(f["blocks-1024"], "thesis CUDA (fastest: 8 x 8, 12.4 s)").y[1], 170.323756 / 12.361647)

    def test_a_block_not_measured_is_missing_and_not_the_fastest(self):
        rep = load("ami-5.5.json")
        cell = next(r for r in rep["rows"] if r["label"] == "8 x 8, 128^2")["cells"][0]
        cell.update(seconds=None, median_ms=0.0, verified=False, not_run=NOT_IN_JOURNAL)
        ours = by_name(figures_of(rep))["blocks-128"].series[0]
        self.assertEqual(ours.x, ["2 x 2", "4 x 4", "16 x 16", "32 x 32"])
        self.assertEqual(missing(ours), [("8 x 8", NOT_IN_JOURNAL)])
        ran = [r["cells"][0]["seconds"] for r in rep["rows"] if r["size"] == 128 and r["cells"][0]["seconds"] is not None]
        self.assertEqual(ours.y, [s / min(ran) for s in ran])
        self.assertTrue(ours.label.startswith("ours (fastest: 4 x 4, 232 µs"), ours.label)


class T56(Points):
    def test_kernels_and_totals_per_block_size_at_each_size(self):
        rep = load("ami-5.6.json")
        f = by_name(figures_of(rep))
        self.assertEqual(list(f), ["kernels-1024", "total-1024", "kernels-2048", "total-2048"])
        cats = ["2", "4", "8", "256"]
        for c, name in enumerate(f):
            ours_s = [r["cells"][c]["seconds"] for r in rep["rows"]]
            thesis_s = [r["cells"][c]["paper_seconds"] for r in rep["rows"]]
            ours, thesis = f[name].series
            self.assertEqual((ours.x, ours.y), (cats, [s / min(ours_s) for s in ours_s]))
            self.assertEqual((thesis.kind, thesis.x, thesis.y), ("paper", cats, [s / min(thesis_s) for s in thesis_s]))
        self.assertTrue(f["kernels-1024"].series[1].label.startswith("thesis kernel (fastest: 4 threads,"))
        self.assertTrue(f["total-2048"].series[1].label.startswith("thesis total (fastest: 4 threads,"))

    def test_a_block_not_measured_is_missing(self):
        rep = load("ami-5.6.json")
        rep["rows"][3]["cells"][2].update(seconds=None, verified=False, not_run=NOT_IN_JOURNAL)
        ours = by_name(figures_of(rep))["kernels-2048"].series[0]
        self.assertEqual((ours.x, missing(ours)), (["2", "4", "8"], [("256", NOT_IN_JOURNAL)]))


class T57(Points):
    def test_the_lag_sum_beside_the_stage_and_its_share(self):
        rep = load("ami-5.7.json")
        f = by_name(figures_of(rep))
        self.assertEqual(list(f), ["time", "share"])
        t = f["time"]
        self.assertLine(series(t, "lag sum"), rep, "lag sum (s)")
        self.assertLine(series(t, "gpu-naive total"), rep, "gpu-naive total (s)")
        self.assertEqual(missing(series(t, "gpu-naive total")), [(4096, ABOVE_2048)])
        self.assertLine(series(t, "thesis reduction kernel, 128 threads"), rep, "lag sum (s)", "paper_seconds", "paper")
        k256 = series(t, "thesis reduction kernel, 256 threads")  # blank in the thesis at 128^2
        self.assertEqual((k256.x, k256.y), ([256, 4096], [r["paper"]["k256_ms"] * 1e-3 for r in rep["rows"][1:]]))
        self.assertIsNone(rep["rows"][0]["paper"]["k256_ms"])
        self.assertLine(series(t, "thesis total, sequential sum"), rep, "gpu-naive total (s)", "paper_seconds", "paper")

        share = f["share"]
        r = rep["rows"]
        ours = series(share, "host lag sum / gpu-naive total")
        self.assertEqual(ours.y, [r[i]["cells"][0]["seconds"] / r[i]["cells"][1]["seconds"] for i in (0, 1)])
        self.assertEqual(missing(ours), [("4096^2", "gpu-naive total: " + ABOVE_2048)])
        thesis = series(share, "thesis 128-thread kernel / its total")
        self.assertEqual(thesis.y, [x["cells"][0]["paper_seconds"] / x["paper"]["t128_s"] for x in r])


class T58(Points):
    def test_two_gpus_measured(self):
        rep = load("ami-5.8.2gpu.json")
        f = by_name(figures_of(rep))
        self.assertEqual(list(f), ["time", "speedup", "efficiency"])
        t = f["time"]
        self.assertLine(series(t, "1 GPU"), rep, "1 GPU (s)")
        self.assertLine(series(t, "2 GPUs"), rep, "2 GPUs (s)")
        self.assertLine(series(t, "thesis 1 card"), rep, "1 GPU (s)", "paper_seconds", "paper")
        self.assertLine(series(t, "thesis 2 cards"), rep, "2 GPUs (s)", "paper_seconds", "paper")
        three = series(t, "thesis 3 cards")
        self.assertEqual((three.kind, three.y), ("paper", [r["paper"]["gpu3_s"] for r in rep["rows"]]))
        sp = series(f["speedup"], "2 GPUs over 1")
        self.assertEqual((sp.x, sp.y), ratios(rep, "speedup, 2 GPUs", "ours"))
        self.assertEqual(series(f["speedup"], "thesis 2 cards over 1").y, ratios(rep, "speedup, 2 GPUs", "paper")[1])
        self.assertEqual(series(f["speedup"], "ideal").y, [2.0] * 3)
        eff = series(f["efficiency"], "2 GPUs")
        self.assertEqual(eff.y, [v * 0.5 for v in ratios(rep, "speedup, 2 GPUs", "ours")[1]])
        self.assertEqual(series(f["efficiency"], "thesis 2 cards").y,
                         [v * 0.5 for v in ratios(rep, "speedup, 2 GPUs", "paper")[1]])

    def test_a_one_gpu_machine_says_so_for_every_2_gpu_point(self):
        rep = load("ami-5.8.1gpu.json")
        f = by_name(figures_of(rep))
        two = series(f["time"], "2 GPUs")
        self.assertEqual((two.x, two.y, missing(two)), ([], [], [(128, ONE_GPU), (8192, ONE_GPU)]))
        self.assertLine(series(f["time"], "1 GPU"), rep, "1 GPU (s)")
        for name, label in (("speedup", "2 GPUs over 1"), ("efficiency", "2 GPUs")):
            s = series(f[name], label)
            self.assertEqual((s.y, missing(s)), ([], [("128^2", "2 GPUs: " + ONE_GPU), ("8192^2", "2 GPUs: " + ONE_GPU)]))
        self.assertEqual(series(f["speedup"], "thesis 2 cards over 1").y, [2.755232495, 1.510654754])


class Notes(unittest.TestCase):
    def test_a_cell_not_verified_is_drawn_and_said(self):
        rep = load("ami-5.1.json")
        rep["rows"][0]["cells"][1]["verified"] = False
        f = by_name(figures_of(rep))
        self.assertIn(rep["rows"][0]["cells"][1]["seconds"], series(f["time"], "omp").y)
        self.assertTrue([n for n in f["time"].notes if n.startswith("omp at 128^2: drawn, but")])
        self.assertFalse([n for n in f["speedup"].notes if "not verified" in n])

    def test_the_thesis_hardware_is_named_beside_its_points(self):
        f = by_name(figures_of(load("ami-5.3.json")))
        self.assertIn("thesis: NVIDIA Tesla C2070", f["time"].notes[0])


class Render(unittest.TestCase):
    FILES = ["ami-5.1.json", "ami-5.2.json", "ami-5.3.json", "ami-5.4.json", "ami-5.5.json", "ami-5.6.json",
             "ami-5.7.json", "ami-5.8.1gpu.json", "ami-5.8.2gpu.json"]

    def test_every_figure_renders_and_says_what_was_not_measured(self):
        out = tempfile.mkdtemp(prefix="repix-fig-ami-")
        for name in self.FILES:
            stem = name[:-5]
            for fig in figures_of(load(name)):
                paths = render(fig, out, stem)
                self.assertEqual(len(paths), 3, fig.name)
                for p in paths:
                    self.assertGreater(os.path.getsize(p), 100, p)
                svg = svg_text(paths[0])
                for s in fig.series:
                    for m in s.missing:
                        self.assertIn(f"not measured ({m.why})", svg, f"{stem}.{fig.name}")
                with open(paths[2]) as f:
                    pts = json.load(f)
                self.assertEqual([p["y"] for p in pts["series"]], [s.y for s in fig.series])
        none_of_ours = svg_text(os.path.join(out, "ami-5.8.1gpu.speedup.svg"))
        self.assertIn("nothing of ours was measured for this figure", none_of_ours)


if __name__ == "__main__":
    unittest.main()
