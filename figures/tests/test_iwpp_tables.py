"""The IWPP paper's table figures, checked on the points they draw against the reports' numbers
(ours and the paper's), with cells that did not run said in `missing`, never drawn.

The fixtures (fixtures/iwpp/) are committed reports cut down: a few rows, two samples a cell, the
environment left out; the comparisons' mean and max and Table 1's all-rows ratios are recomputed
over the rows kept. iwpp-fig15-one-gpu.json is a report from a 1-GPU machine, whose 2-GPU rows
were skipped.
"""
import copy
import glob
import json
import os
import tempfile
import unittest

from repix_figures import figures_of
from repix_figures.core import render

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "results")


def fixture(name):
    with open(os.path.join(HERE, "fixtures", "iwpp", name + ".json")) as f:
        return json.load(f)


def by_name(report):
    return {f.name: f for f in figures_of(report)}


def series(fig, label):
    found = [s for s in fig.series if s.label == label]
    if len(found) != 1:
        raise AssertionError(f"{fig.name}: {len(found)} series {label!r} in {[s.label for s in fig.series]}")
    return found[0]


def cell(row, variant, scope):
    return next(c for c in row["cells"] if c["variant"] == variant and c["scope"] == scope)


def not_run(t, why):
    """A timing as the harness writes one that did not run."""
    t.update(not_run=why, median_ms=None, samples_ms=[], speedup_vs_seq=None)
    return t


