#!/usr/bin/env python3
"""Distributed runs against the single-process result, under mpirun with CPU ranks (CTest
distributed.*, where the build has MPI).

usage: check_distributed.py --repix BIN --mpirun MPIEXEC [--ranks 1,2,3]

For every family (ecc, auto-mi, reconstruct, edt, ranklet, ami, maxtree, area-opening) and every case: `repix run FAMILY` alone and
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


# ECC cases run again by the CPU slab code in 1 MiB chunks (64 KiB / 32 KiB slabs: several
# chunks a rank, chunk edges inside every part).
CHUNKED_ECC_CASES = [
    "uniform:128x128x200:levels=300:dtype=float32:seed=11",
    "uniform:128x128x70:levels=3000:dtype=uint16:seed=12",
    "uniform:128x128x50:levels=1000000:dtype=float32:seed=13",  # most values in one chunk only
]


AUTO_MI_CASES = [
    "uniform:40x30:levels=16:dtype=uint8:seed=1",              # lags of both directions split
    "uniform:9x1:levels=4:dtype=uint8:seed=2",                 # one row: no vertical lag at all
    "uniform:3x2:levels=3:dtype=uint8:seed=3",                 # 2 + 1 lags: some ranks get none
    "uniform:21x13:levels=257:dtype=uint16:seed=4",            # uint16 labels 0..256
    "const:8x6:value=3:dtype=uint8",                           # one label: every NMI 0
]


# (marker, mask, extra options): reconstruct's cases. Files named "serpent-*" and "float-*" are
# written by the test (below).
RECONSTRUCT_CASES = [
    ("noise-mask:64x47:marker=opening:seed=1", "noise-mask:64x47:seed=1", []),
    ("noise-mask:64x47:marker=h-minus:seed=2", "noise-mask:64x47:seed=2", ["--connectivity", "4"]),
    ("tissue:40x33:coverage=50:marker=frame:seed=3", "tissue:40x33:coverage=50:seed=3", []),
    ("noise-mask:17x1:marker=opening:seed=4", "noise-mask:17x1:seed=4", []),   # one row: ranks 1, 2 idle
    ("serpent-marker.npy", "serpent-mask.npy", ["--connectivity", "4"]),     # a wave through every cut, back and forth
    ("serpent-marker.npy", "serpent-mask.npy", []),
    ("float-marker.npy", "float-mask.npy", []),                               # float32 with -0.0
    ("noise-mask:30x20:seed=5", "noise-mask:30x20:seed=5:sigma=2", ["--clip"]),
]

# (input, extra options): ranklet's cases; halos of h-1 rows above and h below (h: half the
# largest window) cut at the image's edges.
RANKLET_CASES = [
    ("uniform:40x33:levels=256:dtype=uint8:seed=1", []),                       # windows 4..32: halos past every part
    ("uniform:23x19:levels=7:dtype=uint8:seed=2", ["--windows", "8,2"]),       # ties; h = 4
    ("uniform:9x14:levels=256:dtype=uint8:seed=3", ["--windows", "2"]),        # h = 1: no halo above
    ("uniform:17x1:levels=256:dtype=uint8:seed=4", ["--windows", "16"]),       # one row: ranks 1, 2 idle
    ("const:12x10:value=255:dtype=uint8", []),                                # the padding's own value
]

# (input, extra options): ami's cases, windows shared out over the ranks; with more ranks than
# windows, each window's lags shared by a group of ranks.
AMI_CASES = [
    ("uniform:37x29:levels=256:dtype=uint8:seed=1", []),                       # 4 windows on 1, 2, 3 ranks
    ("uniform:20x18:levels=9:dtype=uint8:seed=2", ["--windows", "16,2"]),      # 2 windows on 3 ranks: groups of 2 and 1
    ("uniform:9x1:levels=256:dtype=uint8:seed=3", ["--windows", "4"]),         # one row: no vertical lag at all
    ("uniform:37x29:levels=256:dtype=uint8:seed=5", ["--windows", "8"]),       # one window, every rank its lags
]


def ami_layout(j, n, asked):
    """The ranks' windows: contiguous ranges in order; with more ranks than windows, one window a
    rank, each window's group of ranks in order, its lag parts numbered 0 .. size-1."""
    parts = j["distributed"]["parts"]
    if n <= len(asked):
        return [w for p in parts for w in p["windows"]] == asked
    seen = []
    for p in parts:
        if len(p["windows"]) != 1 or "lag_part" not in p:
            return False
        k, size = p["lag_part"]
        if k == 0:
            seen.append((p["windows"][0], size))
        if not seen or seen[-1][0] != p["windows"][0] or seen[-1][1] != size or k >= size:
            return False
    return [w for w, _ in seen] == asked and sum(size for _, size in seen) == n

