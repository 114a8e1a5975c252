#!/usr/bin/env bash
# The second hostile round of our own (issue 38): probes of repix's command line as a careless or
# hostile user would drive it. Each probe is a shell fragment run with `$R` (the repix binary) in
# a fresh folder, and the exit status it must give; every failure must be one line on stderr,
# never an internal error or a signal, and leave no temporary (.repix-*) or journal behind.
#   tests/hostile/round2.sh PATH/TO/repix        (CTest runs it: hostile.round2)
# Prints one line a failing probe and the totals; exits 1 when any probe fails.
set -uo pipefail
R=${1:?usage: round2.sh PATH/TO/repix}
R=$(cd "$(dirname "$R")" && pwd)/$(basename "$R")
export R
top=$(mktemp -d "${TMPDIR:-/tmp}/repix-hostile2-XXXXXX")
trap 'rm -rf "$top"' EXIT
export TMPDIR="$top/tmp"
mkdir -p "$TMPDIR"
base="$top/base"
mkdir -p "$base"
( cd "$base" &&
  "$R" gen uniform:24x17:levels=5:dtype=uint8:seed=3 -o in.npy &&
  "$R" gen uniform:24x17:levels=5:dtype=uint16:seed=3 -o in16.npy &&
  "$R" gen grf:16x16:alpha=3:seed=1 -o f.npy &&
  "$R" bench --family ecc --variants seq --dataset uniform:16x16:levels=3 --samples 2 --out rep.json > /dev/null 2>&1 ) ||
  { echo "round2: cannot make the inputs" >&2; exit 1; }

