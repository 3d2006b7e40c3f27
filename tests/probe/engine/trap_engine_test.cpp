#include "probe/engine/trap_engine.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <chrono>
#include <map>
#include <thread>

#include "engine_harness.h"
#include "target/wait.h"

namespace xprobe::probe::engine {
namespace {

using namespace xprobe::testing;
using supervisor::RunEnd;
using supervisor::RunResult;

int reference_fib(int n) { return n < 2 ? n : reference_fib(n - 1) + reference_fib(n - 2); }

TEST(TrapEngineTest, EntryAndReturnProbesSeeArgumentsAndReturnValues) {
  std::string program = e2e_program("counter");
  auto untraced = run_untraced({program});
  std::vector<std::pair<uint64_t, uint64_t>> add_arguments;
  std::vector<uint64_t> add_results, global_reads;
  int fib_returns = 0, fib_mismatches = 0, fib_max_depth = 0, fib_live = 0;
  ProbeId add_entry = 0, add_return = 0, fib_return = 0, read_return = 0;
  auto run = run_traced({program}, [&](TrapEngine& engine, target::Process& process) {
    pid_t pid = process.pid();
    ProbeSpec entry;
    entry.address = symbol_address(pid, program, "add");
    entry.on_hit = [&](const HitContext& hit) {
      add_arguments.push_back({first_argument(hit.registers), second_argument(hit.registers)});
    };
    auto id = engine.add_probe(entry);
    ASSERT_TRUE(id) << id.error().message;
    add_entry = *id;

    ProbeSpec add_ret;
    add_ret.address = entry.address;
    add_ret.is_return = true;
    add_ret.on_return = [&](const ReturnContext& ret) { add_results.push_back(return_value(ret.hit.registers)); };
    id = engine.add_probe(add_ret);
    ASSERT_TRUE(id) << id.error().message;
    add_return = *id;

    ProbeSpec fib;
    fib.address = symbol_address(pid, program, "fib");
    fib.is_return = true;
    fib.save_at_entry = [&](const HitContext& hit) { return std::vector<uint64_t>{first_argument(hit.registers), 0}; };
    fib.on_return = [&](const ReturnContext& ret) {
      ++fib_returns;
      --fib_live;
      if (static_cast<int>(return_value(ret.hit.registers)) != reference_fib(static_cast<int>(ret.saved[0]))) ++fib_mismatches;
    };
    id = engine.add_probe(fib);
    ASSERT_TRUE(id) << id.error().message;
    fib_return = *id;
    // Depth of outstanding fib instances, seen from an entry probe at the same address.
    ProbeSpec fib_entry;
    fib_entry.address = fib.address;
    fib_entry.on_hit = [&](const HitContext&) { fib_max_depth = std::max(fib_max_depth, ++fib_live); };
    ASSERT_TRUE(engine.add_probe(fib_entry));

    ProbeSpec global;
    global.address = symbol_address(pid, program, "read_global");
    global.is_return = true;
    global.on_return = [&](const ReturnContext& ret) { global_reads.push_back(return_value(ret.hit.registers)); };
    id = engine.add_probe(global);
    ASSERT_TRUE(id) << id.error().message;
    read_return = *id;
  });
  ASSERT_TRUE(run.launched) << run.error;
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_EQ(exit_status_of(run.result), untraced.exit_status);
  EXPECT_EQ(run.output, untraced.output);

  ASSERT_EQ(add_arguments.size(), 10u);
  ASSERT_EQ(add_results.size(), 10u);
  ASSERT_EQ(global_reads.size(), 10u);
  for (uint64_t i = 0; i < 10; ++i) {
    EXPECT_EQ(add_arguments[i].first, i);
    EXPECT_EQ(add_arguments[i].second, 2 * i);
    EXPECT_EQ(add_results[i] & 0xffffffff, 3 * i);
    EXPECT_EQ(global_reads[i] & 0xffffffff, 42 + 2 * i);  // 40, bumped by 2 before each read
  }
  // fib(10) makes 177 calls; every return matched to its own entry's argument.
  EXPECT_EQ(fib_returns, 177);
  EXPECT_EQ(fib_mismatches, 0);
  EXPECT_EQ(fib_max_depth, 10);  // fib(10) -> fib(9) -> ... -> fib(1)
  EXPECT_EQ(fib_live, 0);
}

TEST(TrapEngineTest, ProbeOnEveryInstructionOfSeveralFunctionsLeavesTheProgramIntact) {
  std::string program = e2e_program("counter");
  auto untraced = run_untraced({program, "7"});
  std::map<uint64_t, int> hits;
  size_t planted = 0;
  std::vector<std::string> refused;
  auto run = run_traced({program, "7"}, [&](TrapEngine& engine, target::Process& process) {
    for (const char* function : {"main", "fib", "add", "read_global", "bump_global", "greet"}) {
      uint64_t start = symbol_address(process.pid(), program, function);
      uint64_t size = symbol_size(program, function);
      ASSERT_NE(start, 0u) << function;
      auto boundaries = instruction_boundaries(process, start, size);
      ASSERT_FALSE(boundaries.empty()) << function;
      for (uint64_t address : boundaries) {
        ProbeSpec spec;
        spec.address = address;
        spec.on_hit = [&hits, address](const HitContext&) { ++hits[address]; };
        auto id = engine.add_probe(spec);
        if (id) {
          ++planted;
        } else {
          refused.push_back(id.error().message);
        }
      }
    }
  });
  ASSERT_TRUE(run.launched) << run.error;
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_EQ(exit_status_of(run.result), untraced.exit_status);
  EXPECT_EQ(run.output, untraced.output);
  EXPECT_GT(planted, 40u);
  EXPECT_TRUE(refused.empty()) << refused.front();
  EXPECT_GT(hits.size(), 30u);
}

TEST(TrapEngineTest, LongjmpOutOfProbedFramesDiscardsThem) {
  std::string program = e2e_program("jumper");
  auto untraced = run_untraced({program});
  ProbeId dive = 0, leaf = 0;
  int leaf_returns = 0;
  auto run = run_traced({program}, [&](TrapEngine& engine, target::Process& process) {
    ProbeSpec spec;
    spec.address = symbol_address(process.pid(), program, "dive");
    spec.is_return = true;
    auto id = engine.add_probe(spec);
    ASSERT_TRUE(id) << id.error().message;
    dive = *id;
    spec.address = symbol_address(process.pid(), program, "leaf");
    spec.on_return = [&](const ReturnContext& ret) {
      ++leaf_returns;
      EXPECT_EQ(return_value(ret.hit.registers) % 3, 0u);
    };
    id = engine.add_probe(spec);
    ASSERT_TRUE(id) << id.error().message;
    leaf = *id;
  }, [&](TrapEngine& engine) {
    // 20 rounds; 7 of them (round % 3 == 0) longjmp out at depth 2 past 7 dive frames,
    // the other 13 return through all 9 (depth 8 .. 0).
    EXPECT_EQ(engine.stats(dive).hits, 13u * 9u);
    EXPECT_EQ(engine.stats(dive).discarded, 7u * 7u);
    EXPECT_EQ(engine.stats(dive).misses, 0u);
    EXPECT_EQ(engine.stats(leaf).hits, 20u);
  });
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_EQ(exit_status_of(run.result), untraced.exit_status);
  EXPECT_EQ(run.output, untraced.output);
  EXPECT_EQ(leaf_returns, 20);
}

TEST(TrapEngineTest, CxxExceptionsThroughProbedFunctionsUnwindNormally) {
  std::string program = e2e_program("thrower");
  auto untraced = run_untraced({program});
  ASSERT_EQ(untraced.exit_status, 5);
  std::map<std::string, ProbeId> ids;
  auto run = run_traced({program}, [&](TrapEngine& engine, target::Process& process) {
    for (const char* function : {"_Z5inneri", "_Z6middlei", "_Z5outeri"}) {
      ProbeSpec entry;
      entry.address = symbol_address(process.pid(), program, function);
      ASSERT_NE(entry.address, 0u) << function;
      auto id = engine.add_probe(entry);
      ASSERT_TRUE(id) << id.error().message;
      ids[std::string(function) + "@entry"] = *id;
      ProbeSpec ret = entry;
      ret.is_return = true;
      id = engine.add_probe(ret);
      ASSERT_TRUE(id) << id.error().message;
      ids[function] = *id;
    }
  }, [&](TrapEngine& engine) {
    // 40 calls of outer; for the 10 with i % 4 == 3 inner throws through middle into outer.
    EXPECT_EQ(engine.stats(ids["_Z5inneri@entry"]).hits, 40u);
    EXPECT_EQ(engine.stats(ids["_Z5inneri"]).hits, 30u);
    EXPECT_EQ(engine.stats(ids["_Z6middlei"]).hits, 30u);
    EXPECT_EQ(engine.stats(ids["_Z5outeri"]).hits, 40u);
    EXPECT_EQ(engine.stats(ids["_Z5inneri"]).discarded + engine.stats(ids["_Z6middlei"]).discarded, 20u);
  });
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_EQ(exit_status_of(run.result), untraced.exit_status);
  EXPECT_EQ(run.output, untraced.output);
}

TEST(TrapEngineTest, EightThreadsHitTheSameProbes) {
  std::string program = e2e_program("threads");
  auto untraced = run_untraced({program});
  ProbeId work = 0, step = 0;
  std::atomic<int> wrong_results{0};
  auto run = run_traced({program}, [&](TrapEngine& engine, target::Process& process) {
    ProbeSpec entry;
    entry.address = symbol_address(process.pid(), program, "work");
    auto id = engine.add_probe(entry);
    ASSERT_TRUE(id) << id.error().message;
    work = *id;
    ProbeSpec ret;
    ret.address = symbol_address(process.pid(), program, "step");
    ret.is_return = true;
    ret.save_at_entry = [](const HitContext& hit) {
      return std::vector<uint64_t>{first_argument(hit.registers), second_argument(hit.registers)};
    };
    ret.on_return = [&](const ReturnContext& r) {
      // step(acc, i) returns acc + i * 7 + 1
      if (return_value(r.hit.registers) != r.saved[0] + r.saved[1] * 7 + 1) ++wrong_results;
    };
    id = engine.add_probe(ret);
    ASSERT_TRUE(id) << id.error().message;
    step = *id;
  }, [&](TrapEngine& engine) {
    EXPECT_EQ(engine.stats(work).hits, 8u * 2000u);
    EXPECT_EQ(engine.stats(step).hits, 8u * 2000u);
    EXPECT_EQ(engine.stats(step).misses, 0u);
  });
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_EQ(wrong_results.load(), 0);
  EXPECT_EQ(exit_status_of(run.result), untraced.exit_status);
  EXPECT_EQ(run.output, untraced.output);
}

TEST(TrapEngineTest, ForkedChildRunsWithoutBreakpoints) {
  std::string program = e2e_program("forker");
  auto untraced = run_untraced({program});
  ProbeId work = 0;
  auto run = run_traced({program}, [&](TrapEngine& engine, target::Process& process) {
    ProbeSpec entry;
    entry.address = symbol_address(process.pid(), program, "work");
    auto id = engine.add_probe(entry);
    ASSERT_TRUE(id) << id.error().message;
    work = *id;
  }, [&](TrapEngine& engine) {
    EXPECT_EQ(engine.stats(work).hits, 10u);  // the parent's 5 + 5; the child's are not traced
  });
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_EQ(exit_status_of(run.result), untraced.exit_status);
  EXPECT_EQ(run.output, untraced.output);
}

TEST(TrapEngineTest, MaxActiveLimitsOutstandingReturnInstances) {
  std::string program = e2e_program("counter");
  auto untraced = run_untraced({program});
  ProbeId fib = 0;
  auto run = run_traced({program}, [&](TrapEngine& engine, target::Process& process) {
    ProbeSpec spec;
    spec.address = symbol_address(process.pid(), program, "fib");
    spec.is_return = true;
    spec.max_active = 3;
    auto id = engine.add_probe(spec);
    ASSERT_TRUE(id) << id.error().message;
    fib = *id;
  }, [&](TrapEngine& engine) {
    // Calls at depth 1..3 are tracked, deeper ones are misses: fib(10), fib(9)/fib(8), and
    // their children: 1 + 2 + 4 = 7 tracked instances; 177 - 7 = 170 misses.
    EXPECT_EQ(engine.stats(fib).hits, 7u);
    EXPECT_EQ(engine.stats(fib).misses, 170u);
  });
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_EQ(run.output, untraced.output);
  EXPECT_EQ(exit_status_of(run.result), untraced.exit_status);
}

TEST(TrapEngineTest, TheProgramsOwnTrapsAreDeliveredToIt) {
  std::string program = e2e_program("own_trap");
  auto untraced = run_untraced({program});
  ProbeId probed = 0;
  auto run = run_traced({program}, [&](TrapEngine& engine, target::Process& process) {
    ProbeSpec spec;
    spec.address = symbol_address(process.pid(), program, "probed");
    spec.is_return = true;
    auto id = engine.add_probe(spec);
    ASSERT_TRUE(id) << id.error().message;
    probed = *id;
  }, [&](TrapEngine& engine) { EXPECT_EQ(engine.stats(probed).hits, 3u); });
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_EQ(run.output, untraced.output);
#if defined(__x86_64__)
  EXPECT_EQ(run.output, "traps=9 total=6\n");  // raise, int3 and hlt, 3 times
#else
  EXPECT_EQ(run.output, "traps=6 total=6\n");  // raise and BRK, 3 times
#endif
  EXPECT_EQ(exit_status_of(run.result), untraced.exit_status);
}

// Attaches to a busy program, traces, then a SIGINT to the tracer ends tracing: every
// breakpoint (including return sites of frames still active) is removed and the program
// finishes as if never traced.
TEST(TrapEngineTest, SigintDetachesAndTheAttachedProgramRunsOnUntouched) {
  std::string program = e2e_program("ticker");
  // Long enough that the interrupt always comes while it runs, even under emulation (the
  // interrupt waits for hits, not for a time).
  auto untraced = run_untraced({program, "1000"});
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], 1);
    close(pipe_fds[0]);
    execl(program.c_str(), program.c_str(), "1000", nullptr);
    _exit(127);
  }
  close(pipe_fds[1]);
  wait_for_exec(pid, program);
  std::this_thread::sleep_for(std::chrono::milliseconds(50 * kEmulationSlowdown));
  std::atomic<uint64_t> ticks = 0;
  {
    target::StopSignals stop_signals;
    auto process = target::Process::attach(pid);
    ASSERT_TRUE(process) << process.error().message;
    supervisor::Supervisor supervisor(**process);
    TrapEngine engine(supervisor, engine_arch());
    ProbeSpec tick;
    tick.address = symbol_address(pid, program, "tick");
    tick.on_hit = [&](const HitContext&) { ++ticks; };
    ASSERT_TRUE(engine.add_probe(tick));
    ProbeSpec pause;
    pause.address = symbol_address(pid, program, "pause_briefly");
    ASSERT_NE(pause.address, 0u);
    pause.is_return = true;
    ASSERT_TRUE(engine.add_probe(pause));
    std::thread interrupter([&ticks] {
      // Bounded, so that a tracer that never hits fails the test instead of hanging it.
      for (int waited = 0; ticks.load() < 20 && waited < 60000; ++waited) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      kill(getpid(), SIGINT);
    });
    auto result = supervisor.run();
    interrupter.join();
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(result->end, RunEnd::Detached);
    EXPECT_TRUE(target::stop_requested());
    target::clear_stop_request();
  }
  EXPECT_GE(ticks.load(), 20u);
  const xprobe::testing::RunResult finished = finish_child(pipe_fds[0], pid);
  EXPECT_EQ(finished.exit_status, untraced.exit_status);
  EXPECT_EQ(finished.output, untraced.output);
}

}  // namespace
}  // namespace xprobe::probe::engine

