#pragma once
// Runs an e2e program under the trap engine next to an untraced run of it.
#include <functional>
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

// Every instruction boundary of [start, start + size) in the process, by linear decoding.
inline std::vector<uint64_t> instruction_boundaries(target::Process& process, uint64_t start, uint64_t size) {
  std::vector<uint8_t> code(size);
  std::vector<uint64_t> boundaries;
  if (!process.read(start, code)) return boundaries;
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
