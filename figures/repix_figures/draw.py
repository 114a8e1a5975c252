"""From a report to its figures: which kinds apply, then the renderer."""
from __future__ import annotations

import json
import os
from typing import List

from . import kinds
from .core import Figure, render


def _source(report: dict, path: str) -> str:
    tool = report.get("tool")
    if not isinstance(tool, dict):  # a run record names no commit or machine
        return os.path.basename(path)
    sha = str(tool.get("git_sha") or "unknown")[:12]
    gpu = report.get("gpu") or ((report.get("env") or {}).get("gpu") or {}).get("name") or "no GPU"
    return f"{os.path.basename(path)}: repix {sha} on {gpu}"


def figures_of(report: dict) -> List[Figure]:
    """Every figure the report's kind defines (no drawing): a table's, a bench report's (an
    experiment's merged rows) and the tables inside an experiment's steps, or a run record's."""
    figs: List[Figure] = []
    tid = report.get("table")
    if isinstance(tid, str) and tid in kinds.TABLES:
        figs += kinds.TABLES[tid](report)
    if isinstance(report.get("results"), list) and report["results"]:
        for fn in kinds.BENCH:
            figs += fn(report)
    for step in report.get("steps") or []:
        t = step.get("table") if isinstance(step, dict) else None
        if isinstance(t, dict) and t.get("table") in kinds.TABLES and t is not report:
            if t.get("table") == tid:
                continue  # an experiment of one table is that table's report: drawn above
            for f in kinds.TABLES[t["table"]](t):
                f.name = f"{step.get('label', t['table'])}.{f.name}"
                figs.append(f)
    if "family" in report and "variant" in report and "results" not in report:
        for fn in kinds.RECORDS:
            figs += fn(report)
    names = [f.name for f in figs]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"two figures named {sorted(dup)}")
    return figs


def read_report(path: str) -> dict:
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise SystemExit(f"repix plot: error: {path}: no such report")
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise SystemExit(f"repix plot: error: {path} is not a JSON report ({e})")


def draw(path: str, out_dir: str, stem: str = "") -> List[str]:
    """Draws every figure of the report at `path` into out_dir; returns the files written."""
    report = read_report(path)
    if not isinstance(report, dict):
        raise SystemExit(f"repix plot: error: {path} is not a repix report (a JSON object)")
    stem = stem or os.path.splitext(os.path.basename(path))[0]
    src = _source(report, path)
    written: List[str] = []
    os.makedirs(out_dir, exist_ok=True)
    for fig in figures_of(report):
        fig.source = src
        written += render(fig, out_dir, stem)
    return written


def draw_one(path: str, name: str, to: str) -> List[str]:
    """The report's figure `name` to exactly `to` (.svg or .png), its points beside it as
    <to without extension>.points.json. Returns the two paths."""
    import shutil
    import tempfile
    ext = os.path.splitext(to)[1].lower()
    if ext not in (".svg", ".png"):
        raise SystemExit(f"repix plot: error: {to}: a figure is written as .svg or .png")
    report = read_report(path)
    figs = {f.name: f for f in figures_of(report)}
    if name not in figs:
        raise SystemExit(f"repix plot: error: {path} has no figure '{name}' (it has: {', '.join(figs) or 'none'})")
    fig = figs[name]
    fig.source = _source(report, path)
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(to))) as tmp:
        written = render(fig, tmp, "f")
        picture = next(w for w in written if w.endswith(ext))
        points = next(w for w in written if w.endswith(".points.json"))
        points_to = os.path.splitext(to)[0] + ".points.json"
        shutil.move(points, points_to)
        shutil.move(picture, to)
    return [to, points_to]