class Table1(unittest.TestCase):
    def setUp(self):
        self.rep = fixture("iwpp-table1")
        self.opening, self.frame = self.rep["blocks"]

    def test_the_figures(self):
        self.assertEqual(list(by_name(self.rep)), ["time-opening-1-per-sm", "time-frame-fit", "pf-over-naive",
                                                   "tq-over-pf", "speedup", "queued"])

    def test_wavefront_times_ours_and_the_papers(self):
        f = by_name(self.rep)["time-frame-fit"]
        self.assertTrue(f.ylog)
        for key, label in (("atomic", "Naive (gpu-queue-atomic)"),
                           ("warp_atomic", "warp-atomic (gpu-queue-warp-atomic)"),
                           ("scan", "PF (gpu-queue-scan)"), ("tq", "TQ (gpu-queue-tq)")):
            s = series(f, label)
            self.assertEqual(s.x, [7, 9])
            self.assertEqual(s.y, [r["ours"]["wavefront_ms"][key] for r in self.frame["rows"]])
            self.assertEqual(s.missing, [])
        # The paper's rows of every block (its Table 1 is one table): 7 and 9 here, 13 in the other.
        paper = {r["raster_scans"]: r["paper"] for b in self.rep["blocks"] for r in b["rows"]}
        for col, label in (("atomic_ms", "paper: Naive"), ("scan_ms", "paper: PF"), ("tq_ms", "paper: TQ")):
            s = series(f, label)
            self.assertEqual((s.kind, s.x), ("paper", [7, 9, 13]))
            self.assertEqual(s.y, [paper[n][col] for n in (7, 9, 13)])
        self.assertEqual(series(f, "paper: Naive").y, [685, 527, 323])  # the paper's Table 1, as printed

    def test_a_phase_with_nothing_queued_is_said_not_drawn_nor_missing(self):
        f = by_name(self.rep)["time-opening-1-per-sm"]
        self.assertEqual(self.opening["rows"][1]["ours"]["wavefront_ms"]["atomic"], 0.0)  # 13 pairs: nothing queued
        s = series(f, "Naive (gpu-queue-atomic)")
        self.assertEqual((s.x, s.y, s.missing), ([7], [self.opening["rows"][0]["ours"]["wavefront_ms"]["atomic"]], []))
        self.assertTrue(any("after 13 raster-scan pairs" in n and "0 ms" in n for n in f.notes), f.notes)
        pf = by_name(self.rep)["pf-over-naive"]
        s = series(pf, "opening marker, 1 block per SM")
        self.assertEqual((s.x, s.missing), ([7], []))
        self.assertTrue(any(n.startswith("opening marker, 1 block per SM: no ratio after 13") for n in pf.notes))
        q = series(by_name(self.rep)["queued"], "opening: queued in total")
        self.assertEqual((q.x, q.y), ([7], [self.opening["rows"][0]["ours"]["total_queued_tq"]]))

    def test_ratios_per_row_and_over_all_rows(self):
        figs = by_name(self.rep)
        for name, key in (("pf-over-naive", "atomic_over_scan"), ("tq-over-pf", "scan_over_tq")):
            s = series(figs[name], "frame marker, as many blocks per SM as fit")
            self.assertEqual((s.x, s.y), ([7, 9], [r["ratios"][key] for r in self.frame["rows"]]))
            p = series(figs[name], {"pf-over-naive": "paper: PF over Naive", "tq-over-pf": "paper: TQ over PF"}[name])
            self.assertEqual((p.kind, p.x), ("paper", [7, 9, 13]))  # the rows of both blocks
            want = {r["raster_scans"]: r["ratios"][key + "_paper"] for b in self.rep["blocks"] for r in b["rows"]}
            self.assertEqual(p.y, [want[n] for n in p.x])
        f = figs["speedup"]
        self.assertEqual(f.categories, ["PF over Naive", "TQ over PF", "warp-atomic over Naive"])
        for b, label in ((self.opening, "opening marker, 1 block per SM"),
                         (self.frame, "frame marker, as many blocks per SM as fit")):
            s = series(f, label)
            self.assertEqual(s.x, f.categories)
            keys = ("atomic_over_scan", "scan_over_tq", "atomic_over_warp_atomic")
            self.assertEqual(s.y, [b["all_rows"][k] for k in keys])
        p = series(f, "paper")
        paper = self.opening["all_rows"]
        self.assertEqual((p.x, p.y), (["PF over Naive", "TQ over PF"],
                                      [paper["atomic_over_scan_paper"], paper["scan_over_tq_paper"]]))

    def test_queued_pixels_ours_and_the_papers(self):
        f = by_name(self.rep)["queued"]
        s = series(f, "frame: queued initially")
        self.assertEqual((s.x, s.y), ([7, 9], [r["ours"]["initially_queued_tq"] for r in self.frame["rows"]]))
        p = series(f, "paper: queued in total")
        self.assertEqual((p.x, p.y), ([7, 9, 13], [30400000, 22200000, 12700000]))

    def test_a_queue_not_run_is_missing_with_its_reason(self):
        rep = copy.deepcopy(self.rep)
        row = rep["blocks"][1]["rows"][1]  # frame, 9 scan pairs
        not_run(row["queues"][2], "error: out of memory")  # gpu-queue-scan
        row["ours"]["wavefront_ms"]["scan"] = None
        row["ratios"].update(atomic_over_scan=None, scan_over_tq=None)
        rep["blocks"][1]["all_rows"].update(atomic_over_scan=None, scan_over_tq=None)
        figs = by_name(rep)
        s = series(figs["time-frame-fit"], "PF (gpu-queue-scan)")
        self.assertEqual((s.x, [(m.x, m.why) for m in s.missing]), ([7], [(9, "error: out of memory")]))
        s = series(figs["pf-over-naive"], "frame marker, as many blocks per SM as fit")
        self.assertEqual((s.x, [(m.x, m.why) for m in s.missing]), ([7], [(9, "error: out of memory")]))
        s = series(figs["speedup"], "frame marker, as many blocks per SM as fit")
        self.assertEqual(s.x, ["warp-atomic over Naive"])
        self.assertEqual([(m.x, m.why) for m in s.missing], [("PF over Naive", "at 9 scan pairs: error: out of memory"),
                                                             ("TQ over PF", "at 9 scan pairs: error: out of memory")])

    def test_a_report_without_ratios_has_them_from_its_times(self):
        rep = copy.deepcopy(self.rep)
        for b in rep["blocks"]:
            del b["all_rows"]
            for r in b["rows"]:
                del r["ratios"]
        figs = by_name(rep)
        for name, key in (("pf-over-naive", "atomic_over_scan"), ("tq-over-pf", "scan_over_tq")):
            s = series(figs[name], "frame marker, as many blocks per SM as fit")
            for got, r in zip(s.y, self.frame["rows"]):
                self.assertAlmostEqual(got, r["ratios"][key], places=9)
        s = series(figs["speedup"], "opening marker, 1 block per SM")
        for got, k in zip(s.y, ("atomic_over_scan", "scan_over_tq", "atomic_over_warp_atomic")):
            self.assertAlmostEqual(got, self.opening["all_rows"][k], places=9)
        # The paper's column sums over its rows in the report (7, 9 and 13 scan pairs).
        self.assertAlmostEqual(series(figs["speedup"], "paper").y[0], (685 + 527 + 323) / (291 + 223 + 133))

    def test_the_papers_own_file_draws_its_numbers_alone(self):
        path = os.path.join(RESULTS, "paper", "iwpp-table1.json")
        if not os.path.exists(path):
            self.skipTest("no results/paper here")
        with open(path) as f:
            paper = json.load(f)
        figs = by_name(paper)
        self.assertEqual(series(figs["time"], "paper: TQ").y, [228, 175, 134, 106, 98, 83, 70])
        self.assertAlmostEqual(series(figs["speedup"], "paper").y[0], 2.309, places=3)  # its 2.31x
        self.assertTrue(all(f.measured_points() == 0 for f in figs.values()))


