#include "unicorn_oracle.h"

#include <unicorn/unicorn.h>

#include <array>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "sim/arm64/simulator.h"

namespace xprobe::test {

namespace {

constexpr uint64_t kPage = 0x1000;

const std::array<const char*, static_cast<size_t>(GeneratedClass::Count)> kNames = {
    "adr", "adrp", "b", "bl", "b.cond", "cbz", "cbnz", "tbz", "tbnz", "ldr w lit", "ldr x lit", "ldr s lit",
    "ldr d lit", "ldr q lit", "ldrsw lit", "prfm lit", "br", "blr", "ret", "braa/brab", "blraa/blrab",
    "braaz/brabz", "blraaz/blrabz", "retaa/retab"};

constexpr uint64_t kWindowSize = 4u << 20;
constexpr int kWindowCount = 4;
constexpr uint64_t kCasesPerPlacement = 1024;
constexpr uint32_t kNop = 0xd503201f;

// What the simulator may read: the windows' NOP fill under this case's overlay; nothing else.
class WindowMemory : public sim::arm64::MemoryReader {
 public:
  WindowMemory(const std::vector<uint64_t>& windows, const std::map<uint64_t, uint8_t>& overlay)
      : windows_(windows), overlay_(overlay) {}

  bool read(uint64_t address, void* buffer, size_t length) override {
    auto* out = static_cast<uint8_t*>(buffer);
    for (size_t i = 0; i < length; ++i) {
      const uint64_t at = address + i;
      bool mapped = false;
      for (const uint64_t base : windows_) mapped = mapped || (at >= base && at - base < kWindowSize);
      if (!mapped) return false;
      const auto it = overlay_.find(at);
      out[i] = it != overlay_.end() ? it->second : static_cast<uint8_t>(kNop >> (8 * (at & 3)));
    }
    return true;
  }

