"""The ECC paper's tables as figures (kinds/ecc_tables.py), drawn from reports trimmed from the
committed ones (tests/fixtures/ecc/): every point drawn is the report's number, ours and the
paper's, and a cell or a row that did not run is a missing point with the report's reason."""
import copy
import json
import os
import shutil
import tempfile
import unittest
from xml.sax.saxutils import escape

from repix_figures import figures_of
from repix_figures.core import render

HERE = os.path.dirname(os.path.abspath(__file__))


def fixture(name):
    with open(os.path.join(HERE, "fixtures", "ecc", name)) as f:
        return json.load(f)


def by_name(figs):
    return {f.name: f for f in figs}


def series(fig, label):
    hits = [s for s in fig.series if s.label == label or s.label == label + ": not measured"]
    assert len(hits) == 1, (label, [s.label for s in fig.series])
    return hits[0]


def points(s):
    return dict(zip(s.x, s.y))


def why(s):
    return {m.x: m.why for m in s.missing}


class Drawn(unittest.TestCase):
    """Each figure once through the renderer: its files, and points.json holding what was drawn."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="repix-fig-ecc-")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)

    def draw_all(self, figs):
        for f in figs:
            paths = render(f, self.dir, "r")
            self.assertEqual([os.path.basename(p) for p in paths],
                             [f"r.{f.name}.svg", f"r.{f.name}.png", f"r.{f.name}.points.json"])
            with open(paths[2]) as fh:
                pts = json.load(fh)
            self.assertEqual([(s["x"], s["y"]) for s in pts["series"]], [(s.x, s.y) for s in f.series])
            with open(paths[0]) as fh:
                svg = fh.read()
            # Each missing point is said on the figure (long reasons wrap onto a second line).
            for s in f.series:
                for m in s.missing:
                    self.assertIn(escape(f"{s.label} at {m.x}: not measured ({m.why[:40]}"), svg)


class Table1(Drawn):
    def setUp(self):
        super().setUp()
        self.rep = fixture("ecc-1.json")
        self.rows = self.rep["rows"]

    def test_figures_and_inputs(self):
        f = by_name(figures_of(self.rep))
        self.assertEqual(list(f), ["t1-cpu", "t1-gpu", "t1-speedup", "t1-kernel"])
        self.assertEqual(f["t1-cpu"].categories, ["uniform 512^3", "grf 2048^2", "uniform 2048^3"])
        self.assertEqual(f["t1-speedup"].categories, ["uniform 512^3", "grf 2048^2", "uniform 2048^3",
                                                      "victre 287x359x202", "victre 440x518x488", "cmb 6400x3200"])
        for fig in f.values():
            self.assertEqual(fig.chart, "bars")
            self.assertTrue(fig.ylog)
            self.assertEqual(len([s for s in fig.series if s.kind == "paper"]), 1)  # bars of a kind look alike

    def test_times_are_the_reports_ours_and_the_papers(self):
        f = by_name(figures_of(self.rep))
        cats = f["t1-cpu"].categories
        for fig, side in (("t1-cpu", "cpu"), ("t1-gpu", "gpu")):
            overall = points(series(f[fig], "ours, overall (file read included)"))
            e2e = points(series(f[fig], "ours, end to end (in memory)"))
            paper = points([s for s in f[fig].series if s.kind == "paper"][0])
            for cat, r in zip(cats, self.rows):
                if r["ours"][f"{side}_overall_s"] is not None:
                    self.assertEqual(overall[cat], r["ours"][f"{side}_overall_s"])
                if r["ours"][f"{side}_end_to_end_s"] is not None:
                    self.assertEqual(e2e[cat], r["ours"][f"{side}_end_to_end_s"])
                self.assertEqual(paper[cat], r["paper"][f"{side}_overall_s"])
        # The streamed size: the GPU end to end is gpu-stream's, the rest did not run at that size.
        self.assertEqual(points(series(f["t1-gpu"], "ours, end to end (in memory)"))["uniform 2048^3"],
                         self.rows[2]["ours"]["gpu_end_to_end_s"])
        self.assertTrue(any("gpu-stream" in n and "uniform 2048^3" in n for n in f["t1-gpu"].notes))
        self.assertEqual(why(series(f["t1-cpu"], "ours, overall (file read included)")),
                         {"uniform 2048^3": "no omp with-io result on this input in the report"})
        self.assertEqual(why(series(f["t1-gpu"], "ours, overall (file read included)")),
                         {"uniform 2048^3": "no gpu-opt with-io result on this input in the report"})
        kern = f["t1-kernel"]
        self.assertEqual(points(series(kern, "ours")),
                         {c: r["ours"]["gpu_kernel_gvox_s"] for c, r in zip(cats, self.rows[:2])})
        self.assertEqual(points([s for s in kern.series if s.kind == "paper"][0]),
                         {c: r["paper"]["gpu_kernel_gvox_s"] for c, r in zip(cats, self.rows)})

    def test_speedups_and_the_rows_that_cannot_be_reproduced(self):
        f = by_name(figures_of(self.rep))["t1-speedup"]
        cats = f.categories
        over = series(f, "ours, overall")
        self.assertEqual(points(over), {c: r["ratios"]["ours_speedup_overall"] for c, r in zip(cats, self.rows[:2])})
        self.assertEqual(points(series(f, "ours, end to end")),
                         {c: r["ratios"]["ours_speedup_end_to_end"] for c, r in zip(cats, self.rows[:2])})
        paper = series(f, "paper, overall (as printed)")
        nr = self.rep["not_reproducible"]
        self.assertEqual(points(paper), dict(zip(cats, [r["paper"]["overall_speedup"] for r in self.rows]
                                                 + [r["paper"]["overall_speedup"] for r in nr])))
        # Every row we cannot run is a missing point; its reason in full the first time, then pointed to.
        missing = why(over)
        self.assertEqual(missing["victre 287x359x202"], "not reproducible: " + nr[0]["reason"])
        self.assertEqual(missing["victre 440x518x488"], "not reproducible, as victre 287x359x202")
        self.assertEqual(missing["cmb 6400x3200"], "not reproducible: " + nr[2]["reason"])
        self.assertEqual(missing["uniform 2048^3"], "no omp with-io result on this input in the report")
        self.assertEqual(why(series(f, "ours, end to end")),
                         {"uniform 2048^3": "no omp end-to-end result on this input in the report"})

    def test_a_bench_cell_that_did_not_run_says_the_benchs_reason(self):
        rep = copy.deepcopy(self.rep)
        row = rep["rows"][1]
        row["ours"]["gpu_overall_s"] = None
        row["ratios"]["ours_speedup_overall"] = None
        for r in rep["report"]["results"]:
            if r["dataset"] == row["dataset"] and (r["variant"], r["scope"]) == ("gpu-opt", "with-io"):
                r.update(samples_ms=[], not_run="error: cudaErrorMemoryAllocation: out of memory")
        f = by_name(figures_of(rep))
        want = "gpu-opt with-io: error: cudaErrorMemoryAllocation: out of memory"
        self.assertEqual(why(series(f["t1-gpu"], "ours, overall (file read included)"))["grf 2048^2"], want)
        self.assertEqual(why(series(f["t1-speedup"], "ours, overall"))["grf 2048^2"], want)
        self.assertNotIn("grf 2048^2", series(f["t1-gpu"], "ours, overall (file read included)").x)

    def test_no_gpu_and_a_time_of_zero_are_not_drawn(self):
        rep = copy.deepcopy(self.rep)
        rep["gpu"] = "no GPU: no CUDA device"
        rep["report"]["results"] = [r for r in rep["report"]["results"] if not r["variant"].startswith("gpu")]
        for r in rep["rows"]:
            for k in ("gpu_overall_s", "gpu_end_to_end_s", "gpu_kernel_gvox_s"):
                r["ours"][k] = None
        rep["rows"][0]["ours"]["cpu_overall_s"] = 0.0
        f = by_name(figures_of(rep))
        gpu = series(f["t1-gpu"], "ours, overall (file read included)")
        self.assertEqual((gpu.x, gpu.y), ([], []))
        self.assertTrue(gpu.label.endswith(": not measured"))
        self.assertEqual(set(why(gpu).values()), {"no GPU: no CUDA device"})
        self.assertNotIn("uniform 512^3", series(f["t1-cpu"], "ours, overall (file read included)").x)

    def test_two_rows_of_one_shape_are_told_apart(self):
        rep = copy.deepcopy(self.rep)
        twin = copy.deepcopy(rep["rows"][1])
        twin["dataset"] = twin["dataset"].replace("seed=7", "seed=8")
        rep["rows"].insert(2, twin)
        f = by_name(figures_of(rep))
        self.assertEqual(f["t1-cpu"].categories[1:3], ["grf 2048^2, seed 7", "grf 2048^2, seed 8"])

    def test_drawn(self):
        self.draw_all(figures_of(self.rep))


class Transcription(unittest.TestCase):
    def test_the_papers_own_numbers_alone_are_no_figure_of_ours(self):
        # results/paper/ecc-table1.json names its table too; its rows are the paper's alone.
        for tid in ("ecc-1", "ecc-2", "ecc-3"):
            paper = {"table": tid, "source": "Wang, Wagner, Chen", "rows": [{"input": "grf", "shape": "128x128x128",
                                                                           "count": 1, "iterations": 1,
                                                                           "gpu_overall_s": 0.12}]}
            self.assertEqual(figures_of(paper), [], tid)


class Table2(Drawn):
    def setUp(self):
        super().setUp()
        self.rep = fixture("ecc-2.json")

    def test_per_iteration_times_against_n(self):
        f = by_name(figures_of(self.rep))
        self.assertEqual(list(f), ["t2-overall", "t2-steps"])
        rows = self.rep["rows"]
        ns = [r["iterations"] for r in rows]
        overall = f["t2-overall"]
        self.assertEqual((overall.chart, overall.xlog, overall.ylog), ("lines", True, True))
        self.assertIn("N = 1, 10, 100", overall.xlabel)
        self.assertEqual((overall.series[0].x, overall.series[0].y), (ns, [r["ours"]["overall_avg_ms"] for r in rows]))
        self.assertEqual(overall.series[1].kind, "paper")
        self.assertEqual((overall.series[1].x, overall.series[1].y), (ns, [r["paper"]["overall_avg_ms"] for r in rows]))
        steps = f["t2-steps"]
        for label, field in (("ECC exec", "ecc_exec_avg_ms"), ("smoothing", "gaussian_exec_avg_ms")):
            self.assertEqual(series(steps, f"ours {label}").y, [r["ours"][field] for r in rows])
            self.assertEqual(series(steps, f"paper {label}").y, [r["paper"][field] for r in rows])
        self.assertEqual(series(steps, "ours ECC mem (curve to host)").y, [r["ours"]["ecc_mem_avg_ms"] for r in rows])
        self.assertEqual(series(steps, "paper ECC mem").y, [r["paper"]["ecc_mem_avg_ms"] for r in rows])
        self.assertTrue(any("127.7 ms" in n for n in overall.notes))  # the CUDA context, outside ours

    def test_rows_not_run_and_rows_the_journal_lacks(self):
        rep = copy.deepcopy(self.rep)
        rep["gpu"] = "no GPU: no CUDA device"
        last = rep["rows"][2]
        for k in last["ours"]:
            if k != "disk_read_ms":
                last["ours"][k] = None
        last["verification"] = ""
        rep["provenance"] = {"rebuilt_from_journal": "j.jsonl", "missing": ["pipeline x1000"]}
        ours = figures_of(rep)[0].series[0]
        self.assertEqual(ours.x, [1, 10])
        self.assertEqual(why(ours), {100: "no GPU: no CUDA device",
                                     1000: "not in the journal the table was rebuilt from (its run did not finish)"})
        paper = figures_of(rep)[0].series[1]
        self.assertEqual(paper.x, [1, 10, 100])  # the paper's 100 is in the report; its 1000 is not

    def test_drawn(self):
        self.draw_all(figures_of(self.rep))


class Table3(Drawn):
    def setUp(self):
        super().setUp()
        self.rep = fixture("ecc-3.json")

    def test_time_per_image_and_amortisation_against_batch_size(self):
        f = by_name(figures_of(self.rep))
        self.assertEqual(list(f), ["t3-uniform-128x128", "t3-grf-128x128x128", "t3-amortisation"])
        for name, inp in (("t3-uniform-128x128", "uniform"), ("t3-grf-128x128x128", "grf")):
            rows = [r for r in self.rep["rows"] if r["input"] == inp]
            ns = [r["count"] for r in rows]
            fig = f[name]
            for label, side, field in (("ours GPU overall", "ours", "gpu_overall_avg_ms"),
                                       ("paper GPU overall (NVIDIA RTX 2070)", "paper", "gpu_overall_avg_ms"),
                                       ("ours file read", "ours", "gpu_disk_read_avg_ms"),
                                       ("paper file read", "paper", "gpu_disk_read_avg_ms"),
                                       ("ours GPU, batch already in GPU memory", "ours", "gpu_device_resident_avg_ms")):
                s = series(fig, label)
                self.assertEqual((s.x, s.y), (ns, [r[side][field] for r in rows]), label)
                self.assertEqual(s.kind, side if side == "paper" else "ours")
            cpu = series(fig, "ours CPU (read + omp)")
            self.assertEqual(points(cpu), {r["count"]: r["ours"]["cpu_omp_avg_ms"] for r in rows
                                           if r["ours"]["cpu_omp_avg_ms"] is not None})
            budget = "omp not timed: the CPU column stops at 2^27 voxels a batch (time budget)"
            self.assertEqual(why(cpu), {r["count"]: budget for r in rows if r["ours"]["cpu_omp_avg_ms"] is None})
        amort = f["t3-amortisation"]
        uni = [r for r in self.rep["rows"] if r["input"] == "uniform"]
        self.assertEqual(series(amort, "ours, uniform 128x128").y, [r["ratios"]["amortisation_ours"] for r in uni])
        self.assertEqual(series(amort, "paper, uniform 128x128").y, [r["ratios"]["amortisation_paper"] for r in uni])

    def test_a_batch_not_run_is_said(self):
        rep = copy.deepcopy(self.rep)
        row = rep["rows"][1]
        row["ours"] = {k: None for k in row["ours"]}
        row["ratios"]["amortisation_ours"] = None
        row["verification"] = "not run (no GPU, and the CPU column is over its budget at this size)"
        fig = figures_of(rep)[0]
        self.assertEqual(why(series(fig, "ours GPU overall")), {100: row["verification"]})
        self.assertEqual(why(series(fig, "ours CPU (read + omp)"))[100], row["verification"])

    def test_drawn(self):
        self.draw_all(figures_of(self.rep))


class Ablation(Drawn):
    def setUp(self):
        super().setUp()
        self.rep = fixture("ecc-ablation.json")

    def test_time_and_speedup_per_step_per_input(self):
        f = by_name(figures_of(self.rep))
        self.assertEqual(list(f), ["ablation-time", "ablation-speedup"])
        ladder = ["gpu-naive", "gpu-register", "gpu-shared-hist", "gpu-cached", "gpu-opt-static", "gpu-opt",
                  "gpu-opt-direct", "gpu-opt-warp"]
        self.assertEqual(f["ablation-time"].categories, ladder)
        self.assertTrue(f["ablation-time"].ylog and f["ablation-speedup"].ylog)
        for ds, label in (("uniform:8192x8192:levels=256:dtype=float32:seed=1", "uniform 8192x8192 float32"),
                          ("grf:8192x8192:alpha=3:seed=2", "grf 8192x8192")):
            rows = [r for r in self.rep["rows"] if r["dataset"] == ds]
            t = series(f["ablation-time"], label)
            self.assertEqual((t.x, t.y), (ladder, [r["median_ms"] for r in rows]))
            s = series(f["ablation-speedup"], f"{label} (vs gpu-naive)")
            self.assertEqual((s.x, s.y), (ladder, [r["gain_over_first"] for r in rows]))

    def test_a_step_without_a_row_on_an_input_is_missing(self):
        rep = copy.deepcopy(self.rep)
        rep["rows"] = [r for r in rep["rows"] if not (r["dataset"].startswith("grf") and r["variant"] == "gpu-cached")]
        f = by_name(figures_of(rep))
        for name, label in (("ablation-time", "grf 8192x8192"), ("ablation-speedup", "grf 8192x8192 (vs gpu-naive)")):
            s = series(f[name], label)
            self.assertNotIn("gpu-cached", s.x)
            self.assertEqual(why(s), {"gpu-cached": "no row of it on this input in the report"})

    def test_counters_where_the_report_has_them(self):
        rep = fixture("profile.ecc-ablation.json")
        f = by_name(figures_of(rep))
        self.assertEqual(list(f), ["ablation-time", "ablation-speedup", "ablation-counters"])
        rows = rep["rows"]
        # An older report: the gain is over gpu-naive, under its older name.
        self.assertEqual(f["ablation-speedup"].series[0].y, [r["gain_over_naive"] for r in rows])
        c = f["ablation-counters"]
        self.assertEqual(c.categories, [r["variant"] for r in rows])
        self.assertEqual(series(c, "achieved occupancy").y, [r["ncu"]["achieved_occupancy_pct"] for r in rows])
        self.assertEqual(series(c, "DRAM throughput, % of peak").y,
                         [r["ncu"]["dram_throughput_pct_of_peak"] for r in rows])
        self.assertEqual(series(c, "L2 throughput, % of peak").y, [r["ncu"]["l2_throughput_pct_of_peak"] for r in rows])
        del rep["rows"][1]["ncu"]
        c = by_name(figures_of(rep))["ablation-counters"]
        self.assertEqual(why(series(c, "achieved occupancy")),
                         {rows[1]["variant"]: "no Nsight Compute counters of this step in the report"})

    def test_drawn(self):
        self.draw_all(figures_of(self.rep) + figures_of(fixture("profile.ecc-ablation.json")))


if __name__ == "__main__":
    unittest.main()