class Table2(unittest.TestCase):
    def setUp(self):
        self.rep = fixture("iwpp-table2")

    def test_speedups_per_size_and_scope_beside_the_papers(self):
        figs = by_name(self.rep)
        self.assertEqual(list(figs), ["speedup-kernel", "speedup-end-to-end", "time"])
        self.assertTrue(figs["speedup-kernel"].ylog)
        self.assertFalse(figs["speedup-end-to-end"].ylog)
        for scope in ("kernel", "end-to-end"):
            f = figs["speedup-" + scope]
            self.assertEqual((f.chart, f.categories), ("bars", ["4096^2", "8192^2"]))
            for variant, label in (("gpu-opt", "gpu-opt (exact separable EDT)"),
                                   ("gpu-queue-tq", "gpu-queue-tq (the paper's queue)")):
                s = series(f, label)
                self.assertEqual(s.x, ["4096^2", "8192^2"])
                self.assertEqual(s.y, [cell(r, variant, scope)["speedup_vs_seq"] for r in self.rep["rows"]])
            p = series(f, "paper: GPU")
            self.assertEqual((p.kind, p.x, p.y), ("paper", ["4096^2", "8192^2"], [31.4, 36.8]))

    def test_times_against_the_side(self):
        f = by_name(self.rep)["time"]
        self.assertTrue(f.xlog and f.ylog)
        s = series(f, "seq (one core)")
        self.assertEqual((s.x, s.y), ([4096, 8192], [r["seq"]["median_ms"] for r in self.rep["rows"]]))
        s = series(f, "gpu-opt, end-to-end")
        self.assertEqual(s.y, [cell(r, "gpu-opt", "end-to-end")["median_ms"] for r in self.rep["rows"]])

    def test_a_cell_not_run_and_a_row_without_seq_are_missing(self):
        rep = copy.deepcopy(self.rep)
        not_run(cell(rep["rows"][1], "gpu-queue-tq", "kernel"), "error: out of memory")
        figs = by_name(rep)
        s = series(figs["speedup-kernel"], "gpu-queue-tq (the paper's queue)")
        self.assertEqual((s.x, [(m.x, m.why) for m in s.missing]), (["4096^2"], [("8192^2", "error: out of memory")]))
        self.assertEqual(series(figs["time"], "gpu-queue-tq, kernel").missing[0].why, "error: out of memory")
        rep = copy.deepcopy(self.rep)
        not_run(rep["rows"][0]["seq"], "missing: not in the journal (the run stopped before this measurement)")
        for c in rep["rows"][0]["cells"]:
            c["speedup_vs_seq"] = None
        s = series(by_name(rep)["speedup-end-to-end"], "gpu-opt (exact separable EDT)")
        self.assertEqual(s.x, ["8192^2"])
        self.assertEqual(s.missing[0].x, "4096^2")
        self.assertTrue(s.missing[0].why.startswith("seq, the baseline, did not run: missing: not in the journal"))

    def test_an_output_that_did_not_verify_is_not_a_result(self):
        rep = copy.deepcopy(self.rep)
        c = cell(rep["rows"][0], "gpu-opt", "kernel")
        c.update(verified=False, verification="3 pixels differ")
        s = series(by_name(rep)["speedup-kernel"], "gpu-opt (exact separable EDT)")
        self.assertEqual(s.x, ["8192^2"])
        self.assertEqual(s.missing[0].why, "its output was wrong: 3 pixels differ")


class Fig10(unittest.TestCase):
    def test_speedup_against_threads_tiled_and_not(self):
        rep = fixture("iwpp-fig10")
        [f] = figures_of(rep)
        self.assertEqual((f.name, f.chart, f.xlabel), ("speedup", "lines", "CPU threads"))
        for variant, label in (("omp-tiled", "tiled (omp-tiled)"), ("omp-nontiled", "non-tiled (omp-nontiled)")):
            s = series(f, label)
            want = [cell(r, variant, "end-to-end")["speedup_vs_seq"] for r in rep["rows"]]
            self.assertEqual((s.x, s.y), ([1, 12], want))
        p = series(f, "paper: tiled")
        self.assertEqual((p.kind, p.x, p.y), ("paper", [12], [7.5]))

    def test_a_thread_count_not_run(self):
        rep = fixture("iwpp-fig10")
        not_run(cell(rep["rows"][1], "omp-nontiled", "end-to-end"), "missing: not in the journal")
        [f] = figures_of(rep)
        s = series(f, "non-tiled (omp-nontiled)")
        self.assertEqual((s.x, [(m.x, m.why) for m in s.missing]), ([1], [(12, "missing: not in the journal")]))


