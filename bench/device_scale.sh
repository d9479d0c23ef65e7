#!/usr/bin/env bash
# The scaling bench (parsimonia bench --workers) on the lent 16-core machine (../shared/device/README.md).
# Prepare here first: EXTRA_WHEELS="openskill" bash ../shared/device/prepare.sh  (wheels, redis-server into .dev/)
# Dry run here:       OUT=/tmp/devout bash bench/device_scale.sh 1      (uses the project's .venv)
# On the machine:     one `run` call, carry [".dev"], timeout_s 540, command
#                     OUT=$OUT bash bench/device_scale.sh 1,2,4,8,12
# Stages (STAGES, default "probe free aligned"), each writing under $OUT:
#   probe:   bench/fsync_streams.py, the disk alone: 1-12 processes each fsyncing its own log, free or aligned
#            (fsync-streams.txt/.json)
#   free:    the sweep as shipped, one process first (scale.txt/.json)
#   aligned: the same sizes from 2 workers on, rounds aligned (PARSIMONIA_JOURNAL_ROUNDS; scale-aligned.*)
#   write:   the same with --sync write (scale-write.*)
# No matplotlib there: plot here from the JSON with
#   .venv/bin/python -c 'import json; from bench.scale import plot; plot(json.load(open("scale.json")), "scale.png")'
# Knobs: RATES (bids/s per worker, rising; default 2000), TABLES (per worker, 100), WARMUP (2), DURATION (4),
# LIMIT (seconds for each sweep, 300).
set -u
R="$(cd "$(dirname "$0")/.." && pwd)"; D="$R/.dev"
OUT=${OUT:-/tmp/devout}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
[ -d "$D/whl" ] || { echo "no $D/whl: run ../shared/device/prepare.sh from the project's root first"; exit 3; }
PY=python3
if python3 -c 'import sys; sys.exit(sys.version_info[:2] == (3, 12))' && [ -x "$R/.venv/bin/python" ]; then
  PY="$R/.venv/bin/python"   # a dry run here: the project's own venv (with its bench and cluster extras)
else
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    "$D"/whl/*.whl > "$OUT/pip.txt" 2>&1 || { tail -5 "$OUT/pip.txt"; exit 3; }
  export PYTHONPATH=$R:/tmp/site
  mkdir -p /tmp/site/parsimonia-0.1.0.dist-info   # what an install would say of the project (as .dev/run.sh does)
  printf 'Metadata-Version: 2.1\nName: parsimonia\nVersion: 0.1.0\n' > /tmp/site/parsimonia-0.1.0.dist-info/METADATA
fi
mkdir -p "$D/bin"
chmod +x "$D/redis/"*; ln -sf "$D/redis/redis-server" "$D/bin/redis-server"
export PATH=$D/bin:$PATH
redis-server --version >/dev/null 2>&1 || export LD_LIBRARY_PATH=$D/redis/lib
{ nproc; $PY --version; redis-server --version; df -hT "${TMPDIR:-/tmp}" | tail -1; } | tee "$OUT/env.txt"
W=${1:-1,2,4,8,12}
bench() {  # $1: name under $OUT, $2: worker counts, then extra options
  local name=$1 workers=$2; shift 2
  (cd "$R" && timeout "${LIMIT:-300}" $PY -c "from server.cli.main import main; main()" bench --workers "$workers" \
     --worker-rates "${RATES:-2000}" --worker-tables "${TABLES:-100}" --warmup "${WARMUP:-2}" \
     --duration "${DURATION:-4}" --json "$OUT/$name.json" --plot "$OUT/$name.png" "$@") > "$OUT/$name.txt" 2>&1
  echo "exit $?"; awk '/^size +capacity/{p=1} /^capacity:/{p=0} p' "$OUT/$name.txt"
}
above1=$(echo "$W" | tr , '\n' | awk '$1 > 1' | paste -sd, -)   # the aligned sweep's sizes: where logs meet
for stage in ${STAGES:-probe free aligned}; do
  echo "== $stage $(date +%T)"
  case $stage in
    probe)   (cd "$R" && timeout 120 $PY bench/fsync_streams.py --procs "1,${above1:-2}" --round-ms 5,10 --duration 2 \
                --json "$OUT/fsync-streams.json") > "$OUT/fsync-streams.txt" 2>&1; cat "$OUT/fsync-streams.txt" ;;
    free)    bench scale "$W" --rounds free ;;
    aligned) [ -n "$above1" ] && bench scale-aligned "${above1}" --rounds aligned --no-single ;;
    write)   bench scale-write "$W" --sync write --no-single ;;
    *)       echo "unknown stage $stage" ;;
  esac
done
echo "== done $(date +%T)"
