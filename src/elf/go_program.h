#pragma once
// Whether an executable was built by the Go toolchain: its goroutines need the engines to
// follow return probes per goroutine, not per thread (probe/agent/return_frames.h).
#include "elf/elf_file.h"

namespace xprobe::elf {

// The Go linker writes the build information into a section of its own (.go.buildinfo, read
// by `go version`) in every executable it links, cgo ones included.
bool is_go_program(const ElfFile& file);

}  // namespace xprobe::elf