 private:
  const std::vector<uint64_t>& windows_;
  const std::map<uint64_t, uint8_t>& overlay_;
};

bool on_unmapped_fetch(uc_engine*, uc_mem_type, uint64_t address, int, int64_t, void* user_data) {
  static_cast<UnicornOracle*>(user_data)->unmapped_fetch = address;
  return false;
}

void check(uc_err err, const char* what) {
  if (err != UC_ERR_OK) throw std::runtime_error(std::string(what) + ": " + uc_strerror(err));
}

int x_register_id(int n) {
  if (n == 29) return UC_ARM64_REG_X29;
  if (n == 30) return UC_ARM64_REG_X30;
  return UC_ARM64_REG_X0 + n;
}

}  // namespace

const char* generated_class_name(GeneratedClass cls) { return kNames[static_cast<size_t>(cls)]; }

UnicornOracle::UnicornOracle(uint64_t seed) : random_(seed) {
  check(uc_open(UC_ARCH_ARM64, UC_MODE_ARM, &uc_), "uc_open");
  // The "max" CPU implements FEAT_PAuth, so BRAA & co. decode (their keys are disabled).
  check(uc_ctl_set_cpu_model(uc_, UC_CPU_ARM64_MAX), "set cpu model");
  uint64_t cpacr = 3u << 20;  // FPEN: let LDR (literal, SIMD&FP) run
  check(uc_reg_write(uc_, UC_ARM64_REG_CPACR_EL1, &cpacr), "CPACR_EL1");
  check(uc_hook_add(uc_, &fetch_hook_, UC_HOOK_MEM_FETCH_UNMAPPED, reinterpret_cast<void*>(on_unmapped_fetch), this,
                    1, 0),
        "fetch hook");
  place_windows();
}

void UnicornOracle::place_windows() {
  for (const uint64_t base : windows_) check(uc_mem_unmap(uc_, base, kWindowSize), "uc_mem_unmap");
  windows_.clear();
  const std::vector<uint32_t> nops(kWindowSize / 4, kNop);
  while (windows_.size() < kWindowCount) {
    // 4 MiB-aligned, far from zero and from the top of the 48-bit space, not overlapping.
    const uint64_t base = ((uint64_t{1} << 34) + random_() % ((uint64_t{1} << 47) - (uint64_t{1} << 35))) &
                          ~(kWindowSize - 1);
    bool overlaps = false;
    for (const uint64_t other : windows_) overlaps = overlaps || other == base;
    if (overlaps) continue;
    check(uc_mem_map(uc_, base, kWindowSize, UC_PROT_ALL), "uc_mem_map");
    check(uc_mem_write(uc_, base, nops.data(), kWindowSize), "uc_mem_write");
    windows_.push_back(base);
  }
  cases_in_place_ = 0;
}

void UnicornOracle::write(uint64_t address, const void* data, size_t length) {
  check(uc_mem_write(uc_, address, data, length), "uc_mem_write");
  for (size_t i = 0; i < length; ++i) overlay_[address + i] = static_cast<const uint8_t*>(data)[i];
}

UnicornOracle::~UnicornOracle() {
  if (uc_ != nullptr) uc_close(uc_);
}

uint32_t UnicornOracle::random_word(GeneratedClass cls) {
  auto bits = [&](unsigned n) { return static_cast<uint32_t>(random_() & ((uint64_t{1} << n) - 1)); };
  const uint32_t reg = bits(5);
  switch (cls) {
    case GeneratedClass::Adr: return 0x10000000 | bits(2) << 29 | bits(19) << 5 | reg;
    case GeneratedClass::Adrp: return 0x90000000 | bits(2) << 29 | bits(19) << 5 | reg;
    case GeneratedClass::B: return 0x14000000 | bits(26);
    case GeneratedClass::Bl: return 0x94000000 | bits(26);
    case GeneratedClass::BCond: return 0x54000000 | bits(19) << 5 | bits(4);
    case GeneratedClass::Cbz: return 0x34000000 | bits(1) << 31 | bits(19) << 5 | reg;
    case GeneratedClass::Cbnz: return 0x35000000 | bits(1) << 31 | bits(19) << 5 | reg;
    case GeneratedClass::Tbz: return 0x36000000 | bits(1) << 31 | bits(5) << 19 | bits(14) << 5 | reg;
    case GeneratedClass::Tbnz: return 0x37000000 | bits(1) << 31 | bits(5) << 19 | bits(14) << 5 | reg;
    case GeneratedClass::LdrW: return 0x18000000 | bits(19) << 5 | reg;
    case GeneratedClass::LdrX: return 0x58000000 | bits(19) << 5 | reg;
    case GeneratedClass::LdrS: return 0x1c000000 | bits(19) << 5 | reg;
    case GeneratedClass::LdrD: return 0x5c000000 | bits(19) << 5 | reg;
    case GeneratedClass::LdrQ: return 0x9c000000 | bits(19) << 5 | reg;
    case GeneratedClass::Ldrsw: return 0x98000000 | bits(19) << 5 | reg;
    case GeneratedClass::Prfm: return 0xd8000000 | bits(19) << 5 | reg;
    case GeneratedClass::Br: return 0xd61f0000 | reg << 5;
    case GeneratedClass::Blr: return 0xd63f0000 | reg << 5;
    case GeneratedClass::Ret: return 0xd65f0000 | reg << 5;
    case GeneratedClass::Braa: return 0xd71f0800 | bits(1) << 10 | reg << 5 | bits(5);
    case GeneratedClass::Blraa: return 0xd73f0800 | bits(1) << 10 | reg << 5 | bits(5);
    case GeneratedClass::Braaz: return 0xd61f081f | bits(1) << 10 | reg << 5;
    case GeneratedClass::Blraaz: return 0xd63f081f | bits(1) << 10 | reg << 5;
    case GeneratedClass::Retaa: return 0xd65f0bff | bits(1) << 10;
    case GeneratedClass::Count: break;
  }
  return 0;
}

void UnicornOracle::run(GeneratedClass cls, uint64_t count, DifferentialStats& stats) {
  for (uint64_t i = 0; i < count; ++i) run_one(cls, stats);
}

void UnicornOracle::run_one(GeneratedClass cls, DifferentialStats& stats) {
  if (++cases_in_place_ > kCasesPerPlacement) place_windows();
  const uint64_t window = windows_[random_() % windows_.size()];
  const uint64_t pc = (window + kWindowSize / 4 + 64 + random_() % (kWindowSize / 2 - 128)) & ~uint64_t{3};
  uint32_t word = random_word(cls);
  auto insn = insn::arm64::decode(word, pc);
  // A literal within a few instructions of pc would put random bytes where QEMU translates
  // ahead (some unallocated words make QEMU 5 abort): draw such rare encodings again.
  while (insn.literal_size != 0 && insn.target + 16 > pc && insn.target < pc + 64) {
    word = random_word(cls);
    insn = insn::arm64::decode(word, pc);
  }

  sim::arm64::Registers regs;
  for (auto& x : regs.x) {
    // Values the conditions care about: zero, single bits, small, and random.
    switch (random_() % 4) {
      case 0: x = 0; break;
      case 1: x = uint64_t{1} << (random_() % 64); break;
      case 2: x = (random_() % 2) ? random_() & 0xffffffff : random_() | 0xffffffff00000000; break;
      default: x = random_(); break;
    }
  }
  regs.sp = random_() & ~uint64_t{15};
  regs.nzcv = static_cast<uint32_t>(random_() & 0xf) << 28;
  for (auto& v : regs.v)
    for (auto& b : v) b = static_cast<uint8_t>(random_());
  regs.pc = pc;
  const bool register_branch = insn.cls == insn::arm64::InsnClass::Br || insn.cls == insn::arm64::InsnClass::Blr ||
                               insn.cls == insn::arm64::InsnClass::Ret;
  if (register_branch && insn.rn != 31) {
    switch (random_() % 4) {
      case 0: regs.x[insn.rn] = (window + random_() % kWindowSize) & ~uint64_t{3}; break;  // mapped
      case 1: break;                                                                     // anything
      default: regs.x[insn.rn] = random_() & 0x0000'ffff'ffff'fffcull; break;             // unmapped
    }
  }

  overlay_.clear();
  if (insn.literal_size != 0) {
    std::array<uint8_t, 16> literal{};
    for (auto& b : literal) b = static_cast<uint8_t>(random_());
    write(insn.target, literal.data(), literal.size());
  }
  write(pc, &word, 4);
  write(pc + 4, &kNop, 4);
  check(uc_ctl_remove_cache(uc_, pc, pc + 8), "remove cache");

  for (int n = 0; n < 31; ++n) check(uc_reg_write(uc_, x_register_id(n), &regs.x[n]), "write X");
  check(uc_reg_write(uc_, UC_ARM64_REG_SP, &regs.sp), "write SP");
  uint64_t nzcv = regs.nzcv;
  check(uc_reg_write(uc_, UC_ARM64_REG_NZCV, &nzcv), "write NZCV");
  for (int n = 0; n < 32; ++n) check(uc_reg_write(uc_, UC_ARM64_REG_Q0 + n, regs.v[n].data()), "write Q");
  check(uc_reg_write(uc_, UC_ARM64_REG_PC, &pc), "write PC");

  unmapped_fetch.reset();
  const uc_err run_status = uc_emu_start(uc_, pc, 0, 0, 1);

  sim::arm64::Registers unicorn;
  for (int n = 0; n < 31; ++n) check(uc_reg_read(uc_, x_register_id(n), &unicorn.x[n]), "read X");
  check(uc_reg_read(uc_, UC_ARM64_REG_SP, &unicorn.sp), "read SP");
  uint64_t unicorn_nzcv = 0;
  check(uc_reg_read(uc_, UC_ARM64_REG_NZCV, &unicorn_nzcv), "read NZCV");
  unicorn.nzcv = static_cast<uint32_t>(unicorn_nzcv);
  for (int n = 0; n < 32; ++n) check(uc_reg_read(uc_, UC_ARM64_REG_Q0 + n, unicorn.v[n].data()), "read Q");
  check(uc_reg_read(uc_, UC_ARM64_REG_PC, &unicorn.pc), "read PC");

  WindowMemory memory(windows_, overlay_);
  const auto simulated = sim::arm64::simulate(insn, pc, regs, memory);
  ++stats.cases;
  ++stats.per_class[generated_class_name(cls)];
  // Restore the NOP fill (the executed bytes also leave Unicorn's translation cache).
  for (const auto& [address, byte] : overlay_) {
    const auto nop_byte = static_cast<uint8_t>(kNop >> (8 * (address & 3)));
    check(uc_mem_write(uc_, address, &nop_byte, 1), "restore");
  }
  check(uc_ctl_remove_cache(uc_, pc, pc + 8), "remove cache");

  std::ostringstream why;
  // Execution left the windows: Unicorn stops at the fetch, and the fetch address must be
  // where the simulator says execution continues.
  const bool stopped_at_fetch = run_status == UC_ERR_FETCH_UNMAPPED && unmapped_fetch.has_value();
  if (run_status != UC_ERR_OK && !stopped_at_fetch) why << "unicorn: " << uc_strerror(run_status) << "; ";
  if (stopped_at_fetch && simulated.ok() && *unmapped_fetch != simulated->pc)
    why << "fetch at " << std::hex << *unmapped_fetch << " but simulated pc " << simulated->pc << "; ";
  if (!simulated.ok()) {
    why << "simulator: " << simulated.error().message;
  } else {
    const auto& ours = simulated.value();
    if (ours.pc != unicorn.pc) why << "pc ours " << std::hex << ours.pc << " unicorn " << unicorn.pc << "; ";
    for (int n = 0; n < 31; ++n)
      if (ours.x[n] != unicorn.x[n])
        why << "x" << std::dec << n << " ours " << std::hex << ours.x[n] << " unicorn " << unicorn.x[n] << "; ";
    if (ours.sp != unicorn.sp) why << "sp differs; ";
    if ((ours.nzcv & 0xf0000000u) != (unicorn.nzcv & 0xf0000000u)) why << "nzcv differs; ";
    for (int n = 0; n < 32; ++n)
      if (ours.v[n] != unicorn.v[n]) why << "v" << std::dec << n << " differs; ";
  }
  const std::string problem = why.str();
  if (!problem.empty()) {
    ++stats.mismatches;
    if (stats.first_mismatches.size() < 20) {
      std::ostringstream line;
      line << generated_class_name(cls) << " " << std::hex << word << " at " << pc << ": " << problem;
      stats.first_mismatches.push_back(line.str());
    }
  }
}

}  // namespace xprobe::test
