// The AArch64 ProbeArch on a real arm64 kernel (inside the VM, tests/arm64_vm): a BRK #0 on
// every instruction of a BTI-guarded, pointer-authenticating program (programs/guarded_target.S),
// each hit got past exactly as the trap engine does it (ProbeArch::plan, then the slot's code
// or emulate()), driven here by raw ptrace (PTRACE_GETREGSET/SETREGSET with NT_PRSTATUS). The
// program's own checksum must come out as in an untraced run; every stop must report the pc
// of the BRK itself; every planned instruction must be hit.
#include <elf.h>
#include <fcntl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "arch/arm64/probe_support/arm64_probe_arch.h"
#include "arch/registry.h"
#include "arch/probe_point_check.h"
#include "elf/elf_file.h"

namespace xprobe::arch {
namespace {

const std::string kProgram = XPROBE_GUARDED_TARGET;

class PtraceMemory final : public ProbeMemory {
 public:
  explicit PtraceMemory(pid_t pid) : pid_(pid) {}
  Status read(uint64_t address, std::span<uint8_t> bytes) override {
    for (size_t done = 0; done < bytes.size(); done += 8) {
      errno = 0;
      const long word = ptrace(PTRACE_PEEKDATA, pid_, address + done, nullptr);
      if (errno != 0) return make_error("cannot read the traced program's memory");
      std::memcpy(bytes.data() + done, &word, std::min<size_t>(8, bytes.size() - done));
    }
    return {};
  }
  Status write(uint64_t address, std::span<const uint8_t> bytes) override {
    for (size_t done = 0; done < bytes.size(); done += 8) {
      long word = 0;
      const size_t chunk = std::min<size_t>(8, bytes.size() - done);
      if (chunk < 8) {
        errno = 0;
        word = ptrace(PTRACE_PEEKDATA, pid_, address + done, nullptr);
        if (errno != 0) return make_error("cannot read the traced program's memory");
      }
      std::memcpy(&word, bytes.data() + done, chunk);
      if (ptrace(PTRACE_POKEDATA, pid_, address + done, word) != 0) return make_error("cannot write");
    }
    return {};
  }

 private:
  pid_t pid_;
};

RegisterBlock get_registers(pid_t pid) {
  RegisterBlock block{};
  iovec io{&block, sizeof block};
  EXPECT_EQ(ptrace(PTRACE_GETREGSET, pid, NT_PRSTATUS, &io), 0) << std::strerror(errno);
  return block;
}

void set_registers(pid_t pid, RegisterBlock& block) {
  iovec io{&block, sizeof block};
  ASSERT_EQ(ptrace(PTRACE_SETREGSET, pid, NT_PRSTATUS, &io), 0) << std::strerror(errno);
}

struct ProgramRun {
  std::string output;
  int status = -1;
  pid_t pid = 0;
  int output_fd = -1;
};

// Starts the program with its stdout on a pipe; traced: stopped at its exec.
ProgramRun start(bool traced) {
  int pipe_fds[2];
  EXPECT_EQ(pipe(pipe_fds), 0);
  ProgramRun run;
  run.pid = fork();
  if (run.pid == 0) {
    dup2(pipe_fds[1], 1);
    close(pipe_fds[0]);
    if (traced) ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    execl(kProgram.c_str(), kProgram.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(pipe_fds[1]);
  run.output_fd = pipe_fds[0];
  return run;
}

void finish(ProgramRun& run) {
  char buffer[64];
  ssize_t got = 0;
  while ((got = read(run.output_fd, buffer, sizeof buffer)) > 0) run.output.append(buffer, static_cast<size_t>(got));
  close(run.output_fd);
}

bool cpu_has(const std::string& feature) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("Features", 0) != 0) continue;
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
      if (word == feature) return true;
    }
  }
  return false;
}

// The VmFlags of the mapping that holds `address` (smaps: "bt" marks a BTI-guarded mapping).
std::string vm_flags_at(pid_t pid, uint64_t address) {
  std::ifstream smaps("/proc/" + std::to_string(pid) + "/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uint64_t start = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &start, &end) == 2 && line.find('-') < line.find(' ')) {
      inside = address >= start && address < end;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line.substr(8);
  }
  return {};
}

struct Site {
  std::unique_ptr<ProbedInstruction> insn;
  uint64_t slot = 0;
  uint64_t hits = 0;
};

