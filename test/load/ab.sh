#!/usr/bin/env bash
# A/B of the load benchmark against a git ref, alternated on this machine in one run:
#
#   BENCH_BASE=<git ref> [BENCH_PAIRS=3] make bench        (or make bench-public, or bench.sh)
#
# The ref is checked out in a temporary worktree; then, BENCH_PAIRS times, its test/load/bench.sh
# runs and then the working tree's, with the same BENCH_* settings (alternating cancels most of
# the drift of a machine over minutes). Every JSON line is printed tagged with its side and pair,
# then, per database and mode, each pair's change and the median change of acknowledged/s and
# p99 (test/load -ab). The ref's own bench.sh is used, as it was at that ref.
set -euo pipefail

cd "$(dirname "$0")/../.."
GO=${GO:-go}
BASE_REF=${BENCH_BASE:?set BENCH_BASE to a git ref}
PAIRS=${BENCH_PAIRS:-3}
BASE_DIR=$(mktemp -d -t formward-ab-XXXXXX)
OUT=$(mktemp -t formward-ab-XXXXXX.jsonl)
git worktree add --detach -q "$BASE_DIR" "$BASE_REF"
cleanup() { git worktree remove --force "$BASE_DIR" 2>/dev/null || rm -rf "$BASE_DIR"; }
trap cleanup EXIT
echo "== A/B: base $BASE_REF ($(git -C "$BASE_DIR" rev-parse --short HEAD)) against the working tree ($(git rev-parse --short HEAD)$(git diff --quiet || echo ', with uncommitted changes')), $PAIRS pairs, alternated"

for pair in $(seq 1 "$PAIRS"); do
  for side in base head; do
    dir=$PWD
    if [ "$side" = base ]; then dir=$BASE_DIR; fi
    echo "== pair $pair: $side"
    (cd "$dir" && env -u BENCH_BASE bash test/load/bench.sh) | grep '^{' | sort -u |
      sed "s/^{/{\"side\":\"$side\",\"pair\":$pair,/" | tee -a "$OUT"
  done
done

echo
"$GO" run ./test/load -ab "$OUT"
