"""Which figures a report defines.

A table's figures are keyed by its id (`@table("iwpp-fig10")`); a bench report's by what its rows
hold (`@bench`: the ablation ladders, the roofline, the scaling studies); `repix run`'s ECC record
by its values and curve (`@record`). Each module of this package declares its own; importing them
here registers them.
"""
TABLES = {}    # table id -> function(report) -> [Figure]
BENCH = []     # functions(report) -> [Figure] for reports with "results" rows
RECORDS = []   # functions(record) -> [Figure] for `repix run ... --json` records


def table(*ids):
    def register(fn):
        for i in ids:
            if i in TABLES:
                raise ValueError(f"table {i} has two figure functions")
            TABLES[i] = fn
        return fn
    return register


def bench(fn):
    BENCH.append(fn)
    return fn


def record(fn):
    RECORDS.append(fn)
    return fn


from . import ladder, roofline, scaling, curve  # noqa: E402,F401  (registers them)
from . import ecc_tables, iwpp_tables, ami_tables, maxtree_tables  # noqa: E402,F401