class FhOverSr(unittest.TestCase):
    """Figures 11 and 13: the speedups per scope and FH_GPU over SR_GPU."""

    def check(self, rep, xs, paper):
        figs = by_name(rep)
        self.assertEqual(list(figs), ["speedup-kernel", "speedup-end-to-end", "fh-over-sr"])
        for scope in ("kernel", "end-to-end"):
            for variant, label in (("gpu-queue-tq", "FH_GPU: gpu-queue-tq (the paper's queue)"),
                                   ("gpu-opt", "FH_GPU: gpu-opt (repix)"), ("gpu-sr", "SR_GPU: gpu-sr (raster scans)")):
                s = series(figs["speedup-" + scope], label)
                self.assertEqual((s.x, s.y), (xs, [cell(r, variant, scope)["speedup_vs_seq"] for r in rep["rows"]]))
            self.assertFalse([s for s in figs["speedup-" + scope].series if s.kind == "paper"])  # only in its plot
        f = figs["fh-over-sr"]
        self.assertEqual(f.categories, xs + ["mean", "max"])
        for c in rep["comparisons"]:
            s = series(f, f"{c['a']} over gpu-sr, {c['scope']}")
            self.assertEqual(s.x, xs + ["mean", "max"])
            self.assertEqual(s.y, [p["ratio"] for p in c["per_row"]] + [c["mean"], c["max"]])
        p = series(f, "paper: FH_GPU over SR_GPU")
        self.assertEqual((p.kind, p.x, p.y), ("paper", [paper[0]], [paper[1]]))

    def test_fig11(self):
        self.check(fixture("iwpp-fig11"), ["4096^2", "8192^2"], ("mean", 2.6))

    def test_fig13(self):
        self.check(fixture("iwpp-fig13"), ["25 %", "100 %"], ("max", 3.1))

    def test_a_machine_without_a_gpu_draws_nothing_of_ours(self):
        rep = fixture("iwpp-fig11")
        for r in rep["rows"]:
            for c in r["cells"]:
                not_run(c, "no GPU")
        rep["comparisons"] = []
        figs = by_name(rep)
        for f in figs.values():
            self.assertEqual(f.measured_points(), 0, f.name)
            for s in f.series:
                if s.kind == "ours":
                    self.assertTrue(s.missing, s.label)
        s = series(figs["speedup-kernel"], "SR_GPU: gpu-sr (raster scans)")
        self.assertEqual([(m.x, m.why) for m in s.missing], [("4096^2", "no GPU"), ("8192^2", "no GPU")])
        s = series(figs["fh-over-sr"], "gpu-opt over gpu-sr, kernel")
        self.assertEqual([m.x for m in s.missing], ["4096^2", "8192^2", "mean", "max"])
        self.assertEqual(s.missing[0].why, "gpu-opt: no GPU")

    def test_without_the_comparisons_the_ratios_come_from_the_times(self):
        rep = fixture("iwpp-fig13")
        want = {(c["a"], c["scope"]): c for c in rep["comparisons"]}
        del rep["comparisons"]
        f = by_name(rep)["fh-over-sr"]
        for (a, scope), c in want.items():
            s = series(f, f"{a} over gpu-sr, {scope}")
            for got, exp in zip(s.y, [p["ratio"] for p in c["per_row"]] + [c["mean"], c["max"]]):
                self.assertAlmostEqual(got, exp, places=9)


class Fig14(unittest.TestCase):
    def test_speedup_per_coverage(self):
        rep = fixture("iwpp-fig14")
        figs = by_name(rep)
        self.assertEqual(list(figs), ["speedup-kernel", "speedup-end-to-end"])
        f = figs["speedup-end-to-end"]
        s = series(f, "gpu-queue-tq (the paper's queue)")
        self.assertEqual((s.x, s.y), (["25 %", "100 %"], [cell(r, "gpu-queue-tq", "end-to-end")["speedup_vs_seq"]
                                                          for r in rep["rows"]]))
        self.assertEqual([s.kind for s in f.series], ["ours", "ours"])  # the paper's values are only in its plot
        self.assertIn("99 %", f.notes[0])


