#include "objdump_classes.h"

#include <array>
#include <cstdio>
#include <memory>
#include <regex>
#include <string_view>
#include <set>
#include <stdexcept>

namespace xprobe::test {

std::vector<ObjdumpInsn> disassemble_with_objdump(const std::string& path) {
  // The default output carries the raw word: "addr:\tword \tmnemonic\toperands".
  const std::string command = "aarch64-linux-gnu-objdump -d -w " + path + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) throw std::runtime_error("cannot run aarch64-linux-gnu-objdump");
  std::vector<ObjdumpInsn> out;
  std::array<char, 4096> buffer{};
  while (fgets(buffer.data(), static_cast<int>(buffer.size()), pipe.get()) != nullptr) {
    std::string_view line(buffer.data());
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    const auto colon = line.find(":\t");
    if (colon == std::string_view::npos) continue;
    const auto address_start = line.find_first_not_of(' ');
    if (address_start >= colon) continue;
    const std::string_view address = line.substr(address_start, colon - address_start);
    if (address.find_first_not_of("0123456789abcdef") != std::string_view::npos) continue;
    std::string_view rest = line.substr(colon + 2);
    if (rest.size() < 11 || rest.substr(8, 2) != " \t") continue;
    const std::string_view word = rest.substr(0, 8);
    if (word.find_first_not_of("0123456789abcdef") != std::string_view::npos) continue;
    rest.remove_prefix(10);
    const auto tab = rest.find('\t');
    ObjdumpInsn insn;
    insn.address = std::stoull(std::string(address), nullptr, 16);
    insn.word = static_cast<uint32_t>(std::stoul(std::string(word), nullptr, 16));
    insn.mnemonic = std::string(rest.substr(0, tab));
    while (!insn.mnemonic.empty() && insn.mnemonic.back() == ' ') insn.mnemonic.pop_back();
    // Data inside code (mapping symbol $d) is printed as .word/.short/.byte: not an instruction.
    if (insn.mnemonic == ".word" || insn.mnemonic == ".short" || insn.mnemonic == ".byte") continue;
    if (tab != std::string_view::npos) {
      std::string_view operands = rest.substr(tab + 1);
      operands = operands.substr(0, operands.find('\t'));  // drop "// comment" columns
      insn.operands = std::string(operands);
    }
    out.push_back(std::move(insn));
  }
  return out;
}

namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string first_operand(std::string_view operands) {
  const auto comma = operands.find(',');
  std::string op(operands.substr(0, comma));
  while (!op.empty() && op.back() == ' ') op.pop_back();
  return op;
}

std::string second_operand(std::string_view operands) {
  const auto comma = operands.find(',');
  if (comma == std::string_view::npos) return {};
  std::string op(operands.substr(comma + 1));
  while (!op.empty() && op.front() == ' ') op.erase(op.begin());
  const auto end = op.find_first_of(" \t,");
  return end == std::string::npos ? op : op.substr(0, end);
}

// objdump prints SVE and SME instructions with Z, P or ZA registers, apart from a few
// scalar-only ones.
bool is_sve_or_sme(std::string_view mnemonic, std::string_view operands) {
  static const std::set<std::string_view> kScalarOnly = {
      "rdvl", "addvl", "addpl", "cntb", "cnth", "cntw", "cntd", "incb", "inch", "incw", "incd", "decb", "dech",
      "decw", "decd", "sqincb", "sqinch", "sqincw", "sqincd", "uqincb", "uqinch", "uqincw", "uqincd", "sqdecb",
      "sqdech", "sqdecw", "sqdecd", "uqdecb", "uqdech", "uqdecw", "uqdecd", "setffr", "rdsvl", "addsvl",
      "addspl", "prfb", "prfh", "prfw", "prfd", "ctermeq", "ctermne"};
  if (kScalarOnly.count(mnemonic) != 0) return true;
  // A register token: starts after a separator with z or p and a digit (z3, p0, zt0) or is za*.
  for (size_t i = 0; i < operands.size(); ++i) {
    const bool token_start = i == 0 || std::string_view(" {,[").find(operands[i - 1]) != std::string_view::npos;
    if (!token_start) continue;
    const char c = operands[i];
    if (c != 'z' && c != 'p') continue;
    size_t j = i + 1;
    if (c == 'z' && j < operands.size() && (operands[j] == 'a' || operands[j] == 't')) {
      if (operands[j] == 'a') return true;  // za, za0h.s, ...
      ++j;                                  // zt0
    }
    if (j >= operands.size() || operands[j] < '0' || operands[j] > '9') continue;
    while (j < operands.size() && operands[j] >= '0' && operands[j] <= '9') ++j;
    if (j == operands.size() || std::string_view("./], }[").find(operands[j]) != std::string_view::npos) return true;
  }
  return false;
}