TEST(Arm64ProbeArchUnderPtrace, EveryInstructionOfAGuardedProgramProbedOutputUnchanged) {
  ProgramRun untraced = start(false);
  finish(untraced);
  ASSERT_EQ(waitpid(untraced.pid, &untraced.status, 0), untraced.pid);
  ASSERT_TRUE(WIFEXITED(untraced.status) && WEXITSTATUS(untraced.status) == 0) << untraced.status;
  ASSERT_EQ(untraced.output.size(), 8u);

  auto elf = elf::ElfFile::open(kProgram);
  ASSERT_TRUE(elf) << elf.error().message;
  auto arch = probe_arch(insn::Arch::AArch64);
  ASSERT_TRUE(arch) << arch.error().message;
  const ProbeArch& probe = **arch;
  ASSERT_EQ(probe.breakpoint().size(), 4u);

  ProgramRun traced = start(true);
  int status = 0;
  ASSERT_EQ(waitpid(traced.pid, &status, 0), traced.pid);
  ASSERT_TRUE(WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP);  // at the exec
  PtraceMemory memory(traced.pid);

  const auto slots = elf->find_symbols("slot_area");
  ASSERT_EQ(slots.size(), 1u);
  uint64_t next_slot = slots[0]->address;
  std::map<uint64_t, Site> sites;
  std::map<StepPath, int> planned;
  for (const char* name : {"work", "leaf", "guarded_leaf"}) {
    const auto found = elf->find_symbols(name);
    ASSERT_EQ(found.size(), 1u) << name;
    const auto bytes = elf->function_bytes(*found[0]);
    ASSERT_FALSE(bytes.empty()) << name;
    for (uint64_t offset = 0; offset < bytes.size(); offset += 4) {
      const uint64_t address = found[0]->address + offset;
      // The checker accepts each, as the engine's caller requires.
      const auto check = check_probe_point(insn::Arch::AArch64, bytes, found[0]->address, address);
      ASSERT_TRUE(check.accepted()) << check.message();
      auto planned_insn = probe.plan(bytes.subspan(offset, 4), address);
      ASSERT_TRUE(planned_insn) << std::hex << address << ": " << planned_insn.error().message;
      Site site;
      site.insn = std::move(*planned_insn);
      ++planned[site.insn->path()];
      if (site.insn->path() == StepPath::OutOfLine) {
        site.slot = next_slot;
        next_slot += probe.slot_layout().slot_size;
        auto code = site.insn->slot_code(site.slot);
        ASSERT_TRUE(code) << code.error().message;
        ASSERT_TRUE(memory.write(site.slot, *code));
      }
      ASSERT_TRUE(memory.write(address, probe.breakpoint()));
      sites[address] = std::move(site);
    }
  }
  EXPECT_GE(planned[StepPath::OutOfLine], 20);
  EXPECT_GE(planned[StepPath::Emulate], 15);

  const auto work = elf->find_symbols("work");
  if (cpu_has("bti")) {
    EXPECT_NE(vm_flags_at(traced.pid, work[0]->address).find(" bt"), std::string::npos)
        << "the program's code is not BTI-guarded: " << vm_flags_at(traced.pid, work[0]->address);
  }

  uint64_t stops = 0;
  for (;;) {
    ASSERT_EQ(ptrace(PTRACE_CONT, traced.pid, nullptr, nullptr), 0);
    ASSERT_EQ(waitpid(traced.pid, &status, 0), traced.pid);
    if (WIFEXITED(status) || WIFSIGNALED(status)) break;
    ASSERT_TRUE(WIFSTOPPED(status));
    ASSERT_EQ(WSTOPSIG(status), SIGTRAP) << "the program got signal " << WSTOPSIG(status);
    RegisterBlock registers = get_registers(traced.pid);
    const uint64_t pc = probe.instruction_pointer(registers);
    auto site = sites.find(pc);
    ASSERT_NE(site, sites.end()) << "a stop at 0x" << std::hex << pc << " is not at one of the BRKs";
    ++site->second.hits;
    ++stops;
    if (site->second.insn->path() == StepPath::OutOfLine) {
      probe.set_instruction_pointer(registers, site->second.slot);
    } else {
      auto emulated = site->second.insn->emulate(registers, memory);
      ASSERT_TRUE(emulated) << emulated.error().message;
    }
    set_registers(traced.pid, registers);
  }
  finish(traced);
  ASSERT_TRUE(WIFEXITED(status)) << "the traced program was killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(traced.output, untraced.output);
  for (const auto& [address, site] : sites) EXPECT_GT(site.hits, 0u) << "never hit: 0x" << std::hex << address;
  std::printf("%zu probed instructions (%d out of line, %d simulated), %llu stops; pac %s, bti %s\n", sites.size(),
              planned[StepPath::OutOfLine], planned[StepPath::Emulate], static_cast<unsigned long long>(stops),
              cpu_has("paca") ? "on" : "off", cpu_has("bti") ? "on" : "off");
}

TEST(Arm64ProbeArchUnderPtrace, MisalignedAddressesAreRefusedWithEilseq) {
  auto arch = probe_arch(insn::Arch::AArch64);
  ASSERT_TRUE(arch);
  const uint8_t add[4] = {0x20, 0x00, 0x02, 0x8b};
  auto refused = (*arch)->plan(add, 0x400002);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("-EILSEQ"), std::string::npos) << refused.error().message;
  EXPECT_TRUE((*arch)->plan(add, 0x400004));
  EXPECT_FALSE(probe_arch(insn::Arch::X86_64));
}

}  // namespace
}  // namespace xprobe::arch