total=0 failed=0
# probe EXPECTED_EXIT 'shell fragment'
probe() {
  local want=$1 cmd=$2 dir="$top/p$total"
  total=$((total + 1))
  rm -rf "$dir" && cp -r "$base" "$dir"
  local err out code
  (cd "$dir" && timeout 120 bash -c "$cmd" > "$top/out.txt" 2> "$top/err.txt")
  code=$?
  err=$(cat "$top/err.txt")
  local why="" errors
  # A failure says so in one line, the last: "repix: error: ..." or "repix: usage error: ...". Lines
  # before it are the run's progress (bench) or OpenMP's own warning about its environment.
  errors=$(grep -c '^repix: \(usage \)\?error:' "$top/err.txt")
  if [ "$code" -ne "$want" ]; then why="exit $code, want $want"
  elif [ "$want" -ne 0 ] && { [ "$errors" -ne 1 ] || ! tail -n 1 "$top/err.txt" | grep -q '^repix: \(usage \)\?error:'; }; then
    why="not one error line, last"
  fi
  grep -q "internal error" "$top/err.txt" && why="internal error"
  [ "$code" -gt 128 ] && why="signal $((code - 128))"
  if [ -z "$why" ]; then
    local left
    left=$(cd "$dir" && find . -name '.repix-*' -o -name '*.partial.jsonl' | head -3)
    [ -n "$left" ] && why="left behind: $left"
    left=$(ls -A "$TMPDIR" | head -3)
    [ -n "$left" ] && why="left in TMPDIR: $left" && rm -rf "${TMPDIR:?}"/*
  fi
  if [ -n "$why" ]; then
    failed=$((failed + 1))
    echo "FAIL [$why] $cmd :: $(head -c 300 "$top/err.txt" | tr '\n' '|')"
  fi
  rm -rf "$dir"
}

# ---- names of any bytes ------------------------------------------------------------------------
probe 0 '$R run ecc --variant seq --input in.npy --output $'"'"'c\xff.csv'"'"' --json $'"'"'j\xfe.json'"'"''
probe 0 '$R run maxtree --variant seq --input in.npy --output $'"'"'p\x01q.npy'"'"' --json $'"'"'n\nl.json'"'"''
probe 0 'cp in.npy $'"'"'\xc0\xaf.npy'"'"' && $R run edt --input $'"'"'\xc0\xaf.npy'"'"' --output d.npy --json d.json && grep -q xc0 d.json'
probe 0 '$R gen uniform:8x8 -o $'"'"'g\xff.npy'"'"''
probe 0 '$R bench --family ecc --variants seq --dataset uniform:8x8 --samples 1 --out $'"'"'r\xff.json'"'"' > /dev/null'
probe 0 '$R table ecc-1 --quick --out-dir $'"'"'t\xff'"'"' > /dev/null'
probe 0 'cp in.npy "sp ace.npy" && $R run ecc --variant seq --input "sp ace.npy" --output "o p.csv"'
probe 0 'cp in.npy "caf$(printf "\xc3\xa9").npy" && $R run ecc --variant seq --input "caf$(printf "\xc3\xa9").npy" --output o.csv'
probe 0 '$R run ecc --variant seq --input in.npy --output ./-dash.csv'
probe 0 "\$R run ecc --variant seq --input in.npy --output $(printf 'x%.0s' {1..250}).csv"
probe 1 '$R run ecc --variant seq --input $'"'"'no\nsuch\xff.npy'"'"' --output o.csv'
probe 1 "\$R run ecc --variant seq --input in.npy --output $(printf 'x%.0s' {1..300}).csv"
# ---- the stopping rule's options ---------------------------------------------------------------
for v in nan inf -1 1e400 101 0x10 '' ' 1'; do probe 2 "\$R bench --family ecc --variants seq --dataset uniform:8x8 --max-noise '$v'"; done
for v in -1 nan 1e9 abc; do probe 2 "\$R bench --family ecc --variants seq --dataset uniform:8x8 --max-time '$v'"; done
for v in -1 100001 1.5 2e3; do probe 2 "\$R bench --family ecc --variants seq --dataset uniform:8x8 --min-samples '$v'"; done
for v in 0 100001 -3; do probe 2 "\$R bench --family ecc --variants seq --dataset uniform:8x8 --max-samples '$v'"; done
probe 2 '$R bench --family ecc --variants seq --dataset uniform:8x8 --min-samples 9 --max-samples 3'
probe 2 '$R bench --family ecc --variants seq --dataset uniform:8x8 --warmup 1001'
probe 2 '$R bench --family ecc --variants seq --dataset uniform:8x8 --samples 0'
probe 2 '$R bench --family ecc --variants seq --dataset uniform:8x8 --plan=2'
probe 0 '$R bench --family ecc --variants seq --dataset uniform:8x8 --max-samples 2 --min-time 0 --max-noise 0 --out r.json > /dev/null'
probe 0 '$R bench --family ecc --variants seq --dataset uniform:8x8 --plan | grep -q "ecc/seq/"'
# ---- Google Benchmark's flags ------------------------------------------------------------------
probe 2 '$R bench --family ecc --variants seq --dataset uniform:8x8 --benchmark_out=in.npy'
probe 2 '$R bench --family ecc --variants seq --dataset uniform:8x8 --benchmark_list_tests'
probe 2 '$R bench --family ecc --variants seq --dataset uniform:8x8 --benchmark_filter'
probe 2 '$R bench --family ecc --variants seq --dataset uniform:8x8 --benchmark_filter='
probe 2 '$R bench --family ecc --variants seq --dataset uniform:8x8 --benchmark_filter="[" --out r.json'
probe 2 '$R bench --family ecc --variants seq --dataset uniform:8x8 --benchmark_filter=a --benchmark_filter=b'
probe 1 '$R bench --family ecc --variants seq --dataset uniform:8x8 --benchmark_filter=zzz --out r.json'
probe 2 '$R run ecc --variant seq --input in.npy --output o.csv --benchmark_filter=x'
# ---- family options ----------------------------------------------------------------------------
for o in "--threads -1" "--threads 99999999" "--threads ''" "--chunk-mib -1" "--streams abc" "--timeline=maybe"; do
  probe 2 "\$R run ecc --variant seq --input in.npy --output o.csv $o"; done
for o in "--area 0" "--area -1" "--area 1e20" "--area ''" "--connectivity 6" "--tile -5"; do
  probe 2 "\$R run area-opening --variant seq --input in.npy --output o.npy $o"; done
probe 2 '$R run area-opening --variant seq --input in.npy --output o.npy'
for o in "--windows 3" "--windows 64" "--windows 2,2" "--windows ''" "--block 0" "--block 33"; do
  probe 2 "\$R run ranklet --variant seq --input in.npy --output o.npy $o"; done
probe 2 '$R run reconstruct --variant seq --marker in.npy --mask in.npy --output o.npy --connectivity 5'
probe 2 '$R run reconstruct --variant seq --marker in.npy --mask in.npy --output o.npy --raster-scans x'
probe 2 '$R run edt --variant seq --input in.npy --output o.npy --queue-capacity -1'
probe 2 '$R run auto-mi --variant seq --input in.npy --output o.csv --flush-level 49153'
# ---- dataset specs -----------------------------------------------------------------------------
for s in uniform:0x0 uniform:-1x5 uniform:5x5x5x5 uniform:8x8:levels=0 uniform:8x8:levels=1e9 \
         uniform:8x8:dtype=int8 uniform:8x8:seed=-1 uniform:8x8:bogus=1 const:8x8:value=nan const:8x8:value=300 \
         const:8x8:value=-1 const:8x8:value=1e39:dtype=float32 texture:8x8:name=nope grf:8x8:alpha=nan notakind:8x8 \
         file:missing.npy file:. 'uniform:8x8:levels=4:levels=5' ''; do
  probe 1 "\$R gen '$s' -o g.npy"; done
probe 0 '$R gen uniform:1x1 -o g.npy'
probe 0 '$R gen uniform:5 -o g.npy'
probe 0 '$R gen const:8x8:value=3e38:dtype=float32 -o g.npy'
probe 1 '$R gen uniform:99999999x99999999 -o g.npy'
probe 1 ': > empty.npy && $R run ecc --variant seq --input empty.npy --output o.csv'
probe 1 'printf "\x93NUMPY" > m.npy && $R run ecc --variant seq --input m.npy --output o.csv'
probe 1 'printf "\x93NUMPY\x09\x00" > m.npy && $R run ecc --variant seq --input m.npy --output o.csv'
probe 1 'head -c 100 in.npy > t.npy && $R run ecc --variant seq --input t.npy --output o.csv'
probe 1 'mkdir d.npy && $R run ecc --variant seq --input d.npy --output o.csv'
probe 1 '$R run ecc --variant seq --input file:x.raw --output o.csv'
probe 0 'mkfifo p.npy && { $R run ecc --variant seq --input p.npy --output o.csv & cat in.npy > p.npy; wait $!; }'
probe 0 '$R run ecc --variant seq --input /dev/stdin --output o.csv < in.npy'
probe 1 '$R run ecc --variant seq --input /dev/stdin --output o.csv < /dev/null'
probe 1 '$R run ranklet --variant seq --input in16.npy --output o.npy'
probe 1 '$R run ecc --variant seq --input f.npy --output o.csv --threads 1 < /dev/null && $R run auto-mi --variant seq --input f.npy --output o.csv'
# ---- outputs -----------------------------------------------------------------------------------
probe 2 '$R run ecc --variant seq --input in.npy --output in.npy'
probe 2 '$R run ecc --variant seq --input in.npy --output o.csv --json o.csv'
probe 2 '$R run ecc --variant seq --input in.npy --output o.npy'
probe 2 'ln -s in.npy l.csv && $R run edt --input in.npy --output l.csv'
probe 1 'mkdir o.csv && $R run ecc --variant seq --input in.npy --output o.csv'
probe 1 '$R run ecc --variant seq --input in.npy --output nodir/o.csv'
probe 2 '$R bench --family ecc --variants seq --dataset uniform:8x8 --out -'
probe 1 'mkdir r.json && $R bench --family ecc --variants seq --dataset uniform:8x8 --out r.json'
probe 1 ': > f && $R table ecc-1 --quick --out-dir f'
probe 1 ': > f && $R table iwpp-fig10 --sizes small --threads 1 --out f'
probe 2 '$R table ecc-1 --quick --out a --out-dir b'
probe 1 'echo "{" > bad.json && $R table ecc-1 --quick --paper bad.json --out-dir t; r=$?; [ ! -e t ] && exit $r'
probe 1 'echo "{\"table\":\"ecc-2\"}" > p.json && $R table ecc-1 --quick --paper p.json --out-dir t; r=$?; [ ! -e t ] && exit $r'
probe 1 '$R run ecc --variant seq --input in.npy --output /dev/full'
# ---- standard output ---------------------------------------------------------------------------
for c in "list" "list variants" "help" "help bench" "compare rep.json rep.json" "run ecc --variant seq --input in.npy --output -" \
         "gen uniform:8x8 -o -" "bench --family ecc --variants seq --dataset uniform:8x8 --samples 1 --out r.json" \
         "table ecc-1 --quick --out-dir t" "bench --suite quick --plan"; do
  probe 1 "\$R $c > /dev/full"
  probe 1 "\$R $c >&-"
done
probe 0 '$R run ecc --variant seq --input in.npy --output o.csv >&-'
# ---- grammar and names -------------------------------------------------------------------------
probe 2 '$R'
probe 2 '$R frobnicate'
probe 2 '$R list families variants'
probe 2 '$R list nonsense'
probe 2 '$R list --bogus 1'
probe 2 '$R run'
probe 2 '$R run nosuch'
probe 2 '$R run ecc --variant nosuch --input in.npy --output o.csv'
probe 2 '$R run ecc seq --input in.npy --output o.csv'
probe 2 '$R run ecc --variant seq --variant omp --input in.npy --output o.csv'
probe 2 '$R run ecc --variant seq --input in.npy --output'
probe 2 '$R bench --family nosuch'
probe 2 '$R bench --suite nosuch'
probe 2 '$R bench --family ecc --variants nosuch --dataset uniform:8x8'
probe 2 '$R bench --family ecc --suite quick --dataset uniform:8x8'
probe 2 '$R bench --family ecc --dataset uniform:8x8 --scopes disk'
probe 2 '$R bench --family edt --dataset uniform:8x8 --connectivity 8'
probe 2 '$R table nosuch'
probe 2 '$R profile ecc --variant seq --dataset uniform:8x8 --iterations 0'
probe 2 '$R profile ecc --variant seq --dataset uniform:8x8 --scope warp'
probe 2 '$R help nosuch'
probe 2 '$R help run ecc extra'
probe 2 '$R gen uniform:8x8'
probe 2 '$R compare rep.json'
# ---- environment ------------------------------------------------------------------------------
for v in 0 abc 4,0 -1 " , " 1e3 99999999; do probe 2 "OMP_NUM_THREADS='$v' \$R list families"; done
probe 0 'OMP_NUM_THREADS=1 $R run ecc --variant omp --input in.npy --output o.csv'
probe 0 'OMP_NUM_THREADS="" $R list families > /dev/null'
# Under an address-space limit the threads' stacks are checked before any work (not libgomp's abort).
probe 1 'ulimit -v 400000 && OMP_NUM_THREADS=64 OMP_STACKSIZE=64M $R run maxtree --variant omp --input in.npy --output o.npy'
probe 0 'ulimit -v 4000000 && OMP_NUM_THREADS=2 $R run maxtree --variant omp --input in.npy --output o.npy'
# ---- journals and reports ----------------------------------------------------------------------
probe 1 '$R bench --from missing.partial.jsonl --out r.json'
probe 1 '$R bench --from rep.json --out r.json'
probe 1 'echo "{\"repix_journal\":1,\"kind\":\"table\",\"id\":\"ecc-2\"}" > j.jsonl && $R bench --from j.jsonl --out r.json'
probe 1 'echo "{\"repix_journal\":99,\"kind\":\"bench\"}" > j.jsonl && $R bench --from j.jsonl --out r.json'
probe 2 'echo "{\"repix_journal\":1,\"kind\":\"bench\",\"id\":\"bench\"}" > j.jsonl && $R bench --from j.jsonl --out j.jsonl'
probe 1 '$R compare missing.json rep.json'
probe 1 'echo "[]" > x.json && $R compare x.json rep.json'
probe 1 'sed "s/\"schema_version\": 1/\"schema_version\": 2/" rep.json > x.json && $R compare x.json rep.json'
probe 1 'sed "s/\"median_ms\": [0-9.e-]*/\"median_ms\": -3/" rep.json > x.json && $R compare x.json rep.json'
probe 1 'sed "s/\"median_ms\": [0-9.e-]*/\"median_ms\": 1e300/" rep.json > x.json && $R compare x.json rep.json'
probe 0 '$R compare rep.json rep.json > /dev/null'
probe 1 'REPIX_TEST_KILL_AFTER_RECORDS=1 $R bench --family ecc --variants seq --dataset uniform:8x8 --samples 1 --out r.json; sed -i "s/\"samples_ms\":\[[^]]*\]/\"samples_ms\":[-5]/" r.json.partial.jsonl; $R bench --from r.json.partial.jsonl --out r2.json; r=$?; rm -f r.json.partial.jsonl; exit $r'

echo "round2: $((total - failed)) of $total probes pass, $failed fail"
[ "$failed" -eq 0 ]
