"""python3 -m repix_figures REPORT.json [--out DIR] [--stem S] | REPORT.json --only NAME --to FILE | --check

Draws every figure the report's kind defines into DIR (default: the report's folder) as
<stem>.<figure>.svg, .png and .points.json, and prints the files written; --only NAME --to FILE
draws that one figure to FILE (.svg or .png). --check draws nothing: exit 0 when matplotlib can be
imported, 3 (with the reason) when not.
"""
import argparse
import sys


def main() -> int:
    ap = argparse.ArgumentParser(prog="repix plot", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("report", nargs="?")
    ap.add_argument("--out")
    ap.add_argument("--stem", default="")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--only")
    ap.add_argument("--to")
    a = ap.parse_args()
    from .core import MatplotlibMissing, _pyplot
    try:
        _pyplot()
    except MatplotlibMissing as e:
        # --check is a probe: its reason on stdout, which the caller reads (or not).
        print(f"repix plot: {e}", file=sys.stdout if a.check else sys.stderr)
        return 3
    if a.check:
        return 0
    if not a.report:
        ap.error("a report is needed")
    import os
    from .draw import draw, draw_one
    if bool(a.only) != bool(a.to):
        ap.error("--only and --to go together")
    if a.only:
        try:
            written = draw_one(a.report, a.only, a.to)
        except (ValueError, KeyError, TypeError) as e:
            print(f"repix plot: error: {a.report}: {e.__class__.__name__}: {e}", file=sys.stderr)
            return 1
        for p in written:
            print(p)
        return 0
    out = a.out or os.path.dirname(os.path.abspath(a.report))
    try:
        written = draw(a.report, out, a.stem)
    except (ValueError, KeyError, TypeError) as e:
        print(f"repix plot: error: {a.report}: {e.__class__.__name__}: {e}", file=sys.stderr)
        return 1
    for p in written:
        print(p)
    if not written:
        print(f"repix plot: {a.report} defines no figure", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