namespace xprobe::probe::engine {
namespace {

using namespace xprobe::testing;
using supervisor::RunEnd;
using supervisor::RunResult;

TEST(TrapEngineTest, SignalsAndGroupStopsReachTheProgramUnchanged) {
  std::string program = e2e_program("signals");
  auto untraced = run_untraced({program});
  ProbeId busy = 0, handler = 0;
  auto run = run_traced({program}, [&](TrapEngine& engine, target::Process& process) {
    // Every instruction of busy(): a timer signal lands while threads are in slots.
    uint64_t start = symbol_address(process.pid(), program, "busy");
    for (uint64_t address : instruction_boundaries(process, start, symbol_size(program, "busy"))) {
      ProbeSpec spec;
      spec.address = address;
      auto id = engine.add_probe(spec);
      ASSERT_TRUE(id) << id.error().message;
      if (address == start) busy = *id;
    }
    ProbeSpec spec;
    spec.address = symbol_address(process.pid(), program, "in_handler");
    spec.is_return = true;
    auto id = engine.add_probe(spec);
    ASSERT_TRUE(id) << id.error().message;
    handler = *id;
  }, [&](TrapEngine& engine) {
    EXPECT_EQ(engine.stats(busy).hits, 6000u);  // a hit interrupted by a signal and replayed counts once
    EXPECT_EQ(engine.stats(handler).hits, 20u);
  });
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_EQ(run.output, untraced.output);
  EXPECT_EQ(exit_status_of(run.result), untraced.exit_status);
}

TEST(TrapEngineTest, ExecDropsProbesAndTheHandlerPlantsThemInTheNewImage) {
  std::string program = e2e_program("execer");
  auto untraced = run_untraced({program});
  ASSERT_EQ(untraced.exit_status, 4);
  ProbeId before = 0, after = 0;
  std::vector<uint64_t> arguments;
  AfterExec plant_again;
  auto run = run_traced_supervised({program}, [&](supervisor::Supervisor& supervisor, TrapEngine& engine, target::Process& process) {
    ProbeSpec spec;
    spec.address = symbol_address(process.pid(), program, "work");
    spec.on_hit = [&](const HitContext& hit) { arguments.push_back(first_argument(hit.registers)); };
    auto id = engine.add_probe(spec);
    ASSERT_TRUE(id) << id.error().message;
    before = *id;
    plant_again.action = [&, spec]() mutable {
      spec.address = symbol_address(process.pid(), program, "work");
      auto new_id = engine.add_probe(spec);
      ASSERT_TRUE(new_id) << new_id.error().message;
      after = *new_id;
    };
    supervisor.join(plant_again);
  }, [&](TrapEngine& engine) {
    EXPECT_EQ(engine.stats(before).hits, 1u);
    EXPECT_EQ(engine.stats(after).hits, 2u);
  });
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_EQ(arguments, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(run.output, untraced.output);
  EXPECT_EQ(exit_status_of(run.result), untraced.exit_status);
}

// posix_spawn's child shares memory with breakpoints in it until it execs; a probe on
// execve (in libc, planted from an internal breakpoint at main once libc is loaded) is hit
// by that child and must be stepped over silently.
TEST(TrapEngineTest, VforkChildSharingOurBreakpointsIsCarriedToItsExec) {
  std::string program = e2e_program("spawner");
  auto untraced = run_untraced({program});
  ProbeId work = 0, execve_probe = 0;
  bool planted_from_main = false;
  auto run = run_traced({program}, [&](TrapEngine& engine, target::Process& process) {
    ProbeSpec spec;
    spec.address = symbol_address(process.pid(), program, "work");
    auto id = engine.add_probe(spec);
    ASSERT_TRUE(id) << id.error().message;
    work = *id;
    auto main_break = engine.add_internal_breakpoint(
        symbol_address(process.pid(), program, "main"), [&](const HitContext& hit) {
          std::string libc = mapped_object(hit.process.pid(), "libc.so");
          ASSERT_FALSE(libc.empty());
          ProbeSpec in_libc;
          in_libc.address = symbol_address(hit.process.pid(), libc, "execve");
          ASSERT_NE(in_libc.address, 0u);
          auto libc_id = engine.add_probe(in_libc);
          ASSERT_TRUE(libc_id) << libc_id.error().message;
          execve_probe = *libc_id;
          planted_from_main = true;
        });
    ASSERT_TRUE(main_break) << main_break.error().message;
  }, [&](TrapEngine& engine) {
    EXPECT_EQ(engine.stats(work).hits, 3u);
    EXPECT_EQ(engine.stats(execve_probe).hits, 0u);  // only the children exec
  });
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_TRUE(planted_from_main);
  EXPECT_EQ(run.output, untraced.output);
  EXPECT_EQ(exit_status_of(run.result), untraced.exit_status);
}

TEST(TrapEngineTest, RepeatedAttachTraceDetachCyclesOnABusyMultithreadedProgram) {
  std::string program = e2e_program("ticker");
  auto untraced = run_untraced({program, "400"});
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], 1);
    close(pipe_fds[0]);
    execl(program.c_str(), program.c_str(), "400", nullptr);
    _exit(127);
  }
  close(pipe_fds[1]);
  wait_for_exec(pid, program);
  std::this_thread::sleep_for(std::chrono::milliseconds(20 * kEmulationSlowdown));
  uint64_t total_hits = 0;
  int cycles = 0;
  for (; cycles < 20; ++cycles) {
    auto process = target::Process::attach(pid);
    if (!process) break;  // finished early
    supervisor::Supervisor supervisor(**process);
    TrapEngine engine(supervisor, engine_arch());
    uint64_t tick = symbol_address(pid, program, "tick");
    for (uint64_t address : instruction_boundaries(**process, tick, symbol_size(program, "tick"))) {
      ProbeSpec spec;
      spec.address = address;
      spec.on_hit = [&](const HitContext&) {
        if (++total_hits % 7 == 0) target::request_stop();
      };
      auto id = engine.add_probe(spec);
      ASSERT_TRUE(id) << id.error().message;
    }
    ProbeSpec ret;
    ret.address = tick;
    ret.is_return = true;
    auto id = engine.add_probe(ret);
    ASSERT_TRUE(id) << id.error().message;
    auto result = supervisor.run();
    target::clear_stop_request();
    ASSERT_TRUE(result) << result.error().message;
    if (result->end != RunEnd::Detached) break;
  }
  EXPECT_GE(cycles, 5);
  EXPECT_GT(total_hits, 20u);
  const xprobe::testing::RunResult finished = finish_child(pipe_fds[0], pid);
  EXPECT_EQ(finished.exit_status, untraced.exit_status);
  EXPECT_EQ(finished.output, untraced.output);
}

}  // namespace
}  // namespace xprobe::probe::engine

