#!/usr/bin/env bash
# The full torture suite, `./run torture [GTEST_FILTER]`: builds a RelWithDebInfo tree, runs the
# torture tests with XPROBE_TORTURE_FULL=1 (every function of each object, bigger inputs, more
# signal rounds and attach cycles) and the mutated-ELF corpus, then prints one line per workload
# (probes, hits, refusals, cycles, PASS/FAIL) and the failed tests. Exit status 0 only if all passed.
# The reduced set of the same tests runs in CI under ctest (tests/torture/CMakeLists.txt).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${XPROBE_TORTURE_BUILD:-$ROOT/build-torture}
FILTER=${1:-*}

# The workloads' programs (Debian packages). Nothing else is installed.
missing=()
for p in sqlite3 zstd xz-utils gzip python3 libpython3.11-testsuite; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "torture: missing packages: ${missing[*]} (run as root, or apt-get install them)" >&2
    exit 1
  fi
  echo "torture: installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || {
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  } || exit 1
fi

echo "torture: building in $BUILD" >&2
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXPROBE_WERROR=OFF -DXPROBE_TESTS=ON >/dev/null || exit 1
ninja -C "$BUILD" -j2 xprobe torture_tests torture_elf_corpus_tests >/dev/null || { echo "torture: build failed" >&2; exit 1; }

export XPROBE_TORTURE_FULL=1
export XPROBE_TORTURE_SUMMARY=$BUILD/torture-summary.txt
: > "$XPROBE_TORTURE_SUMMARY"
LOG=$BUILD/torture-log.txt
: > "$LOG"

status=0
start=$(date +%s)
"$BUILD/tests/torture/torture_elf_corpus_tests" >>"$LOG" 2>&1 || status=1
corpus=$(grep -o 'replayed [0-9]* mutated ELF files.*' "$LOG" | head -1)
echo "elf-reader/mutated-corpus    ${corpus:-not run} $([ $status = 0 ] && echo PASS || echo FAIL)" >>"$XPROBE_TORTURE_SUMMARY"
# --gtest_brief needs GoogleTest 1.11+; Debian 12 has 1.12.
"$BUILD/tests/torture/torture_tests" --gtest_filter="$FILTER" >>"$LOG" 2>&1 || status=1
end=$(date +%s)

echo
echo "=== xprobe torture (full set, $((end - start)) s; log: $LOG) ==="
cat "$XPROBE_TORTURE_SUMMARY"
echo
failed=$(grep -E '^\[  FAILED  \] [A-Za-z]' "$LOG" | grep -v ' ms)$' | sed 's/^\[  FAILED  \] //' | sort -u)
skipped=$(grep -E '^\[  SKIPPED \] [A-Za-z]' "$LOG" | grep -v ' ms)$' | sed 's/^\[  SKIPPED \] //' | sort -u)
passed=$(grep -cE '^\[       OK \]' "$LOG")
echo "tests passed: $passed"
[ -n "$skipped" ] && { echo "tests skipped:"; echo "$skipped" | sed 's/^/  /'; }
if [ -n "$failed" ]; then
  echo "tests FAILED:"
  echo "$failed" | sed 's/^/  /'
  echo "(details in $LOG; known bugs are listed in .scratch/torture-findings.md)"
fi
exit $status
