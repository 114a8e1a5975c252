"""Small reports in the shapes repix writes (docs/report-format.md), for the figure tests."""


def row(family, variant, dataset, median_ms, scope="kernel", **extra):
    r = {"family": family, "variant": variant, "dataset": dataset, "scope": scope, "median_ms": median_ms,
         "samples_ms": [median_ms], "q1_ms": median_ms, "q3_ms": median_ms, "min_ms": median_ms, "items": 1.0,
         "unit": "GVox/s", "throughput": 1.0 / median_ms if median_ms else 0.0, "pct_of_bound": None, "bound": "", "verified": True,
         "verification": "exact", "errors": {}, "extra": {}}
    r.update(extra)
    return r


def bench_report(results, bounds=None, gpu="Test GPU"):
    return {"schema_version": 1, "tool": {"name": "repix", "git_sha": "0123456789abcdef0123", "git_dirty": False},
            "command": "repix bench ...", "env": {"gpu": {"available": True, "name": gpu}}, "datasets": [],
            "bounds": bounds or [], "results": results}
