"""The max-tree seminar's table as figures (kinds/maxtree_tables.py), drawn from a report trimmed
from the committed H100 one (tests/fixtures/maxtree/): the seminar's figures beside ours and Blin's
code, and the step breakdown stacked, every point the report's number; a number missing on our
side, or Blin's code absent, is a missing point with the reason."""
import copy
import json
import os
import shutil
import tempfile
import unittest
from xml.sax.saxutils import escape

from repix_figures import figures_of
from repix_figures.core import Figure, Missing, render

HERE = os.path.dirname(os.path.abspath(__file__))
BIG, FRAME = "texture:6000x4000:name=camera", "texture:1920x1080:name=camera"


def fixture():
    with open(os.path.join(HERE, "fixtures", "maxtree", "maxtree-seminar.json")) as f:
        return json.load(f)


def read(path):
    with open(path) as f:
        return f.read()


def by_name(figs):
    return {f.name: f for f in figs}


def of_kind(fig, kind):
    hits = [s for s in fig.series if s.kind == kind]
    assert len(hits) == 1, (fig.name, kind)
    return hits[0]


def points(s):
    return dict(zip(s.x, s.y))


def why(s):
    return {m.x: m.why for m in s.missing}


class Seminar(unittest.TestCase):
    def setUp(self):
        self.rep = fixture()
        self.fig = {f["quantity"]: f for f in self.rep["figures"]}
        self.dir = tempfile.mkdtemp(prefix="repix-fig-maxtree-")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)

    def row(self, rep, variant, ds, conn=4):
        return next(r for r in rep["variants"]
                    if (r["variant"], r["dataset"], r["connectivity"]) == (variant, ds, conn))

    def test_figure_names(self):
        self.assertEqual([f.name for f in figures_of(self.rep)],
                         ["seminar-speedup", "seminar-throughput", "seminar-fps", "seminar-ms", "seminar-percent",
                          "seminar-ratio", "steps-texture-6000x4000-camera-4conn", "steps-texture-1920x1080-camera-4conn",
                          "steps-texture-6000x4000-camera-8conn"])

    def test_headline_figures_ours_the_seminars_and_blins_code(self):
        f = by_name(figures_of(self.rep))
        peer_big = self.row(self.rep, "peer:blin-maxtree", BIG)
        peer_big_e2e = self.row(self.rep, "peer:blin-maxtree-e2e", BIG)
        peer_frame = self.row(self.rep, "peer:blin-maxtree", FRAME)
        peer_frame_e2e = self.row(self.rep, "peer:blin-maxtree-e2e", FRAME)
        want = {  # figure -> {category: (quantity, Blin's code's value computed as the table computes ours)}
            "seminar-speedup": {"kernel vs omp": ("gpu_vs_parallel_cpu_speedup", peer_big["speedup_over_omp"])},
            "seminar-throughput": {"kernel": ("kernel_throughput", peer_big["gpx_per_s"] * 1000),
                                   "end to end": ("end_to_end_throughput", peer_big_e2e["gpx_per_s"] * 1000)},
            "seminar-fps": {"kernel": ("kernel_fps_1920x1080", 1000 / peer_frame["kernel_ms"]),
                            "end to end": ("end_to_end_fps_1920x1080", 1000 / peer_frame_e2e["end_to_end_ms"])},
        }
        for name, cats in want.items():
            fig = f[name]
            self.assertEqual((fig.chart, fig.categories), ("bars", list(cats)))
            self.assertEqual(points(of_kind(fig, "ours")), {c: self.fig[q]["ours"] for c, (q, _) in cats.items()})
            self.assertEqual(points(of_kind(fig, "paper")), {c: self.fig[q]["seminar"] for c, (q, _) in cats.items()})
            self.assertEqual(points(of_kind(fig, "peer")), {c: v for c, (_, v) in cats.items()})
        self.assertEqual(of_kind(f["seminar-speedup"], "ours").label, "ours (gpu-opt)")
        self.assertTrue(f["seminar-throughput"].ylog and f["seminar-fps"].ylog)

    def test_other_figures_and_a_number_we_do_not_have(self):
        f = by_name(figures_of(self.rep))
        ms = f["seminar-ms"]
        self.assertEqual(ms.categories, ["kernel", "end to end", "border: merge saving", "border: extra steps"])
        ours = of_kind(ms, "ours")
        self.assertEqual(points(ours), {"kernel": self.fig["kernel_ms_6000x4000"]["ours"],
                                        "end to end": self.fig["end_to_end_ms"]["ours"],
                                        "border: merge saving": self.fig["border_horizontal_merge_saving"]["ours"]})
        self.assertLess(points(ours)["border: merge saving"], 0)  # drawn as it is: a linear axis
        self.assertEqual(why(ours), {"border: extra steps": self.fig["border_extra_steps_cost"]["ours_from"]})
        self.assertEqual(points(of_kind(ms, "paper"))["border: extra steps"], 2.4)
        self.assertEqual(points(of_kind(ms, "peer")),
                         {"kernel": self.row(self.rep, "peer:blin-maxtree", BIG)["kernel_ms"],
                          "end to end": self.row(self.rep, "peer:blin-maxtree-e2e", BIG)["end_to_end_ms"]})
        pct = f["seminar-percent"]
        self.assertEqual(points(of_kind(pct, "ours"))["copies' share of end to end"],
                         self.fig["copies_share_of_end_to_end"]["ours"])
        self.assertEqual([s.kind for s in pct.series], ["ours", "paper"])  # Blin's code has no such figure
        # Numbers on neither side (bar charts in the seminar) are not drawn, and said.
        self.assertNotIn("step share tile building", pct.categories)
        self.assertTrue(any("step_share_tile_building" in n for n in pct.notes))
        self.assertTrue(any("four_techniques_times" in n for n in ms.notes))
        self.assertEqual(points(of_kind(f["seminar-ratio"], "ours")),
                         {"border size reduction": self.fig["border_size_reduction"]["ours"]})

    def test_steps_stacked_with_blins_code_beside(self):
        f = by_name(figures_of(self.rep))
        fig = f["steps-texture-6000x4000-camera-4conn"]
        self.assertEqual(fig.chart, "stacked")
        self.assertEqual(fig.categories, ["gpu-tile", "gpu-opt", "peer:blin-maxtree"])
        gpu = [self.row(self.rep, v, BIG) for v in ("gpu-tile", "gpu-opt")]
        for label, field in (("tile build", "build_ms"), ("merges (horizontal + vertical)", "merge_ms"),
                             ("flatten", "flatten_ms")):
            s = next(s for s in fig.series if s.label == label)
            self.assertEqual((s.x, s.y, s.kind), (["gpu-tile", "gpu-opt"], [r[field] for r in gpu], "ours"))
            self.assertEqual(list(why(s)), ["peer:blin-maxtree"])  # a peer's phases are not ours to time
        peer = of_kind(fig, "peer")
        self.assertEqual((peer.x, peer.y),
                         (["peer:blin-maxtree"], [self.row(self.rep, "peer:blin-maxtree", BIG)["kernel_ms"]]))
        self.assertTrue(any("omp" in n for n in fig.notes))  # the CPU variants: said, not drawn
        # 8-connectivity is not the seminar's input: Blin's code is not expected there.
        self.assertEqual(f["steps-texture-6000x4000-camera-8conn"].categories, ["gpu-tile", "gpu-opt"])

    def test_blins_code_absent_is_missing_never_zero(self):
        rep = copy.deepcopy(self.rep)
        rep["variants"] = [r for r in rep["variants"] if not r["variant"].startswith("peer:")]
        f = by_name(figures_of(rep))
        absent = "no row of Blin's code in the report (the bench reports it was built from have none)"
        for name in ("seminar-speedup", "seminar-throughput", "seminar-fps"):
            peer = of_kind(f[name], "peer")
            self.assertEqual((peer.x, peer.y), ([], []))
            self.assertEqual(set(why(peer).values()), {absent})
            self.assertTrue(peer.label.endswith(": not measured"))
        steps = f["steps-texture-6000x4000-camera-4conn"]
        self.assertEqual(steps.categories, ["gpu-tile", "gpu-opt", "peer:blin-maxtree"])
        peer = of_kind(steps, "peer")
        self.assertEqual((peer.y, why(peer)), ([], {"peer:blin-maxtree": absent}))
        svg = read(render(steps, self.dir, "r")[0])
        self.assertIn("not measured", svg)
        self.assertIn(escape("Blin's code, whole kernel: not measured"), svg.replace("&apos;", "'"))
        # Only the frame's row gone: said for that quantity alone.
        rep = copy.deepcopy(self.rep)
        rep["variants"] = [r for r in rep["variants"]
                           if not (r["variant"] == "peer:blin-maxtree" and r["dataset"] == FRAME)]
        fps = of_kind(by_name(figures_of(rep))["seminar-fps"], "peer")
        self.assertEqual(list(points(fps)), ["end to end"])
        self.assertEqual(why(fps),
                         {"kernel": "no peer:blin-maxtree 1920x1080 row (8-bit natural image, 4-conn.) in the report"})

    def test_a_stack_with_nothing_is_said(self):
        # The renderer's stacked chart: a series with no point draws no bar; an empty place says why.
        f = Figure("s", "t", "variant", "ms", chart="stacked", categories=["a", "b"])
        f.add("step 1", ["a"], [1.0])
        f.add("whole", [], [], kind="peer", missing=[Missing("b", "absent here")])
        svg = read(render(f, self.dir, "s")[0])
        self.assertIn("not measured (absent here)", svg)
        self.assertIn("whole: not measured", svg)
        self.assertEqual(svg.count(">measured</text>"), 1)  # the one empty place, once

    def test_the_seminars_transcription_alone_is_no_figure(self):
        paper = {"table": "maxtree-seminar", "source": "Blin", "rows": [{"quantity": "kernel_throughput", "value": 793}]}
        self.assertEqual(figures_of(paper), [])

    def test_drawn(self):
        for fig in figures_of(self.rep):
            paths = render(fig, self.dir, "r")
            with open(paths[2]) as fh:
                pts = json.load(fh)
            self.assertEqual([(s["x"], s["y"]) for s in pts["series"]], [(s.x, s.y) for s in fig.series])
            self.assertEqual(pts["chart"], fig.chart)


if __name__ == "__main__":
    unittest.main()