EDT_CASES = [
    "uniform:64x48:levels=8:dtype=uint8:seed=1",               # background ~1 in 8
    "sparse:50x41:density=0.01:seed=2",                        # few sites: distances across every cut
    "lonely.npy",                                              # one site, in the last rank's rows
    "const:10x9:value=1:dtype=uint8",                          # no background: inf, sites -1
    "const:7x5:value=0:dtype=uint8",                           # all background
    "uniform:17x1:levels=3:dtype=uint8:seed=3",                # one row: ranks 1 and 2 idle
    "uniform:12x13:levels=4:dtype=float32:seed=4",             # float32 input
]

# (input, extra options): maxtree's and area-opening's cases (area-opening adds --area). Files
# named "comb*" are written by the test (below).
MAXTREE_CASES = [
    ("texture:64x53:name=camera", []),                                     # a natural image
    ("uniform:41x37:levels=3:dtype=uint8:seed=1", ["--connectivity", "8"]),  # plateaus winding across the cuts
    ("uniform:33x29:levels=65536:dtype=uint16:seed=2", []),                # nearly every pixel a node
    ("texture:40x31:name=grass:dtype=uint16", ["--connectivity", "8"]),
    ("uniform:17x1:levels=5:dtype=uint8:seed=3", []),                      # one row: ranks 1 and 2 idle
    ("uniform:5x2:levels=4:dtype=uint8:seed=4", []),                       # two rows: rank 2 of 3 idle
    ("const:9x7:value=200:dtype=uint8", []),                               # one node
    ("comb.npy", ["--connectivity", "4"]),                                 # teeth through every cut, joined in turn
]
AREA_OPENING_AREAS = {"texture:64x53:name=camera": ["7", "400"], "comb.npy": ["30", "10000"]}


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


def covers(parts):
    """Whether the [first, last) parts, in rank order, cover 0 .. their end once each."""
    covered = [i for f, l in parts for i in range(f, l)]
    return covered == list(range(len(covered)))


def lags_cover(parts, direction):
    """Whether the ranks' [first, last] lag ranges of `direction` cover 1 .. their end once each, in rank order."""
    covered = [lag for p in parts if p[direction] for lag in range(p[direction][0], p[direction][1] + 1)]
    return covered == list(range(1, len(covered) + 1))


def against_single_process(a, tmp, failures, family, args, outputs, ref_args=(), dist_args=(), label="",
                           layout=None, note=None):
    """`repix run FAMILY ARGS` alone (with ref_args) and under mpirun on each rank count with
    --distributed (with dist_args): every output (option -> extension) compared byte for byte, the
    --json record's rank layout checked by layout(record, ranks)."""
    ref = {o: os.path.join(tmp, f"ref-{family}-{o}{ext}") for o, ext in outputs.items()}
    r = run([a.repix, "run", family] + list(ref_args) + args + [x for o, p in ref.items() for x in (f"--{o}", p)])
    if r.returncode != 0:
        failures.append(f"{family} {label}: single process failed: {r.stderr.strip()}")
        return
    want = {o: open(p, "rb").read() for o, p in ref.items()}
    for n in a.rank_counts:
        got = {o: os.path.join(tmp, f"{family}-{n}-{o}{ext}") for o, ext in outputs.items()}
        rec = os.path.join(tmp, f"{family}-{n}.json")
        r = run(mpirun_cmd(a.mpirun, n) + [a.repix, "run", family, "--distributed"] + args + list(dist_args) +
                [x for o, p in got.items() for x in (f"--{o}", p)] + ["--json", rec])
        if r.returncode != 0:
            failures.append(f"{family} {label} on {n} ranks: exit {r.returncode}: {r.stderr.strip()}")
            continue
        differ = [o for o, p in got.items() if open(p, "rb").read() != want[o]]
        if differ:
            failures.append(f"{family} {label} on {n} ranks: --{', --'.join(differ)} differ from the single process's")
        j = json.load(open(rec))
        d = j["distributed"]
        if d["ranks"] != n or len(d["parts"]) != n or not d["mpi"] or (layout and not layout(j, n)):
            failures.append(f"{family} {label} on {n} ranks: rank layout {d}")
        print(f"ok  {family} {label} on {n} ranks{note(j) if note else ''}")


