"""The figures of bench reports (ladder, roofline, scaling), of run records (the ECC curve) and the
dispatch of experiment reports, checked on the points they draw against the report's numbers."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

from repix_figures import figures_of
from repix_figures.draw import draw
from tests.fixtures import bench_report, row

A, B = "uniform:64x64:levels=4:seed=1", "grf:64x64:alpha=3:seed=2"


def by_name(figs):
    return {f.name: f for f in figs}


class Ladder(unittest.TestCase):
    def test_times_and_speedups_per_input_in_ladder_order_missing_said(self):
        rep = bench_report([row("ecc", "gpu-naive", A, 8.0), row("ecc", "gpu-cached", A, 2.0),
                            row("ecc", "gpu-opt", A, 0.5), row("ecc", "gpu-naive", B, 10.0),
                            row("ecc", "gpu-opt", B, 1.0), row("ecc", "peer:gpuecc", A, 4.0)])
        f = by_name(figures_of(rep))
        t, s = f["ladder-ecc-kernel-time"], f["ladder-ecc-kernel-speedup"]
        self.assertEqual(t.categories, ["gpu-naive", "gpu-cached", "gpu-opt", "peer:gpuecc (peer)"])
        sa, sb = t.series
        self.assertEqual((sa.x, sa.y), (["gpu-naive", "gpu-cached", "gpu-opt", "peer:gpuecc (peer)"], [8.0, 2.0, 0.5, 4.0]))
        self.assertEqual((sb.x, sb.y), (["gpu-naive", "gpu-opt"], [10.0, 1.0]))
        self.assertEqual([m.x for m in sb.missing], ["gpu-cached", "peer:gpuecc (peer)"])
        self.assertEqual(s.series[0].y, [1.0, 4.0, 16.0, 2.0])
        self.assertEqual(s.series[1].y, [1.0, 10.0])
        self.assertTrue(t.ylog)

    def test_one_variant_is_no_ladder_and_rows_not_run_are_left_out(self):
        rep = bench_report([row("edt", "gpu-opt", A, 1.0), row("edt", "seq", A, 3.0, not_run="skipped: x"),
                            row("edt", "omp", A, None)])
        self.assertEqual([f.name for f in figures_of(rep)], [])


class Roofline(unittest.TestCase):
    def test_fraction_of_the_bound(self):
        rep = bench_report([row("ecc", "gpu-opt", A, 0.5, pct_of_bound=40.5, bound="dram-read"),
                            row("ecc", "gpu-cached", A, 2.0, pct_of_bound=10.0, bound="dram-read"),
                            row("ecc", "gpu-opt", B, 0.6, pct_of_bound=33.0, bound="dram-read")],
                           bounds=[{"name": "dram-read", "unit": "GB/s", "value": 4400.0, "how": "stream"}])
        f = by_name(figures_of(rep))["roofline-ecc-kernel"]
        ours = [s for s in f.series if s.kind == "ours"]
        self.assertEqual((ours[0].x, ours[0].y), (["gpu-opt", "gpu-cached"], [0.405, 0.1]))
        self.assertEqual((ours[1].x, ours[1].y), (["gpu-opt"], [0.33]))
        self.assertEqual([m.x for m in ours[1].missing], ["gpu-cached"])
        bound = [s for s in f.series if s.kind == "bound"][0]
        self.assertEqual(bound.y, [1.0, 1.0])
        self.assertIn("dram-read: 4400.0 GB/s (stream)", f.notes)


class Scaling(unittest.TestCase):
    def test_time_and_efficiency_against_gpus(self):
        rep = bench_report([row("auto-mi", "multi-device", A, 10.0, scope="end-to-end", options={"gpus": 1}),
                            row("auto-mi", "multi-device", A, 6.0, scope="end-to-end", options={"gpus": 2}),
                            row("auto-mi", "multi-device", B, 6.0, scope="end-to-end", options={"gpus": 2}),
                            row("auto-mi", "multi-device", B, 4.0, scope="end-to-end", options={"gpus": 4})])
        f = by_name(figures_of(rep))
        t = f["scaling-auto-mi-multi-device-end-to-end-gpus-time"]
        e = f["scaling-auto-mi-multi-device-end-to-end-gpus-efficiency"]
        self.assertEqual((t.series[0].x, t.series[0].y), ([1, 2], [10.0, 6.0]))
        self.assertEqual((e.series[0].x, e.series[0].y), ([1, 2], [1.0, 10.0 / 12.0]))
        self.assertEqual(e.series[1].y, [])  # no 1-GPU row on B: said, not drawn
        self.assertEqual(e.series[1].missing[0].why, "no 1-gpu row in the report")

    def test_one_count_is_no_scaling(self):
        rep = bench_report([row("ami", "multi-device", A, 10.0, options={"gpus": 2})])
        self.assertFalse([f for f in figures_of(rep) if f.name.startswith("scaling")])


class Curve(unittest.TestCase):
    def test_the_records_curve(self):
        rec = {"family": "ecc", "variant": "omp", "input": "uniform:16x8:levels=3", "values": [0.0, 1.0, 2.0],
               "ecc": [10, -3, 1], "options": {}}
        [f] = figures_of(rec)
        self.assertEqual((f.name, f.series[0].x, f.series[0].y), ("curve", [0.0, 1.0, 2.0], [10.0, -3.0, 1.0]))
        with self.assertRaises(ValueError):
            figures_of(dict(rec, ecc=[1, 2]))


class Draw(unittest.TestCase):
    def test_experiment_report_draws_its_rows_and_a_steps_table_once(self):
        d = tempfile.mkdtemp(prefix="repix-fig-")
        rep = bench_report([row("ecc", "gpu-naive", A, 8.0), row("ecc", "gpu-opt", A, 0.5)])
        rep["steps"] = [{"label": "bench", "kind": "bench"}]
        p = os.path.join(d, "exp.json")
        with open(p, "w") as f:
            json.dump(rep, f)
        written = draw(p, d)
        names = sorted(os.path.basename(w) for w in written)
        self.assertIn("exp.ladder-ecc-kernel-time.svg", names)
        self.assertEqual(len(names), 6)  # time and speedup, three files each
        src = json.load(open(os.path.join(d, "exp.ladder-ecc-kernel-time.points.json")))["source"]
        self.assertEqual(src, "exp.json: repix 0123456789ab on Test GPU")

    def test_command_line_errors_are_one_line(self):
        d = tempfile.mkdtemp(prefix="repix-fig-")
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        missing = subprocess.run([sys.executable, "-m", "repix_figures", os.path.join(d, "none.json")],
                                 capture_output=True, text=True, env=env)
        self.assertEqual(missing.returncode, 1)
        self.assertEqual(missing.stderr.strip().count("\n"), 0, missing.stderr)
        self.assertIn("no such report", missing.stderr)
        with open(os.path.join(d, "bad.json"), "w") as f:
            f.write("{not json")
        bad = subprocess.run([sys.executable, "-m", "repix_figures", os.path.join(d, "bad.json")],
                             capture_output=True, text=True, env=env)
        self.assertEqual(bad.returncode, 1)
        self.assertIn("is not a JSON report", bad.stderr)


if __name__ == "__main__":
    unittest.main()
