#!/usr/bin/env python3
"""Distributed runs against the single-process result, under mpirun with CPU ranks (CTest
distributed.*, where the build has MPI).

usage: check_distributed.py --repix BIN --mpirun MPIEXEC [--ranks 1,2,3]

For every family with a distributed run (ecc, auto-mi) and every case: `repix run FAMILY` alone and
`mpirun -np N repix run FAMILY --distributed` for each N, outputs compared byte for byte; the
--json record's rank layout checked; uneven splits, ranks with an empty part, every dtype, 2-D
and 3-D, generated and file inputs. A bad input is one error line from mpirun, exit 1 and no
output file.
"""

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

ECC_CASES = [
    "uniform:64x48:levels=16:dtype=uint8:seed=1",              # 2-D uint8, rows split
    "uniform:33x7x5:levels=1000:dtype=uint16:seed=2",          # 3-D uint16, 5 planes: 2+2+1 on 3 ranks
    "uniform:9x8x2:levels=50:dtype=float32:seed=3",            # 2 planes: rank 2 of 3 gets none
    "grf:48x40:alpha=3:seed=4",                                # float32, ties-free smooth field
    "uniform:17x1:levels=5:dtype=uint8:seed=5",                # one row: ranks 1 and 2 get none
    "const:6x5x4:value=7:dtype=uint16",                        # one value everywhere
    "checker:10x10x3:period=2:dtype=uint8",                    # plateaus across the cuts
]


AUTO_MI_CASES = [
    "uniform:40x30:levels=16:dtype=uint8:seed=1",              # lags of both directions split
    "uniform:9x1:levels=4:dtype=uint8:seed=2",                 # one row: no vertical lag at all
    "uniform:3x2:levels=3:dtype=uint8:seed=3",                 # 2 + 1 lags: some ranks get none
    "uniform:21x13:levels=257:dtype=uint16:seed=4",            # uint16 labels 0..256
    "const:8x6:value=3:dtype=uint8",                           # one label: every NMI 0
]


def write_npy(path, descr, shape, code, values):
    """A version 1.0 .npy of `values` (struct code `code`, little-endian) without NumPy."""
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"
    header += " " * (63 - len(header)) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
        f.write(struct.pack(f"<{len(values)}{code}", *values))


