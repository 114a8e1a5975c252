"""What the bench-report kinds share: the rows that ran, grouped, in the report's order (the
order `repix bench` runs variants in: the registry's, so a family's ladder reads left to right)."""
from collections import OrderedDict

from ..core import number


def ran_rows(report):
    for r in report.get("results") or []:
        if isinstance(r, dict) and number(r.get("median_ms")) and not r.get("not_run"):
            yield r


def grouped(report, key):
    """OrderedDict key(row) -> [rows], in first-appearance order."""
    out = OrderedDict()
    for r in ran_rows(report):
        out.setdefault(key(r), []).append(r)
    return out


def ordered_unique(values):
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def slug(*parts):
    s = "-".join(str(p) for p in parts if p)
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in s).strip("-")


def short_dataset(spec: str) -> str:
    """uniform:8192x8192:levels=256:dtype=float32:seed=1 -> uniform 8192x8192 float32 (seeds and
    levels left out: the legend names the input, the report holds the spec)."""
    parts = spec.split(":")
    keep = [parts[0]] + [p for p in parts[1:] if "=" not in p]
    keep += [p.split("=", 1)[1] for p in parts[1:] if p.startswith(("dtype=", "name=", "coverage="))]
    return " ".join(keep)


def dataset_labels(specs):
    """short_dataset of each spec, the whole spec where two short forms would be the same."""
    short = [short_dataset(s) for s in specs]
    return {s: (sh if short.count(sh) == 1 else s) for s, sh in zip(specs, short)}
