#!/usr/bin/env bash
# The scaling bench (parsimonia bench --workers) on the lent 16-core machine (../shared/device/README.md).
# Prepare here first: EXTRA_WHEELS="openskill" bash ../shared/device/prepare.sh  (wheels, redis-server into .dev/)
# Dry run here:       OUT=/tmp/devout bash bench/device_scale.sh 1      (uses the project's .venv)
# On the machine:     one `run` call, carry [".dev"], timeout_s 540, command
#                     OUT=$OUT bash bench/device_scale.sh 1,2,4,8,12
# Under $OUT: scale.txt (the bench's output), scale.json (written after each size), env.txt, and scale-write.*
# when SYNC_WRITE=1 (the same sizes with --sync write, for the tail's comparison).
# Knobs: RATES (bids/s per worker, rising; default 2000), TABLES (per worker, 100), WARMUP (2), DURATION (4),
# LIMIT (seconds for the whole fsync sweep, 420).
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
{ nproc; $PY --version; redis-server --version; df -h "${TMPDIR:-/tmp}" | tail -1; } | tee "$OUT/env.txt"
W=${1:-1,2,4,8,12}
bench() {  # $1: name under $OUT, then extra options
  local name=$1; shift
  (cd "$R" && timeout "${LIMIT:-420}" $PY -c "from server.cli import main; main()" bench --workers "$W" \
     --worker-rates "${RATES:-2000}" --worker-tables "${TABLES:-100}" --warmup "${WARMUP:-2}" \
     --duration "${DURATION:-4}" --json "$OUT/$name.json" --plot "$OUT/$name.png" "$@") > "$OUT/$name.txt" 2>&1
  echo "exit $?"; grep -A12 "^size  *capacity" "$OUT/$name.txt" | head -9
}
echo "== fsync $(date +%T)"; bench scale
if [ "${SYNC_WRITE:-0}" = 1 ]; then echo "== write $(date +%T)"; bench scale-write --sync write --no-single; fi
echo "== done $(date +%T)"