def mpirun_cmd(mpirun, n):
    cmd = [mpirun, "-np", str(n), "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd


def run(cmd, **kw):
    env = dict(os.environ, OMP_NUM_THREADS="1", OMPI_MCA_btl_vader_single_copy_mechanism="none")
    return subprocess.run(cmd, capture_output=True, text=True, env=env, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repix", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--ranks", default="1,2,3")
    a = ap.parse_args()
    ranks = [int(r) for r in a.ranks.split(",")]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        npy = os.path.join(tmp, "volume.npy")
        r = run([a.repix, "gen", "uniform:12x11x7:levels=300:dtype=uint16:seed=9", "-o", npy])
        if r.returncode != 0:
            sys.exit(f"repix gen failed: {r.stderr}")
        for spec in ECC_CASES + [npy]:
            ref = os.path.join(tmp, "ref.csv")
            r = run([a.repix, "run", "ecc", "--variant", "seq", "--input", spec, "--output", ref])
            if r.returncode != 0:
                failures.append(f"{spec}: single process failed: {r.stderr.strip()}")
                continue
            want = open(ref).read()
            for n in ranks:
                out, rec = os.path.join(tmp, f"d{n}.csv"), os.path.join(tmp, f"d{n}.json")
                r = run(mpirun_cmd(a.mpirun, n) + [a.repix, "run", "ecc", "--distributed", "--input", spec,
                                                   "--output", out, "--json", rec])
                if r.returncode != 0:
                    failures.append(f"{spec} on {n} ranks: exit {r.returncode}: {r.stderr.strip()}")
                    continue
                if open(out).read() != want:
                    failures.append(f"{spec} on {n} ranks: the curve differs from the single process's")
                j = json.load(open(rec))
                d = j["distributed"]
                parts = [p["slabs"] for p in d["parts"]]
                covered = [s for f, l in parts for s in range(f, l)]
                if d["ranks"] != n or len(parts) != n or covered != sorted(set(covered)) or not d["mpi"]:
                    failures.append(f"{spec} on {n} ranks: rank layout {d}")
                print(f"ok  ecc {spec} on {n} ranks ({len([p for p in parts if p[0] == p[1]])} empty parts)")
        for spec in AUTO_MI_CASES:
            ref = os.path.join(tmp, "ref-ami.csv")
            r = run([a.repix, "run", "auto-mi", "--variant", "seq", "--input", spec, "--output", ref])
            if r.returncode != 0:
                failures.append(f"auto-mi {spec}: single process failed: {r.stderr.strip()}")
                continue
            want = open(ref).read()
            for n in ranks:
                out, rec = os.path.join(tmp, f"a{n}.csv"), os.path.join(tmp, f"a{n}.json")
                r = run(mpirun_cmd(a.mpirun, n) + [a.repix, "run", "auto-mi", "--distributed", "--input", spec,
                                                   "--output", out, "--json", rec])
                if r.returncode != 0:
                    failures.append(f"auto-mi {spec} on {n} ranks: exit {r.returncode}: {r.stderr.strip()}")
                    continue
                if open(out).read() != want:
                    failures.append(f"auto-mi {spec} on {n} ranks: the features differ from the single process's")
                d = json.load(open(rec))["distributed"]
                ok = d["ranks"] == n and len(d["parts"]) == n and d["mpi"]
                for direction in ("horizontal_lags", "vertical_lags"):
                    covered = [lag for p in d["parts"] if p[direction] for lag in range(p[direction][0], p[direction][1] + 1)]
                    ok = ok and covered == list(range(1, len(covered) + 1))  # every lag once, in rank order
                if not ok:
                    failures.append(f"auto-mi {spec} on {n} ranks: rank layout {d}")
                idle = len([p for p in d["parts"] if not p["horizontal_lags"] and not p["vertical_lags"]])
                print(f"ok  auto-mi {spec} on {n} ranks ({idle} ranks without lags)")
        # A label above 256: one error line, exit 1, nothing written.
        labels = os.path.join(tmp, "labels.npy")
        write_npy(labels, "<u2", (3, 4), "H", [0, 1, 2, 3, 4, 5, 300, 7, 8, 9, 10, 11])
        out = os.path.join(tmp, "bad-ami.csv")
        r = run(mpirun_cmd(a.mpirun, 2) + [a.repix, "run", "auto-mi", "--distributed", "--input", labels, "--output", out])
        lines = [l for l in r.stderr.splitlines() if l.startswith("repix")]
        if r.returncode == 0 or len(lines) != 1 or "label 300 at (y=1, x=2) is above 256" not in lines[0] or os.path.exists(out):
            failures.append(f"auto-mi bad label: exit {r.returncode}, stderr {r.stderr!r}, output written: {os.path.exists(out)}")
        else:
            print(f"ok  auto-mi label above 256 refused in one line: {lines[0]}")
        # A NaN in one rank's part: one error line (rank 0's words), exit 1, nothing written.
        bad = os.path.join(tmp, "nan.npy")
        values = [float(i) for i in range(24)]
        values[21] = float("nan")  # row 5: the last rank's part
        write_npy(bad, "<f4", (6, 4), "f", values)
        out = os.path.join(tmp, "bad.csv")
        r = run(mpirun_cmd(a.mpirun, 3) + [a.repix, "run", "ecc", "--distributed", "--input", bad, "--output", out])
        lines = [l for l in r.stderr.splitlines() if l.startswith("repix")]
        # The place is the whole image's (row 5), not the rank's part's.
        if r.returncode == 0 or len(lines) != 1 or "NaN in the input at (x=1, y=5)" not in lines[0] or os.path.exists(out):
            failures.append(f"NaN input: exit {r.returncode}, stderr {r.stderr!r}, output written: {os.path.exists(out)}")
        else:
            print(f"ok  NaN input refused in one line: {lines[0]}")
    # A family without a distributed run says so (without mpirun: before any MPI call).
    r = run([a.repix, "run", "maxtree", "--distributed", "--input", "uniform:8x8:levels=4:dtype=uint8:seed=1"])
    if r.returncode != 1 or "maxtree has no distributed run yet" not in r.stderr or "runs: ecc" not in r.stderr:
        failures.append(f"maxtree --distributed: exit {r.returncode}, {r.stderr!r}")
    else:
        print("ok  maxtree --distributed refused:", r.stderr.strip())
    for f in failures:
        print("FAIL", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
