#!/usr/bin/env bash
# Source-level numbers (issue: "resolution time for every function by DWARF and for all USDT
# markers; per-hit cost of a DWARF-located argument vs the same register argument"):
#   bench/source_probes/run.sh [BUILD_DIR]      (default build-bench: Release, XPROBE_BENCH=ON)
# Needs libc6-dbg (libc's DWARF by build-id), python3.11 with its SDT markers and python3.11-dbg.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build-bench}
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DXPROBE_BENCH=ON -DXPROBE_TESTS=OFF -DXPROBE_SANITIZE=OFF -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" >/dev/null  # as bench/run_all.sh
ninja -C "$BUILD" -j2 source_resolution xprobe >/dev/null
RESOLVE=$BUILD/bench/source_probes/source_resolution
XPROBE=$BUILD/src/cli/xprobe
LIBC=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
PYTHON=/usr/bin/python3.11
now() { date +%s%N; }
ms() { echo "scale=1; ($2 - $1) / 1000000" | bc; }

echo "## resolution"
"$RESOLVE" functions "$LIBC"                 # C, DWARF from /usr/lib/debug/.build-id (libc6-dbg)
# C++ with templates: xprobe itself as the Debug build has it (-g), when there is one.
CXX_OBJECT=${CXX_OBJECT:-$ROOT/build-test/src/cli/xprobe}
if [ -f "$CXX_OBJECT" ]; then "$RESOLVE" functions "$CXX_OBJECT"; fi
# python3.11 by DWARF: Debian's main archive has DWARF for the debug build python3.11d
# (python3.11-dbg), not for the release binary.
if [ -f /usr/bin/python3.11d ]; then "$RESOLVE" functions /usr/bin/python3.11d; fi
"$RESOLVE" markers "$PYTHON"

echo "## xprobe list (wall time, one process each)"
for args in "$PYTHON --sdt" "$LIBC --functions" "$LIBC --lines __libc_malloc" "$LIBC --vars __libc_malloc" "$CXX_OBJECT --functions"; do
  start=$(now); "$XPROBE" list $args >/dev/null; end=$(now)
  echo "xprobe list $args: $(ms "$start" "$end") ms"
done

echo "## per hit: a DWARF-located argument vs the same register argument"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cat >"$WORK/hits.c" <<'C'
#include <stdlib.h>
struct req { int id; unsigned len; };
__attribute__((noinline)) int handle(struct req* r) { return r->id + (int)r->len; }
int main(int argc, char** argv) {
  struct req r = {1, 2};
  int sum = 0;
  int n = argc > 1 ? atoi(argv[1]) : 100000;
  for (int i = 0; i < n; ++i) { r.len = (unsigned)i; sum += handle(&r); }
  return sum == 42;
}
C
gcc -g -O2 "$WORK/hits.c" -o "$WORK/hits"
N=200000
echo "'p:b/h handle len=r->len' becomes: $("$RESOLVE" expand "$WORK/hits" 'p:b/h handle len=r->len')"
for engine in trap jump; do
  for def in "p:b/h handle len=r->len" "p:b/h handle len=+4(%di):u32"; do
    best=
    for run in 1 2 3 4 5; do
      start=$(now); "$XPROBE" trace --engine "$engine" -o /dev/null -e "$def" -- "$WORK/hits" "$N" >/dev/null 2>&1 || true; end=$(now)
      t=$(( (end - start) / N ))
      if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
    done
    echo "engine $engine, '$def': $best ns per hit (best of 5, $N hits, whole run / hits)"
  done
done
