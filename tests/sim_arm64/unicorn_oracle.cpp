#include "unicorn_oracle.h"

#include <unicorn/unicorn.h>

#include <array>
#include <cstring>
#include <set>
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

// The pages a case maps, with their contents (the simulator's memory reader reads the same).
class PageMemory : public sim::arm64::MemoryReader {
 public:
  std::map<uint64_t, std::array<uint8_t, kPage>> pages;

  bool read(uint64_t address, void* buffer, size_t length) override {
    auto* out = static_cast<uint8_t*>(buffer);
    for (size_t i = 0; i < length; ++i) {
      const auto it = pages.find((address + i) & ~(kPage - 1));
      if (it == pages.end()) return false;
      out[i] = it->second[(address + i) & (kPage - 1)];
    }
    return true;
  }
};

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
  const uint32_t word = random_word(cls);
  // A pc far from zero and from the top, so that every target stays in the 48-bit space.
  const uint64_t pc = ((uint64_t{1} << 34) + (random_() % ((uint64_t{1} << 46) - (uint64_t{1} << 35)))) & ~uint64_t{3};
  const auto insn = insn::arm64::decode(word, pc);

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
  if (register_branch && insn.rn != 31 && random_() % 8 != 0) {
    // A target Unicorn can fetch from: 4-aligned, inside the 48-bit physical space.
    regs.x[insn.rn] = random_() & 0x0000'ffff'ffff'fffcull;
  }

  PageMemory memory;
  auto add_page = [&](uint64_t page) {
    auto [it, inserted] = memory.pages.try_emplace(page);
    if (inserted)
      for (auto& b : it->second) b = static_cast<uint8_t>(random_());
  };
  add_page(pc & ~(kPage - 1));
  if (insn.has_target && insn.literal_size != 0) {
    add_page(insn.target & ~(kPage - 1));
    add_page((insn.target + insn.literal_size - 1) & ~(kPage - 1));
  }
  // Code pages hold NOPs around the instruction: QEMU translates ahead of the one instruction
  // it executes, and some random words make it abort. A literal page that is also the code
  // page keeps its random bytes except at pc and pc + 4.
  constexpr uint32_t kNop = 0xd503201f;
  auto fill_nops = [&](uint64_t page) {
    auto& bytes = memory.pages[page];
    for (size_t i = 0; i < kPage; i += 4) std::memcpy(&bytes[i], &kNop, 4);
  };
  // Unicorn fetches the next instruction before it stops: map where execution lands.
  std::set<uint64_t> landing_pages = {(pc + 4) & ~(kPage - 1)};
  if (insn.has_target && insn.literal_size == 0 && insn.cls != insn::arm64::InsnClass::Adr &&
      insn.cls != insn::arm64::InsnClass::Adrp)
    landing_pages.insert(insn.target & ~(kPage - 1));
  if (register_branch) landing_pages.insert((insn.rn == 31 ? 0 : regs.x[insn.rn]) & ~(kPage - 1));
  for (const uint64_t page : landing_pages)
    if (memory.pages.count(page) == 0) fill_nops(page);
  const uint64_t code_page_base = pc & ~(kPage - 1);
  const bool code_page_has_literal =
      insn.literal_size != 0 && ((insn.target & ~(kPage - 1)) == code_page_base ||
                                 ((insn.target + insn.literal_size - 1) & ~(kPage - 1)) == code_page_base);
  if (!code_page_has_literal) fill_nops(code_page_base);
  auto& code_page = memory.pages[code_page_base];
  std::memcpy(&code_page[pc & (kPage - 1)], &word, 4);
  if ((pc & (kPage - 1)) + 4 < kPage) std::memcpy(&code_page[(pc & (kPage - 1)) + 4], &kNop, 4);

  for (const auto& [page, bytes] : memory.pages) {
    check(uc_mem_map(uc_, page, kPage, UC_PROT_ALL), "uc_mem_map");
    check(uc_mem_write(uc_, page, bytes.data(), kPage), "uc_mem_write");
  }
  for (int n = 0; n < 31; ++n) check(uc_reg_write(uc_, x_register_id(n), &regs.x[n]), "write X");
  check(uc_reg_write(uc_, UC_ARM64_REG_SP, &regs.sp), "write SP");
  uint64_t nzcv = regs.nzcv;
  check(uc_reg_write(uc_, UC_ARM64_REG_NZCV, &nzcv), "write NZCV");
  for (int n = 0; n < 32; ++n) check(uc_reg_write(uc_, UC_ARM64_REG_Q0 + n, regs.v[n].data()), "write Q");
  check(uc_reg_write(uc_, UC_ARM64_REG_PC, &pc), "write PC");

  const uc_err run_status = uc_emu_start(uc_, pc, 0, 0, 1);

  sim::arm64::Registers unicorn;
  for (int n = 0; n < 31; ++n) check(uc_reg_read(uc_, x_register_id(n), &unicorn.x[n]), "read X");
  check(uc_reg_read(uc_, UC_ARM64_REG_SP, &unicorn.sp), "read SP");
  uint64_t unicorn_nzcv = 0;
  check(uc_reg_read(uc_, UC_ARM64_REG_NZCV, &unicorn_nzcv), "read NZCV");
  unicorn.nzcv = static_cast<uint32_t>(unicorn_nzcv);
  for (int n = 0; n < 32; ++n) check(uc_reg_read(uc_, UC_ARM64_REG_Q0 + n, unicorn.v[n].data()), "read Q");
  check(uc_reg_read(uc_, UC_ARM64_REG_PC, &unicorn.pc), "read PC");
  for (const auto& [page, bytes] : memory.pages) check(uc_mem_unmap(uc_, page, kPage), "uc_mem_unmap");

  const auto simulated = sim::arm64::simulate(insn, pc, regs, memory);
  ++stats.cases;
  ++stats.per_class[generated_class_name(cls)];
  std::ostringstream why;
  if (run_status != UC_ERR_OK) why << "unicorn: " << uc_strerror(run_status) << "; ";
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