namespace xprobe::probe::engine {
namespace {

using namespace xprobe::testing;
using supervisor::RunEnd;
using supervisor::RunResult;

// Under seccomp no system call is injected: a probe that needs an out-of-line slot is
// refused with the reason; one that is emulated (the call in main) still works.
TEST(TrapEngineTest, SeccompProcessesGetNoInjectedSyscallsAndAClearRefusal) {
  std::string program = e2e_program("sandboxed");
  auto untraced = run_untraced({program});
  ASSERT_EQ(untraced.exit_status, 0);
  std::string refusal;
  bool planted_call = false;
  ProbeId call_probe = 0;
  auto run = run_traced({program}, [&](TrapEngine& engine, target::Process& process) {
    // Plant a breakpoint on work() from inside it once seccomp is on: at the first call in
    // main after prctl (the call instruction is emulated, so needs no slot).
    uint64_t main_start = symbol_address(process.pid(), program, "main");
    uint64_t work = symbol_address(process.pid(), program, "work");
    for (uint64_t address : instruction_boundaries(process, main_start, symbol_size(program, "main"))) {
      if (direct_call_target(process, address) != work) continue;
      ProbeSpec spec;
      spec.address = address;
      spec.on_hit = [&, work](const HitContext& hit) {
        ProbeSpec inside;
        inside.address = work;  // lea: runs out of line, needs the slot area
        auto id = engine.add_probe(inside);
        if (!id) refusal = id.error().message;
        (void)hit;
      };
      auto id = engine.add_probe(spec);
      ASSERT_TRUE(id) << id.error().message;
      call_probe = *id;
      planted_call = true;
    }
  }, [&](TrapEngine& engine) { EXPECT_EQ(engine.stats(call_probe).hits, 1u); });
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_TRUE(planted_call);
  EXPECT_NE(refusal.find("runs under seccomp"), std::string::npos) << refusal;
  EXPECT_EQ(run.output, untraced.output);
  EXPECT_EQ(exit_status_of(run.result), untraced.exit_status);
}

}  // namespace
}  // namespace xprobe::probe::engine

