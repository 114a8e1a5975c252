"""repix's figures, drawn from its JSON reports only (so any figure can be redrawn without
measuring again). `python3 -m repix_figures REPORT.json [--out DIR]`, or `repix plot`.
"""
from .draw import figures_of, draw  # noqa: F401
