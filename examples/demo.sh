#!/usr/bin/env bash
# The README's demo: xprobe on the bundled examples. Called by `./run demo`.
set -uo pipefail
BUILD=${1:?usage: demo.sh BUILD_DIR}
XPROBE=$BUILD/src/cli/xprobe
SAMPLE=$BUILD/examples/sample
POINTS=$BUILD/examples/probe_points_demo
show() {
  printf '\n$ %s\n' "$*" | sed "s|$BUILD/||g"
  "$@" 2>&1 | sed "s|$BUILD/||g"
  printf '[exit %d]\n' "${PIPESTATUS[0]}"
}

echo "== Tracing examples/sample.c (after the kernel's samples/kprobes/kprobe_example.c):"
echo "   entry and return probes with string arguments, in the kernel's uprobe_events syntax"
show "$XPROBE" trace \
  -e 'p:demo/open_config open_config path=+0(%di):string flags=%si:x32' \
  -e 'r:demo/open_config_ret open_config%return ret=$retval:s32' \
  -e 'p:demo/libc_open libc.so.6:open path=+0(%di):string' \
  -e 'r:demo/fib_ret fib%return n=$arg1:s64 ret=$retval:s64' \
  -- "$SAMPLE" 1

echo
echo "== Two engines. Entry probes and the return sites of return probes that the decoder proves"
echo "   safe become jumps into an in-process agent (no trap per hit; the default, --engine auto,"
echo "   uses them wherever it can); --engine trap uses breakpoints only; --engine jump insists, and"
echo "   says why a probe cannot be a jump"
show "$XPROBE" trace --engine jump --summary -e 'p:demo/fib fib n=%di:s64' -e 'r:demo/fib_ret fib%return n=$arg1:s64 ret=$retval:s64' -o /dev/null -- "$SAMPLE" 1
show "$XPROBE" trace --engine jump -e 'r:demo/fib_ret fib%return n=$arg1:s64 ret=$retval:s64' -- "$SAMPLE" 1
show "$XPROBE" trace --engine jump -e 'p:demo/cs fib cs=%cs:x16' -- "$SAMPLE" 1

echo
echo "== A probe the decoder cannot prove safe is refused before anything is planted"
show "$XPROBE" trace -e 'p unknown_instruction_function+2' -- "$POINTS"
show "$XPROBE" trace -e 'p privileged_function+1' -- "$POINTS"
show "$XPROBE" trace -e 'p:demo/bad open_config path=+0(%xx):string' -- "$SAMPLE"

echo
echo "== The safety checker on its own: every probe point is decoded from its function's start"
show "$XPROBE" check "$POINTS" accepted_function+4
show "$XPROBE" check "$POINTS" accepted_function+2
show "$XPROBE" check "$POINTS" unknown_instruction_function+2
show "$XPROBE" check "$POINTS" privileged_function+1

echo
echo "== The decoder: ADDRESS BYTES LENGTH KIND [TARGET]"
show "$XPROBE" decode "$POINTS" accepted_function
show "$XPROBE" decode --hex "48 8d 15 db ff ff ff e8 00 00 00 00 74 fe 06"
show "$XPROBE" decode --arch i386 --hex "06 60 e8 00 00 00 00 c3"
exit 0