namespace xprobe::probe::engine {
namespace {

using namespace xprobe::testing;
using supervisor::RunEnd;
using supervisor::RunResult;

TEST(TrapEngineTest, FollowForkTracesTheChildWithTheSameProbes) {
  std::string program = e2e_program("forker");
  auto untraced = run_untraced({program});
  ProbeId work = 0, work_return = 0;
  std::map<pid_t, int> hits_by_process;
  uint64_t returns_matching = 0;
  CapturedStdout captured;
  auto process = target::Process::launch({program});
  captured.restore();
  ASSERT_TRUE(process) << process.error().message;
  supervisor::SupervisorOptions options;
  options.follow_fork = true;
  RunResult result;
  {
    supervisor::Supervisor supervisor(**process, options);
    TrapEngine engine(supervisor, engine_arch());
    ProbeSpec spec;
    spec.address = symbol_address((*process)->pid(), program, "work");
    spec.on_hit = [&](const HitContext& hit) { ++hits_by_process[hit.process.pid()]; };
    auto id = engine.add_probe(spec);
    ASSERT_TRUE(id) << id.error().message;
    work = *id;
    ProbeSpec ret;
    ret.address = spec.address;
    ret.is_return = true;
    ret.save_at_entry = [](const HitContext& hit) { return std::vector<uint64_t>{first_argument(hit.registers)}; };
    ret.on_return = [&](const ReturnContext& r) {
      if ((return_value(r.hit.registers) & 0xffffffff) == r.saved[0] + 1) ++returns_matching;
    };
    id = engine.add_probe(ret);
    ASSERT_TRUE(id) << id.error().message;
    work_return = *id;
    auto ran = supervisor.run();
    ASSERT_TRUE(ran) << ran.error().message;
    result = *ran;
    EXPECT_EQ(engine.stats(work).hits, 15u);  // parent 5 + 5, child 5
    EXPECT_EQ(engine.stats(work_return).hits, 15u);
  }
  EXPECT_EQ(returns_matching, 15u);
  ASSERT_EQ(hits_by_process.size(), 2u);
  EXPECT_EQ(hits_by_process[(*process)->pid()], 10);
  EXPECT_EQ(exit_status_of(result), untraced.exit_status);
  EXPECT_EQ(captured.text(), untraced.output);
}

}  // namespace
}  // namespace xprobe::probe::engine

