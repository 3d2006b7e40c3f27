#pragma once
// Runs an e2e program under the trap engine next to an untraced run of it.
#include <functional>
#include <string>
#include <vector>

#include "probe/engine/trap_engine.h"
#include "test_support.h"
#include "zydis_stand_in.h"

namespace xprobe::testing {

struct TracedRun {
  bool launched = false;
  std::string error;
  probe::engine::RunResult result;
  std::string output;
};

// Launches argv stopped at exec, lets `setup` add probes, runs to the end.
inline TracedRun run_traced(const std::vector<std::string>& argv,
                            const std::function<void(probe::engine::TrapEngine&, target::Process&)>& setup,
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
    probe::engine::TrapEngine engine(**process, engine_options());
    setup(engine, **process);
    auto result = engine.run();
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

inline int exit_status_of(const probe::engine::RunResult& result) {
  return result.end == probe::engine::RunEnd::Exited ? result.exit_status : 128 + result.signal;
}

// Every instruction boundary of [start, start + size) in the process, by linear decoding.
inline std::vector<uint64_t> instruction_boundaries(target::Process& process, uint64_t start, uint64_t size) {
  std::vector<uint8_t> code(size);
  std::vector<uint64_t> boundaries;
  if (!process.read(start, code)) return boundaries;
  auto decode = engine_options().decode;
  if (!decode) decode = [](std::span<const uint8_t> bytes, uint64_t address, insn::x86::X86Insn& out) {
    return insn::x86::decode(bytes, address, insn::x86::DecoderConfig{}, out);
  };
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