def refused_in_one_line(a, failures, label, n, args, words, code=None, out=None):
    """`mpirun -np N repix ARGS` fails with one `repix` line holding `words`, with exit `code` (any
    but 0 where None), and leaves no file at `out`."""
    r = run(mpirun_cmd(a.mpirun, n) + [a.repix] + args)
    lines = [l for l in r.stderr.splitlines() if l.startswith("repix")]
    written = bool(out) and os.path.exists(out)
    exit_ok = r.returncode != 0 if code is None else r.returncode == code
    if not exit_ok or len(lines) != 1 or words not in lines[0] or written:
        failures.append(f"{label}: exit {r.returncode}, {r.stderr!r}" + (f", output written: {written}" if out else ""))
    else:
        print(f"ok  {label} refused in one line: {lines[0]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repix", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--ranks", default="1,2,3")
    a = ap.parse_args()
    a.rank_counts = [int(r) for r in a.ranks.split(",")]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        npy = os.path.join(tmp, "volume.npy")
        r = run([a.repix, "gen", "uniform:12x11x7:levels=300:dtype=uint16:seed=9", "-o", npy])
        if r.returncode != 0:
            sys.exit(f"repix gen failed: {r.stderr}")
        for spec in ECC_CASES + [npy] + [c + "|chunked" for c in CHUNKED_ECC_CASES]:
            extra = []
            if spec.endswith("|chunked"):  # 1 MiB chunks: several per rank for the CPU slab code, on 2 threads
                spec, extra = spec[:-len("|chunked")], ["--variant", "omp", "--threads", "2", "--chunk-mib", "1"]
            against_single_process(a, tmp, failures, "ecc", ["--input", spec], {"output": ".csv"},
                                   ref_args=["--variant", "seq"], dist_args=extra, label=f"{spec} {' '.join(extra)}",
                                   layout=lambda j, n: covers([p["slabs"] for p in j["distributed"]["parts"]]),
                                   note=lambda j: f" ({len([p for p in j['distributed']['parts'] if p['slabs'][0] == p['slabs'][1]])} empty parts)")
        for spec in AUTO_MI_CASES:
            # The single process's default variant (gpu-opt where a GPU is, omp without): the
            # distributed run's per-lag NMIs are that variant's, summed in the same order.
            against_single_process(a, tmp, failures, "auto-mi", ["--input", spec], {"output": ".csv"}, label=spec,
                                   layout=lambda j, n: all(lags_cover(j["distributed"]["parts"], d)
                                                           for d in ("horizontal_lags", "vertical_lags")),
                                   note=lambda j: f" ({len([p for p in j['distributed']['parts'] if not p['horizontal_lags'] and not p['vertical_lags']])} ranks without lags)")
        # A serpentine corridor 4 pixels a column, open columns joined alternately at the top and
        # the bottom, seeded at the bottom of the first: the wave crosses every rank's cut again
        # and again. A float32 pair whose mask holds -0.0 and whose marker rises to it.
        sw, sh = 13, 12
        mask = [0] * (sw * sh)
        for x in range(0, sw, 2):
            for y in range(sh):
                mask[y * sw + x] = 200 + x
            if x + 1 < sw:
                mask[(0 if x % 4 == 0 else sh - 1) * sw + x + 1] = 250
        marker = [0] * (sw * sh)
        marker[(sh - 1) * sw] = 190
        write_npy(os.path.join(tmp, "serpent-mask.npy"), "|u1", (sh, sw), "B", mask)
        write_npy(os.path.join(tmp, "serpent-marker.npy"), "|u1", (sh, sw), "B", marker)
        fw, fh = 9, 7
        fmask = [(-0.0 if (x + y) % 5 == 0 else float((x * 7 + y * 3) % 11) - 5.0) for y in range(fh) for x in range(fw)]
        fmarker = [min(m, -6.0 if (x, y) != (4, 3) else 4.5) for (x, y), m in
                   zip([(x, y) for y in range(fh) for x in range(fw)], fmask)]
        write_npy(os.path.join(tmp, "float-mask.npy"), "<f4", (fh, fw), "f", fmask)
        write_npy(os.path.join(tmp, "float-marker.npy"), "<f4", (fh, fw), "f", fmarker)
        for marker_spec, mask_spec, extra in RECONSTRUCT_CASES:
            files = [os.path.join(tmp, s) if s.endswith(".npy") else s for s in (marker_spec, mask_spec)]
            against_single_process(a, tmp, failures, "reconstruct", ["--marker", files[0], "--mask", files[1]] + extra,
                                   {"output": ".npy"}, ref_args=["--variant", "seq"],
                                   label=f"{marker_spec} {' '.join(extra)}",
                                   layout=lambda j, n: covers([p["rows"] for p in j["distributed"]["parts"]]),
                                   note=lambda j: f" ({j['border_rounds']} border rounds)")
        # A marker above the mask in the last rank's rows: one line, the whole image's place, no output.
        above = os.path.join(tmp, "above.npy")
        write_npy(above, "|u1", (6, 4), "B", [0] * 21 + [9, 0, 0])
        zeros = os.path.join(tmp, "zeros.npy")
        write_npy(zeros, "|u1", (6, 4), "B", [0] * 24)
        out = os.path.join(tmp, "bad-rec.npy")
        refused_in_one_line(a, failures, "reconstruct marker above mask", 3,
                            ["run", "reconstruct", "--distributed", "--marker", above, "--mask", zeros, "--output", out],
                            "marker above mask at (x=1, y=5)", out=out)

        for spec, extra in RANKLET_CASES:
            # The single process's default variant; every ranklet variant gives the same float32 bits.
            against_single_process(a, tmp, failures, "ranklet", ["--input", spec] + extra, {"output": ".npy"},
                                   label=f"{spec} {' '.join(extra)}",
                                   layout=lambda j, n: covers([p["rows"] for p in j["distributed"]["parts"]]))
        for spec, extra in AMI_CASES:
            # The single process's default variant: each window's features are that variant's.
            asked = [int(w) for w in extra[1].split(",")] if extra else [4, 8, 16, 32]
            against_single_process(a, tmp, failures, "ami", ["--input", spec] + extra, {"output": ".csv"},
                                   label=f"{spec} {' '.join(extra)}",
                                   layout=lambda j, n, asked=asked: ami_layout(j, n, asked))
        # A comb: teeth of level 9 from a top bar, joined at the bottom in turn (one serpentine
        # component through every cut, down and up), level-5 plateaus between them.
        cw, ch = 41, 23
        comb = [9 if x % 4 == 0 else 5 if x % 4 == 2 else 1 for y in range(ch) for x in range(cw)]
        for x in range(cw):
            if (x // 4) % 2 == 0:
                comb[x] = 9
            if (x // 4) % 2 == 1 and x % 4 < 3 or (x // 4) % 2 == 0 and x % 4 >= 1 and x > 3:
                comb[(ch - 1) * cw + x] = 9
        write_npy(os.path.join(tmp, "comb.npy"), "|u1", (ch, cw), "B", comb)
        for spec, extra in MAXTREE_CASES:
            path = os.path.join(tmp, spec) if spec.endswith(".npy") else spec
            # seq as the single process: every variant's tree is its normal form; the ranks run the
            # default variant on their rows.
            against_single_process(a, tmp, failures, "maxtree", ["--input", path] + extra, {"output": ".npy"},
                                   ref_args=["--variant", "seq"], label=f"{spec} {' '.join(extra)}",
                                   layout=lambda j, n: covers([p["rows"] for p in j["distributed"]["parts"]]),
                                   note=lambda j: f" ({j['border_nodes']} border nodes, {j['merged_nodes']} merged)")
            for area in AREA_OPENING_AREAS.get(spec, ["25"]):
                against_single_process(a, tmp, failures, "area-opening", ["--input", path, "--area", area] + extra,
                                       {"output": ".npy"}, ref_args=["--variant", "seq"],
                                       label=f"{spec} --area {area} {' '.join(extra)}",
                                       layout=lambda j, n: covers([p["rows"] for p in j["distributed"]["parts"]]))
        # A uint16 image: one line from rank 0, exit 1, nothing written.
        out = os.path.join(tmp, "no-rk.npy")
        refused_in_one_line(a, failures, "ranklet uint16", 2, ["run", "ranklet", "--distributed", "--input",
                                                               "uniform:8x8:levels=300:dtype=uint16", "--output", out],
                            "uint8", code=1, out=out)

        lonely = [1] * (30 * 20)
        lonely[17 * 30 + 3] = 0
        write_npy(os.path.join(tmp, "lonely.npy"), "|u1", (20, 30), "B", lonely)
        for spec in EDT_CASES:
            spec_path = os.path.join(tmp, spec) if spec.endswith(".npy") else spec
            # The default variant on both sides (gpu-opt with a GPU, seq-exact's passes without):
            # distances are seq-exact's either way, sites the variant's (its ties).
            against_single_process(a, tmp, failures, "edt", ["--input", spec_path], {"output": ".npy", "sites": ".npy"},
                                   label=spec, layout=lambda j, n: covers([p["rows"] for p in j["distributed"]["parts"]]))
        # seq-exact's passes named (the CPU path on a GPU host too).
        against_single_process(a, tmp, failures, "edt", ["--input", "sparse:50x41:density=0.01:seed=2", "--variant",
                                                         "seq-exact"], {"output": ".npy", "sites": ".npy"},
                               label="sparse:50x41 --variant seq-exact",
                               layout=lambda j, n: j["variant"] == "seq-exact")
        refused_in_one_line(a, failures, "edt --variant seq (not exact)", 2,
                            ["run", "edt", "--distributed", "--variant", "seq", "--input", "sparse:20x20", "--output",
                             os.path.join(tmp, "no-edt.npy")], "exact EDT", code=2)
        # Only the distances asked (the sites are not computed then): still seq-exact's.
        lonely_path, out, ref = (os.path.join(tmp, "lonely.npy"), os.path.join(tmp, "only.npy"),
                                 os.path.join(tmp, "only-ref.npy"))
        r0 = run([a.repix, "run", "edt", "--variant", "seq-exact", "--input", lonely_path, "--output", ref])
        r = run(mpirun_cmd(a.mpirun, 2) + [a.repix, "run", "edt", "--distributed", "--input", lonely_path, "--output", out])
        if r0.returncode != 0 or r.returncode != 0 or open(out, "rb").read() != open(ref, "rb").read():
            failures.append(f"edt distances only: exit {r0.returncode}/{r.returncode}, {r0.stderr!r} {r.stderr!r}")
        else:
            print("ok  edt distances only, on 2 ranks")
        # A NaN in rank 1's rows refused with the whole image's place.
        nan_edt = os.path.join(tmp, "nan-edt.npy")
        values = [1.0] * 24
        values[13] = float("nan")  # (x=1, y=3): rank 1 of 2
        write_npy(nan_edt, "<f4", (6, 4), "f", values)
        out = os.path.join(tmp, "bad-edt.npy")
        refused_in_one_line(a, failures, "edt NaN", 2, ["run", "edt", "--distributed", "--input", nan_edt, "--output", out],
                            "NaN at x=1, y=3", out=out)
        # `repix bench --distributed`: every rank's samples, the slowest rank's as the sample.
        for family, inputs in (("reconstruct", ["--marker", "noise-mask:64x47:marker=opening:seed=1", "--mask",
                                                "noise-mask:64x47:seed=1"]),
                               ("edt", ["--input", "sparse:50x41:density=0.01:seed=2"]),
                               ("ecc", ["--input", "uniform:9x8x5:levels=50:dtype=float32:seed=3"]),
                               ("auto-mi", ["--input", "uniform:40x30:levels=16:dtype=uint8:seed=1"]),
                               ("ranklet", ["--input", "uniform:40x30:levels=256:dtype=uint8:seed=1"]),
                               ("area-opening", ["--input", "texture:50x41:name=camera", "--area", "20"])):
            report = os.path.join(tmp, f"bench-{family}.json")
            r = run(mpirun_cmd(a.mpirun, 3) + [a.repix, "bench", "--distributed", "--family", family] + inputs +
                    ["--samples", "3", "--out", report])
            ok = r.returncode == 0 and os.path.exists(report)
            if ok:
                j = json.load(open(report))
                parts = j["distributed"]["parts"]
                ok = (j["schema"] == "repix-distributed-bench" and len(j["samples_ms"]) == 3 and len(parts) == 3 and
                      all(len(p["samples_ms"]) == 3 for p in parts) and j["distributed"]["mpi"] and
                      # a sample ends at the barrier after the slowest rank: no rank's own time is longer
                      all(j["samples_ms"][i] >= max(p["samples_ms"][i] for p in parts) for i in range(3)) and
                      j["min_ms"] <= j["median_ms"] <= j["max_ms"] and "env" in j and "tool" in j)
            if not ok:
                failures.append(f"bench --distributed {family}: exit {r.returncode}, {r.stderr!r}")
            else:
                print(f"ok  bench --distributed {family}: {r.stdout.strip()}")
        refused_in_one_line(a, failures, "bench --distributed --output", 2,
                            ["bench", "--distributed", "--family", "edt", "--input", "sparse:50x41", "--output",
                             os.path.join(tmp, "no.npy")], "unknown option --output", code=2)
        # An argument error every rank meets (an output that is not .npy): one line, from rank 0.
        refused_in_one_line(a, failures, "edt --output edt.png on 3 ranks", 3,
                            ["run", "edt", "--distributed", "--input", "sparse:20x20", "--output",
                             os.path.join(tmp, "edt.png")], "usage error", code=2)
        # A label above 256: one error line, exit 1, nothing written.
        labels = os.path.join(tmp, "labels.npy")
        write_npy(labels, "<u2", (3, 4), "H", [0, 1, 2, 3, 4, 5, 300, 7, 8, 9, 10, 11])
        out = os.path.join(tmp, "bad-ami.csv")
        refused_in_one_line(a, failures, "auto-mi label above 256", 2,
                            ["run", "auto-mi", "--distributed", "--input", labels, "--output", out],
                            "label 300 at (y=1, x=2) is above 256", out=out)
        # A NaN in one rank's part: one error line (rank 0's words), exit 1, nothing written.
        bad = os.path.join(tmp, "nan.npy")
        values = [float(i) for i in range(24)]
        values[21] = float("nan")  # row 5: the last rank's part
        write_npy(bad, "<f4", (6, 4), "f", values)
        out = os.path.join(tmp, "bad.csv")
        # The place is the whole image's (row 5), not the rank's part's.
        refused_in_one_line(a, failures, "ecc NaN input", 3, ["run", "ecc", "--distributed", "--input", bad, "--output", out],
                            "NaN in the input at (x=1, y=5)", out=out)
        # A float32 image for maxtree: one line, nothing written.
        out = os.path.join(tmp, "bad-mt.npy")
        refused_in_one_line(a, failures, "maxtree float32", 2,
                            ["run", "maxtree", "--distributed", "--input", "uniform:8x8:levels=4:dtype=float32", "--output",
                             out], "uint8 or uint16", out=out)
    for f in failures:
        print("FAIL", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