namespace xprobe::probe::engine {
namespace {

using namespace xprobe::testing;
using supervisor::RunEnd;
using supervisor::RunResult;

// The faulting load is the probed instruction itself, run out of line: the program must
// still die of SIGSEGV exactly as untraced, and its handler-less death is reported.
TEST(TrapEngineTest, AProgramThatCrashesInAProbedInstructionDiesAsUntraced) {
  std::string program = e2e_program("crasher");
  auto untraced = run_untraced({program});
  ASSERT_EQ(untraced.exit_status, 128 + SIGSEGV);
  ProbeId entry = 0;
  auto run = run_traced({program}, [&](TrapEngine& engine, target::Process& process) {
    uint64_t start = symbol_address(process.pid(), program, "work");
    for (uint64_t address : instruction_boundaries(process, start, symbol_size(program, "work"))) {
      ProbeSpec spec;
      spec.address = address;
      auto id = engine.add_probe(spec);
      ASSERT_TRUE(id) << id.error().message;
      if (address == start) entry = *id;
    }
  }, [&](TrapEngine& engine) { EXPECT_EQ(engine.stats(entry).hits, 4u); });
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_EQ(run.result.end, RunEnd::Killed);
  EXPECT_EQ(run.result.signal, SIGSEGV);
  EXPECT_EQ(run.output, untraced.output);
}

TEST(TrapEngineTest, AProgramKilledWhileTracedIsReportedAndReaped) {
  std::string program = e2e_program("ticker");
  pid_t traced_pid = 0;
  std::thread killer;
  auto run = run_traced({program, "1000"}, [&](TrapEngine& engine, target::Process& process) {
    traced_pid = process.pid();
    ProbeSpec spec;
    spec.address = symbol_address(process.pid(), program, "tick");
    spec.is_return = true;
    ASSERT_TRUE(engine.add_probe(spec));
    killer = std::thread([traced_pid] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      kill(traced_pid, SIGKILL);
    });
  });
  killer.join();
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_EQ(run.result.end, RunEnd::Killed);
  EXPECT_EQ(run.result.signal, SIGKILL);
  // Reaped: no zombie left behind.
  EXPECT_EQ(waitpid(traced_pid, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

}  // namespace
}  // namespace xprobe::probe::engine

namespace xprobe::probe::engine {
namespace {

using namespace xprobe::testing;
using supervisor::RunEnd;
using supervisor::RunResult;

// Every instruction boundary of a few libc functions the program uses (stdio, malloc), planted
// once libc is mapped (from an internal breakpoint at main): whatever the decoder meets there
// runs out of line or emulated, and the program cannot tell.
TEST(TrapEngineTest, EveryInstructionOfHotLibcFunctions) {
  std::string program = e2e_program("counter");
  auto untraced = run_untraced({program, "30"});
  size_t planted = 0, refused = 0;
  std::string first_refusal;
  std::map<ProbeId, uint64_t> ids;
  auto run = run_traced({program, "30"}, [&](TrapEngine& engine, target::Process& process) {
    auto main_break = engine.add_internal_breakpoint(
        symbol_address(process.pid(), program, "main"), [&](const HitContext& hit) {
          std::string libc = mapped_object(hit.process.pid(), "libc.so");
          for (const char* function : {"puts", "printf", "malloc", "free", "atoi"}) {
            uint64_t start = symbol_address(hit.process.pid(), libc, function);
            uint64_t size = symbol_size(libc, function);
            for (uint64_t address : instruction_boundaries(hit.process, start, size)) {
              ProbeSpec spec;
              spec.address = address;
              auto id = engine.add_probe(spec);
              if (id) {
                ++planted;
                ids[*id] = address;
              } else {
                if (first_refusal.empty()) first_refusal = id.error().message;
                ++refused;
              }
            }
          }
        });
    ASSERT_TRUE(main_break) << main_break.error().message;
  }, [&](TrapEngine& engine) {
    uint64_t hits = 0;
    for (const auto& [id, address] : ids) hits += engine.stats(id).hits;
    EXPECT_GT(hits, 100u);
  });
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_GT(planted, 100u);
  EXPECT_EQ(refused, 0u) << first_refusal;
  EXPECT_EQ(run.output, untraced.output);
  EXPECT_EQ(exit_status_of(run.result), untraced.exit_status);
}

}  // namespace
}  // namespace xprobe::probe::engine

namespace xprobe::probe::engine {
namespace {

using namespace xprobe::testing;
using supervisor::RunEnd;
using supervisor::RunResult;

// A probe on every instruction of clock_nanosleep, syscall included: the syscall runs out of
// line, so threads sleep inside a slot. Detaching then moves them to the original code
// right after the syscall, where the kernel's restart (rip - 2) finds the original syscall.
// (AArch64 refuses SVC: every other instruction is probed, threads sleep in the original code.)
TEST(TrapEngineTest, DetachWhileThreadsSleepInASyscallRunOutOfLine) {
  std::string program = e2e_program("ticker");
  auto untraced = run_untraced({program, "200"});
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], 1);
    close(pipe_fds[0]);
    execl(program.c_str(), program.c_str(), "200", nullptr);
    _exit(127);
  }
  close(pipe_fds[1]);
  wait_for_exec(pid, program);
  std::this_thread::sleep_for(std::chrono::milliseconds(30 * kEmulationSlowdown));
  uint64_t syscall_hits = 0;
  for (int cycle = 0; cycle < 5; ++cycle) {
    auto process = target::Process::attach(pid);
    ASSERT_TRUE(process) << process.error().message;
    supervisor::Supervisor supervisor(**process);
    TrapEngine engine(supervisor, engine_arch());
    std::string libc = mapped_object(pid, "libc.so");
    ASSERT_FALSE(libc.empty());
    uint64_t start = symbol_address(pid, libc, "clock_nanosleep");
    ASSERT_NE(start, 0u);
    uint64_t hits = 0;
    for (uint64_t address : instruction_boundaries(**process, start, symbol_size(libc, "clock_nanosleep"))) {
#if defined(__aarch64__)
      // SVC is never run out of line on AArch64 (its refusal says why): the threads sleep in
      // the original code, and the probe on the instruction after it sees them come back.
      const bool is_syscall = address > start && is_system_call_at(**process, address - 4);
      if (is_system_call_at(**process, address)) {
        ProbeSpec svc;
        svc.address = address;
        auto refused = engine.add_probe(svc);
        ASSERT_FALSE(refused);
        EXPECT_NE(refused.error().message.find("SVC"), std::string::npos) << refused.error().message;
        continue;
      }
#else
      const bool is_syscall = is_system_call_at(**process, address);
#endif
      ProbeSpec spec;
      spec.address = address;
      spec.on_hit = [&, is_syscall](const HitContext&) {
        if (is_syscall) ++syscall_hits;
        if (++hits == 12) target::request_stop();
      };
      auto id = engine.add_probe(spec);
      ASSERT_TRUE(id) << id.error().message;
    }
    auto result = supervisor.run();
    target::clear_stop_request();
    ASSERT_TRUE(result) << result.error().message;
    ASSERT_EQ(result->end, RunEnd::Detached);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_GT(syscall_hits, 0u);
  const xprobe::testing::RunResult finished = finish_child(pipe_fds[0], pid);
  EXPECT_EQ(finished.exit_status, untraced.exit_status);
  EXPECT_EQ(finished.output, untraced.output);
}

}  // namespace
}  // namespace xprobe::probe::engine