class MultiDevice(unittest.TestCase):
    def test_fig15_on_two_gpus_beside_the_papers_three(self):
        rep = fixture("iwpp-fig15")
        [f] = figures_of(rep)
        self.assertEqual(f.categories, ["1 GPU", "2 GPUs", "2 GPUs + CPU groups", "3 GPUs", "3 GPUs + CPU"])
        s = series(f, "multi-device, end-to-end")
        self.assertEqual((s.x, s.y), (["1 GPU", "2 GPUs", "2 GPUs + CPU groups"],
                                      [r["cells"][0]["speedup_vs_seq"] for r in rep["rows"]]))
        p = series(f, "paper: 3x M2090 + 12 cores")
        self.assertEqual(p.x, ["1 GPU", "2 GPUs", "3 GPUs + CPU", "3 GPUs"])
        self.assertEqual(p.y, [16.0, 30.0, 50.0, 50.0 / 1.17])  # 3 GPUs: its 50x over its CPUs' 1.17x
        self.assertIn("derived", p.note)
        self.assertTrue(any(n.startswith("Paper's 3 GPUs: 50x / 1.17") for n in f.notes), f.notes)

    def test_fig15_on_one_gpu_says_the_skipped_rows(self):
        rep = fixture("iwpp-fig15-one-gpu")
        [f] = figures_of(rep)
        s = series(f, "multi-device, end-to-end")
        self.assertEqual((s.x, s.y), (["1 GPU"], [rep["rows"][0]["cells"][0]["speedup_vs_seq"]]))
        self.assertEqual([(m.x, m.why) for m in s.missing], [("2 GPUs", "skipped: 1 GPU visible"),
                                                             ("2 GPUs + CPU groups", "skipped: 1 GPU visible")])

    def test_fig16(self):
        rep = fixture("iwpp-fig16")
        [f] = figures_of(rep)
        s = series(f, "multi-device, end-to-end")
        self.assertEqual(s.y, [r["cells"][0]["speedup_vs_seq"] for r in rep["rows"]])
        p = series(f, "paper: 3x M2090 + 12 cores")
        self.assertEqual(p.x, ["3 GPUs + CPU", "3 GPUs"])
        self.assertEqual(p.y, [85.6, 85.6 / 1.07])


class Render(unittest.TestCase):
    def test_every_figure_of_every_fixture_draws(self):
        d = tempfile.mkdtemp(prefix="repix-fig-iwpp-")
        for path in sorted(glob.glob(os.path.join(HERE, "fixtures", "iwpp", "*.json"))):
            stem = os.path.splitext(os.path.basename(path))[0]
            for fig in figures_of(fixture(stem)):
                paths = render(fig, d, stem)
                self.assertEqual(len(paths), 3)
                for p in paths:
                    self.assertGreater(os.path.getsize(p), 100, p)
                with open(paths[2]) as f:
                    pts = json.load(f)
                self.assertEqual([(s["x"], s["y"]) for s in pts["series"]], [(s.x, s.y) for s in fig.series])
        with open(os.path.join(d, "iwpp-fig15-one-gpu.speedup.svg")) as f:
            self.assertIn("not measured (skipped: 1 GPU visible)", f.read())

    def test_a_legend_outside_widens_the_picture_and_redraws_the_same(self):
        d = tempfile.mkdtemp(prefix="repix-fig-iwpp-")
        fig = by_name(fixture("iwpp-fig15"))["speedup"]
        self.assertTrue(fig.legend_outside)

        def png_width(path):
            with open(path, "rb") as f:
                return int.from_bytes(f.read(24)[16:20], "big")  # the IHDR chunk's width
        wide = render(fig, d, "a")
        fig.legend_outside = False
        narrow = render(fig, d, "b")
        self.assertGreater(png_width(wide[1]), png_width(narrow[1]))
        fig.legend_outside = True
        with open(wide[0], "rb") as f1, open(render(fig, d, "a")[0], "rb") as f2:
            self.assertEqual(f1.read(), f2.read())


class CommittedReports(unittest.TestCase):
    def test_every_committed_iwpp_report_has_its_figures(self):
        paths = glob.glob(os.path.join(RESULTS, "**", "iwpp-*.json"), recursive=True)
        if not paths:
            self.skipTest("no results/ here")
        drawn = 0
        for path in sorted(paths):
            with open(path) as f:
                rep = json.load(f)
            if not str(rep.get("table", "")).startswith("iwpp-"):
                continue
            figs = figures_of(rep)
            if "tool" in rep:  # a measured report, not the paper's own file
                self.assertTrue(figs, path)
                self.assertTrue(any(f.measured_points() for f in figs), path)
            drawn += 1
        self.assertGreater(drawn, 8)


if __name__ == "__main__":
    unittest.main()
