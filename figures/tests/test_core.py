"""The figure model and its renderer: what is drawn is what points.json says, a point not measured
is said on the figure (never a zero), and a redrawn figure is the same file."""
import json
import os
import tempfile
import unittest

from repix_figures.core import Figure, Missing, Series, render


class Model(unittest.TestCase):
    def test_a_point_not_measured_is_refused_as_a_value(self):
        for bad in (None, float("nan"), float("inf")):
            with self.assertRaises(ValueError):
                Series("s", [1], [bad])
        with self.assertRaises(ValueError):
            Series("s", [1, 2], [1.0])
        with self.assertRaises(ValueError):
            Series("s", [1], [1.0], kind="mine")
        with self.assertRaises(ValueError):
            Figure("f", "t", "x", "y", chart="pie")


class Render(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="repix-fig-")

    def fig(self):
        f = Figure("time", "a title", "size", "ms", xlog=True, ylog=True)
        f.add("ours", [1024, 2048, 4096], [1.5, 3.0, 6.5])
        f.add("paper", [1024, 4096], [10.0, 40.0], kind="paper", note="read off the paper's plot")
        f.add("2 GPUs", [], [], missing=[Missing(2, "this machine has 1 GPU")])
        return f

    def test_files_and_points(self):
        paths = render(self.fig(), self.dir, "r")
        self.assertEqual([os.path.basename(p) for p in paths], ["r.time.svg", "r.time.png", "r.time.points.json"])
        for p in paths:
            self.assertGreater(os.path.getsize(p), 100, p)
        with open(paths[2]) as f:
            pts = json.load(f)
        self.assertEqual(pts["series"][0]["x"], [1024, 2048, 4096])
        self.assertEqual(pts["series"][0]["y"], [1.5, 3.0, 6.5])
        self.assertEqual(pts["series"][1]["kind"], "paper")
        self.assertEqual(pts["series"][2]["missing"], [{"x": 2, "why": "this machine has 1 GPU"}])
        with open(paths[0]) as f:
            svg = f.read()
        self.assertIn("not measured (this machine has 1 GPU)", svg)
        self.assertIn("read off the paper", svg)

    def test_bars_with_a_missing_bar_say_so(self):
        f = Figure("bars", "t", "variant", "ms", chart="bars", categories=["a", "b", "c"])
        f.add("in1", ["a", "c"], [1.0, 2.0], missing=[Missing("b", "skipped: no GPU")])
        paths = render(f, self.dir, "r")
        with open(paths[0]) as fh:
            svg = fh.read()
        self.assertIn("not measured (skipped: no GPU)", svg)
        with open(paths[2]) as fh:
            self.assertEqual(json.load(fh)["series"][0]["y"], [1.0, 2.0])

    def test_nothing_measured_is_said_not_drawn(self):
        f = Figure("empty", "t", "GPUs", "ms")
        f.add("2 GPUs", [], [], missing=[Missing(2, "1 GPU here")])
        f.add("paper", [2], [5.0], kind="paper")
        svg = open(render(f, self.dir, "r")[0]).read()
        self.assertIn("nothing of ours was measured for this figure", svg)

    def test_redrawn_is_the_same_svg(self):
        a = open(render(self.fig(), self.dir, "a")[0], "rb").read()
        b = open(render(self.fig(), self.dir, "a")[0], "rb").read()
        self.assertEqual(a, b)


if __name__ == "__main__":
    unittest.main()