namespace xprobe::probe::engine {
namespace {

using namespace xprobe::testing;
using supervisor::RunEnd;
using supervisor::RunResult;

// A detach from inside a hit's callback (the engine promises detach() is safe at any time):
// the hit thread had executed the int3 and was not resumed yet, so it sat one byte into the
// probed instruction. The detach left it there: add's `lea (%rdi,%rsi),%eax` (8d 04 37) ran
// on as `add $0x37,%al`, and the program printed a wrong sum.
TEST(TrapEngineTest, DetachFromAHitCallbackPutsTheHitThreadBackOnTheProbedInstruction) {
  std::string program = e2e_program("counter");
  auto untraced = run_untraced({program, "200000000"});
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], 1);
    close(pipe_fds[0]);
    execl(program.c_str(), program.c_str(), "200000000", nullptr);
    _exit(127);
  }
  close(pipe_fds[1]);
  wait_for_exec(pid, program);
  std::this_thread::sleep_for(std::chrono::milliseconds(20 * kEmulationSlowdown));
  {
    auto process = target::Process::attach(pid);
    ASSERT_TRUE(process) << process.error().message;
    supervisor::Supervisor supervisor(**process);
    TrapEngine engine(supervisor, engine_arch());
    ProbeSpec add;
    add.address = symbol_address(pid, program, "add");
    ASSERT_NE(add.address, 0u);
    int hits = 0;
    add.on_hit = [&](const HitContext&) {
      if (++hits == 5) {
        ASSERT_TRUE(supervisor.detach());
      }
    };
    ASSERT_TRUE(engine.add_probe(add));
    auto result = supervisor.run();
    if (result) {
      EXPECT_EQ(result->end, RunEnd::Detached);
    } else {
      ADD_FAILURE() << "run() after the detach: " << result.error().message;
    }
    EXPECT_EQ(hits, 5);
  }
  const xprobe::testing::RunResult finished = finish_child(pipe_fds[0], pid);
  EXPECT_EQ(finished.exit_status, untraced.exit_status);
  EXPECT_EQ(finished.output, untraced.output);
}

}  // namespace
}  // namespace xprobe::probe::engine