bool is_debug_register(std::string_view name) {
  static const std::array<std::string_view, 14> kPrefixes = {"dbg", "osdtr", "oseccr", "oslar", "oslsr", "osdlr",
                                                             "mdscr", "mdccsr", "mdccint", "mdrar", "trc", "brb",
                                                             "s2_", "mdselr"};
  for (auto prefix : kPrefixes)
    if (starts_with(name, prefix)) return true;
  return false;
}

// "s3_<op1>_c<n>_c<m>_<op2>": the op1 field, or -1 for a named register.
int generic_op1(std::string_view name) {
  static const std::regex kGeneric(R"(s([0-3])_([0-7])_c[0-9]+_c[0-9]+_[0-7])");
  std::cmatch m;
  if (!std::regex_match(name.begin(), name.end(), m, kGeneric)) return -1;
  return m[2].str()[0] - '0';
}

bool is_privileged_register(std::string_view name) {
  const int op1 = generic_op1(name);
  if (op1 >= 0) return op1 != 3;
  static const std::set<std::string_view> kUnsuffixedPrivileged = {"spsel", "currentel", "pan", "uao", "allint",
                                                                   "pm", "sp_el0", "spsr_irq", "spsr_abt",
                                                                   "spsr_und", "spsr_fiq", "elr_el0"};
  if (kUnsuffixedPrivileged.count(name) != 0) return true;
  return ends_with(name, "_el1") || ends_with(name, "_el12") || ends_with(name, "_el2") || ends_with(name, "_el3") ||
         ends_with(name, "_el02");
}

// objdump prints words of the op0 = 00/01 system space that match no hint, barrier or PSTATE
// row as MSR/MRS of "s0_..."/"s1_..." registers, but MSR/MRS (register) only exist for op0 = 2
// and 3: such words are unallocated.
bool is_not_a_system_register(std::string_view name) { return starts_with(name, "s0_") || starts_with(name, "s1_"); }

std::string msr_class(std::string_view operands) {
  const std::string target = first_operand(operands);
  if (is_not_a_system_register(target)) return "unallocated";
  const bool immediate = operands.find('#') != std::string_view::npos;
  if (immediate) {
    static const std::set<std::string_view> kPrivilegedPstate = {"spsel", "pan", "uao", "allint", "pm"};
    if (target == "daifset" || target == "daifclr") return "never";
    if (kPrivilegedPstate.count(target) != 0) return "never";
    if (starts_with(target, "s0_") || starts_with(target, "s1_") || starts_with(target, "s2_") ||
        starts_with(target, "s3_")) {
      // A system register written from xzr with a literal #: not a PSTATE form.
    } else {
      return "none";  // ssbs, dit, tco, svcr*
    }
  }
  if (target == "daif") return "never";
  if (is_debug_register(target)) return "never";
  if (is_privileged_register(target)) return "never";
  return "none";
}

// The registers Linux lets EL0 read by emulation: MIDR, MPIDR, REVIDR and the ID_* and MVFR*
// feature registers (and their generic s3_0_c0_* names).
bool is_emulated_id_register(std::string_view name) {
  return name == "midr_el1" || name == "mpidr_el1" || name == "revidr_el1" || starts_with(name, "id_") ||
         starts_with(name, "mvfr") || starts_with(name, "s3_0_c0_");
}

std::string mrs_class(std::string_view operands) {
  const std::string source = second_operand(operands);
  if (is_not_a_system_register(source)) return "unallocated";
  if (is_debug_register(source)) return "never";
  if (is_privileged_register(source) && !is_emulated_id_register(source)) return "never";
  return "none";
}

