"""The Euler characteristic curve of a `repix run ecc --json` record: the input's distinct values
on x (ascending), the Euler characteristic of the sublevel set {f <= value} on y."""
from . import record
from ..core import Figure, number


@record
def ecc_curve(rec):
    if rec.get("family") != "ecc" or not isinstance(rec.get("values"), list) or not isinstance(rec.get("ecc"), list):
        return []
    values = [number(v) for v in rec["values"]]
    ecc = [number(v) for v in rec["ecc"]]
    if len(values) != len(ecc) or any(v is None for v in values + ecc):
        raise ValueError("the record's values and ecc are not two lists of numbers of one length")
    fig = Figure(name="curve", title=f"Euler characteristic curve of {rec.get('input', '?')} ({rec.get('variant', '?')})",
                 xlabel="value t (sublevel set {f <= t})", ylabel="Euler characteristic")
    fig.add("ECC", values, ecc, steps=True)
    return [fig]