namespace xprobe::probe::engine {
namespace {

using namespace xprobe::testing;

// Probes removed while the program runs, each from its own callback: an entry probe after its
// third hit, a return probe on recursive fib after its fifth return (with frames still
// outstanding). Afterwards no callback of theirs runs, their statistics stay, and once the
// last outstanding frame is gone the code of add, fib and main reads as it did before
// tracing: every breakpoint, return sites included, came out.
TEST(TrapEngineTest, ProbesRemovedWhileTracingStopAndLeaveTheOriginalCode) {
  std::string program = e2e_program("counter");
  auto untraced = run_untraced({program, "10"});
  ProbeId add = 0, fib = 0;
  int add_calls = 0, fib_returns = 0;
  std::map<std::string, std::vector<uint8_t>> original, at_greet;
  Status removing_again;
  auto run = run_traced({program, "10"}, [&](TrapEngine& engine, target::Process& process) {
    const pid_t pid = process.pid();
    for (const char* function : {"add", "fib", "main"}) {
      std::vector<uint8_t> code(symbol_size(program, function));
      ASSERT_TRUE(process.read(symbol_address(pid, program, function), code));
      original[function] = code;
    }
    ProbeSpec entry;
    entry.address = symbol_address(pid, program, "add");
    entry.on_hit = [&](const HitContext&) {
      if (++add_calls == 3) {
        ASSERT_TRUE(engine.remove_probe(add));
        removing_again = engine.remove_probe(add);
      }
    };
    auto id = engine.add_probe(entry);
    ASSERT_TRUE(id) << id.error().message;
    add = *id;
    ProbeSpec ret;
    ret.address = symbol_address(pid, program, "fib");
    ret.is_return = true;
    ret.on_return = [&](const ReturnContext&) {
      if (++fib_returns == 5) {
        ASSERT_TRUE(engine.remove_probe(fib));
      }
    };
    id = engine.add_probe(ret);
    ASSERT_TRUE(id) << id.error().message;
    fib = *id;
    // greet() runs after fib(10) is over: look at the code then.
    auto look = engine.add_internal_breakpoint(symbol_address(pid, program, "greet"), [&, pid](const HitContext& hit) {
      for (const auto& [function, code] : original) {
        std::vector<uint8_t> now(code.size());
        if (hit.process.read(symbol_address(pid, program, function), now)) at_greet[function] = now;
      }
    });
    ASSERT_TRUE(look) << look.error().message;
  }, [&](TrapEngine& engine) {
    EXPECT_EQ(engine.stats(add).hits, 3u);
    EXPECT_EQ(engine.stats(fib).hits, 5u);
  });
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_EQ(add_calls, 3);
  EXPECT_EQ(fib_returns, 5);
  EXPECT_FALSE(removing_again);  // a probe is removed once
  for (const auto& [function, code] : original) EXPECT_EQ(at_greet[function], code) << function;
  EXPECT_EQ(run.output, untraced.output);
  EXPECT_EQ(exit_status_of(run.result), untraced.exit_status);
}

}  // namespace
}  // namespace xprobe::probe::engine
