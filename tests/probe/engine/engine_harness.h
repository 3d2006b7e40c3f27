#pragma once
// Runs an e2e program under the trap engine next to an untraced run of it.
#include <unistd.h>

#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "probe/engine/trap_engine.h"
#include "supervisor/supervisor.h"
#include "test_support.h"
#include "zydis_stand_in.h"

namespace xprobe::testing {

struct TracedRun {
  bool launched = false;
  std::string error;
  supervisor::RunResult result;
  std::string output;
};

// Launches argv stopped at exec, lets `setup` add probes (and participants of its own), runs
// to the end, lets `after` look at the engine.
inline TracedRun run_traced_supervised(
    const std::vector<std::string>& argv,
    const std::function<void(supervisor::Supervisor&, probe::engine::TrapEngine&, target::Process&)>& setup,
    const std::function<void(probe::engine::TrapEngine&)>& after = nullptr) {
  TracedRun run;
  CapturedStdout captured;
  auto process = target::Process::launch(argv);
  captured.restore();
  if (!process) {
    run.error = process.error().message;
    return run;
  }
  run.launched = true;
  {
    supervisor::Supervisor supervisor(**process);
    probe::engine::TrapEngine engine(supervisor, engine_arch());
    setup(supervisor, engine, **process);
    auto result = supervisor.run();
    if (!result) {
      run.error = result.error().message;
    } else {
      run.result = *result;
    }
    if (after) after(engine);
  }
  run.output = captured.text();
  return run;
}

inline TracedRun run_traced(const std::vector<std::string>& argv,
                            const std::function<void(probe::engine::TrapEngine&, target::Process&)>& setup,
                            const std::function<void(probe::engine::TrapEngine&)>& after = nullptr) {
  return run_traced_supervised(
      argv, [&](supervisor::Supervisor&, probe::engine::TrapEngine& engine, target::Process& process) { setup(engine, process); },
      after);
}

// A participant that runs `action` after every exec (once the engines forgot the old image).
struct AfterExec final : supervisor::Participant {
  std::function<void()> action;
  void on_exec() override { action(); }
};

inline int exit_status_of(const supervisor::RunResult& result) {
  return result.end == supervisor::RunEnd::Exited ? result.exit_status : 128 + result.signal;
}

// The host's calling convention as these tests read it: integer argument `n` (0 or 1) at a
// function's entry, the return value at its return (System V x86-64, or AAPCS64).
inline uint64_t argument(const target::Registers& registers, int n) {
#if defined(__aarch64__)
  return registers.raw.regs[n];
#else
  return n == 0 ? registers.raw.rdi : registers.raw.rsi;
#endif
}
inline uint64_t first_argument(const target::Registers& registers) { return argument(registers, 0); }
inline uint64_t second_argument(const target::Registers& registers) { return argument(registers, 1); }
inline uint64_t return_value(const target::Registers& registers) {
#if defined(__aarch64__)
  return registers.raw.regs[0];
#else
  return registers.raw.rax;
#endif
}

// How much slower than the build machine the tests' programs run: the AArch64 tests run in
// qemu-system-aarch64 under TCG. Scales the waits that give a program time to get going.
#if defined(__aarch64__)
inline constexpr int kEmulationSlowdown = 5;
#else
inline constexpr int kEmulationSlowdown = 1;
#endif

// A forked child that is about to exec `program`: returns once it runs it (the fork's copy of
// the test must not be attached instead), at most 10 s.
inline void wait_for_exec(pid_t pid, const std::string& program) {
  char link[4096];
  const std::string exe = "/proc/" + std::to_string(pid) + "/exe";
  for (int waited = 0; waited < 1000; ++waited) {
    const ssize_t length = readlink(exe.c_str(), link, sizeof link - 1);
    if (length > 0 && std::string(link, static_cast<size_t>(length)) == program) return;
    usleep(10000);
  }
}

// The target of a direct call at `address` (call rel32; AArch64: BL), if there is one.
inline std::optional<uint64_t> direct_call_target(target::Process& process, uint64_t address) {
#if defined(__aarch64__)
  uint8_t bytes[4];
  if (!process.read(address, bytes)) return std::nullopt;
  const uint32_t word = bytes[0] | bytes[1] << 8 | bytes[2] << 16 | uint32_t{bytes[3]} << 24;
  if ((word & 0xfc000000u) != 0x94000000u) return std::nullopt;
  const int64_t words = static_cast<int64_t>(static_cast<int32_t>(word << 6) >> 6);
  return address + static_cast<uint64_t>(words * 4);
#else
  uint8_t bytes[5];
  if (!process.read(address, bytes) || bytes[0] != 0xe8) return std::nullopt;
  int32_t rel;
  std::memcpy(&rel, bytes + 1, 4);
  return address + 5 + static_cast<uint64_t>(static_cast<int64_t>(rel));
#endif
}

// Whether the instruction at `address` is the system call instruction (syscall; AArch64: svc #0).
inline bool is_system_call_at(target::Process& process, uint64_t address) {
#if defined(__aarch64__)
  uint8_t bytes[4];
  return process.read(address, bytes) && bytes[0] == 0x01 && bytes[1] == 0x00 && bytes[2] == 0x00 && bytes[3] == 0xd4;
#else
  uint8_t bytes[2];
  return process.read(address, bytes) && bytes[0] == 0x0f && bytes[1] == 0x05;
#endif
}

// Every instruction boundary of [start, start + size) in the process, by linear decoding
// (AArch64: every 4 bytes).
inline std::vector<uint64_t> instruction_boundaries(target::Process& process, uint64_t start, uint64_t size) {
  std::vector<uint8_t> code(size);
  std::vector<uint64_t> boundaries;
  if (!process.read(start, code)) return boundaries;
#if defined(__aarch64__)
  for (uint64_t offset = 0; offset + 4 <= size; offset += 4) boundaries.push_back(start + offset);
  return boundaries;
#endif
  const auto decode = engine_decoder();
  for (uint64_t offset = 0; offset < size;) {
    insn::x86::X86Insn insn;
    auto window = std::span<const uint8_t>(code).subspan(offset, std::min<uint64_t>(15, size - offset));
    if (decode(window, start + offset, insn) != insn::x86::DecodeStatus::Ok || insn.length == 0) break;
    boundaries.push_back(start + offset);
    offset += insn.length;
  }
  return boundaries;
}

}  // namespace xprobe::testing
