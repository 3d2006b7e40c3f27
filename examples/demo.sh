#!/usr/bin/env bash
# The README's demo: xprobe's answers on the bundled examples. Called by `./run demo`.
set -uo pipefail
BUILD=${1:?usage: demo.sh BUILD_DIR}
XPROBE=$BUILD/src/cli/xprobe
POINTS=$BUILD/examples/probe_points_demo
show() { printf '\n$ %s\n' "$*"; "$@"; printf '[exit %d]\n' $?; }

echo "== The safety checker: every probe point is decoded from its function's start"
show "$XPROBE" check "$POINTS" accepted_function
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