std::string sys_class(std::string_view mnemonic, std::string_view operands) {
  if (mnemonic == "sys" || mnemonic == "sysl" || mnemonic == "sysp") {
    // sys #op1, Cn, Cm, #op2{, Xt}; sysl Xt, #op1, ...
    const auto hash = operands.find('#');
    if (hash == std::string_view::npos) return "never";
    return operands[hash + 1] == '3' && (hash + 2 >= operands.size() || operands[hash + 2] == ',') ? "none"
                                                                                                   : "never";
  }
  const std::string op = first_operand(operands);
  if (mnemonic == "dc") {
    static const std::set<std::string_view> kEl0 = {"zva",    "cvac",   "cvau",    "civac",   "cvap",   "cvadp",
                                                    "gva",    "gzva",   "cgvac",   "cgdvac",  "cgvap",  "cgdvap",
                                                    "cgvadp", "cgdvadp", "cigvac", "cigdvac", "cvadp"};
    return kEl0.count(op) != 0 ? "none" : "never";
  }
  if (mnemonic == "ic") return op == "ivau" ? "none" : "never";
  if (mnemonic == "at" || mnemonic == "tlbi" || mnemonic == "tlbip" || mnemonic == "brb") return "never";
  return "none";  // cfp, dvp, cpp, cosp (EL0 prediction restriction), gcs* of EL0
}

}  // namespace

std::string expected_class(std::string_view mnemonic, std::string_view operands) {
  if (mnemonic == ".inst" || mnemonic == "udf") return "unallocated";
  if (is_sve_or_sme(mnemonic, operands)) return "sve";

  if (mnemonic == "b") return "b";
  if (mnemonic == "bl") return "bl";
  if (starts_with(mnemonic, "b.") || starts_with(mnemonic, "bc.")) return "bcond";
  static const std::set<std::string_view> kSame = {"cbz", "cbnz", "tbz", "tbnz", "adr", "adrp", "br", "blr", "ret"};
  if (kSame.count(mnemonic) != 0) return std::string(mnemonic);
  if (mnemonic == "braa" || mnemonic == "brab" || mnemonic == "braaz" || mnemonic == "brabz") return "br";
  if (mnemonic == "blraa" || mnemonic == "blrab" || mnemonic == "blraaz" || mnemonic == "blrabz") return "blr";
  if (mnemonic == "retaa" || mnemonic == "retab") return "ret";

  // Literal loads print a bare address instead of a [base...] memory operand.
  const bool literal = operands.find('[') == std::string_view::npos;
  if (literal && mnemonic == "ldr") {
    const std::string reg = first_operand(operands);
    return (reg[0] == 'w' || reg[0] == 'x') ? "ldr_lit" : "ldr_lit_simd";
  }
  if (literal && mnemonic == "ldrsw") return "ldrsw_lit";
  if (literal && mnemonic == "prfm") return "prfm_lit";

  static const std::set<std::string_view> kExclusive = {
      "ldxr",  "ldxrb",  "ldxrh",  "ldaxr", "ldaxrb", "ldaxrh", "ldxp", "ldaxp", "stxr",
      "stxrb", "stxrh",  "stlxr",  "stlxrb", "stlxrh", "stxp",   "stlxp"};
  if (kExclusive.count(mnemonic) != 0) return "exclusive";

  static const std::set<std::string_view> kNever = {"brk",   "hlt",    "hvc",    "smc",   "svc",   "eret",
                                                    "eretaa", "eretab", "drps",  "dcps1", "dcps2", "dcps3"};
  if (kNever.count(mnemonic) != 0) return "never";

  static const std::set<std::string_view> kHints = {
      "nop",     "yield",   "wfe",     "wfi",     "sev",     "sevl",    "dgh",       "xpaclri", "pacia1716",
      "pacib1716", "autia1716", "autib1716", "paciaz", "paciasp", "pacibz", "pacibsp", "autiaz",    "autiasp",
      "autibz",  "autibsp", "esb",     "psb",     "tsb",     "csdb",    "bti",     "clrbhb",    "hint",
      "chkfeat", "gcsb",    "stshh"};
  if (kHints.count(mnemonic) != 0) return "hint";

  if (mnemonic == "msr") return msr_class(operands);
  if (mnemonic == "mrs") return mrs_class(operands);
  static const std::set<std::string_view> kSystem = {"sys", "sysl", "sysp", "dc", "ic", "at", "tlbi", "tlbip",
                                                     "brb", "cfp", "dvp", "cpp", "cosp"};
  if (kSystem.count(mnemonic) != 0) return sys_class(mnemonic, operands);
  return "none";
}

}  // namespace xprobe::test
