#include "source/variable_access.h"

#include <dwarf.h>

#include <cctype>
#include <cstdlib>
#include <fmt/format.h>
#include <memory>
#include <set>
#include <vector>

#include "arch/source_registers.h"

namespace xprobe::source {
namespace {

// Where a value is, as the fetch-argument text can reach it.
struct Location {
  enum class Kind : uint8_t {
    Register,  // the value is register `base` ("%di")
    Memory,    // the value is in memory at value(base) + offset (or static_address + offset)
    Value,     // the value is value(base) + offset itself (a DWARF stack value)
    Constant,  // the value is `constant`
    Pieces,    // the variable is split (DW_OP_piece); `offset` is the byte wanted within it
  };
  Kind kind = Kind::Memory;
  std::string base;
  int64_t offset = 0;
  std::optional<uint64_t> static_address;  // link-time address instead of base
  uint64_t constant = 0;
  std::shared_ptr<const std::vector<struct Piece>> pieces;
};

// Bytes [offset, offset + size) of a split variable, and where they are (none: optimised out).
struct Piece {
  uint64_t offset = 0;
  uint64_t size = 0;
  std::optional<Location> where;
  std::string why_not;  // why `where` is empty
};

struct ScopeList {
  Dwarf_Die* dies = nullptr;
  int count = 0;
  ~ScopeList() { std::free(dies); }
};

std::string deref_text(int64_t offset, const std::string& base) {
  return offset < 0 ? fmt::format("-{}({})", static_cast<uint64_t>(-offset), base) : fmt::format("+{}({})", offset, base);
}

const char* die_name(Dwarf_Die* die) {
  Dwarf_Attribute storage;
  Dwarf_Attribute* name = dwarf_attr_integrate(die, DW_AT_name, &storage);
  return name != nullptr ? dwarf_formstring(name) : nullptr;
}

bool type_of(Dwarf_Die* die, Dwarf_Die* type) {
  Dwarf_Attribute storage;
  Dwarf_Attribute* attribute = dwarf_attr_integrate(die, DW_AT_type, &storage);
  return attribute != nullptr && dwarf_formref_die(attribute, type) != nullptr;
}

// Typedefs and qualifiers say nothing about where the bits are.
bool strip_type(Dwarf_Die* type) {
  for (int hops = 0; hops < 32; ++hops) {
    const int tag = dwarf_tag(type);
    if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type &&
        tag != DW_TAG_restrict_type && tag != DW_TAG_atomic_type)
      return true;
    if (!type_of(type, type)) return false;  // const void
  }
  return false;
}

uint64_t unsigned_attribute(Dwarf_Die* die, unsigned name, uint64_t fallback = 0) {
  Dwarf_Attribute storage;
  Dwarf_Word value = 0;
  Dwarf_Attribute* attribute = dwarf_attr_integrate(die, name, &storage);
  if (attribute == nullptr || dwarf_formudata(attribute, &value) != 0) return fallback;
  return value;
}

std::string type_text(Dwarf_Die* die, int depth = 0);

std::string type_text(Dwarf_Die* die, int depth) {
  if (depth > 16) return "?";
  const char* name = dwarf_diename(die);
  Dwarf_Die inner;
  const bool has_inner = type_of(die, &inner);
  switch (dwarf_tag(die)) {
    case DW_TAG_base_type:
    case DW_TAG_typedef: return name != nullptr ? name : "?";
    case DW_TAG_structure_type: return fmt::format("struct {}", name != nullptr ? name : "<anonymous>");
    case DW_TAG_class_type: return fmt::format("class {}", name != nullptr ? name : "<anonymous>");
    case DW_TAG_union_type: return fmt::format("union {}", name != nullptr ? name : "<anonymous>");
    case DW_TAG_enumeration_type: return fmt::format("enum {}", name != nullptr ? name : "<anonymous>");
    case DW_TAG_pointer_type: return (has_inner ? type_text(&inner, depth + 1) : "void") + " *";
    case DW_TAG_reference_type: return (has_inner ? type_text(&inner, depth + 1) : "void") + " &";
    case DW_TAG_rvalue_reference_type: return (has_inner ? type_text(&inner, depth + 1) : "void") + " &&";
    case DW_TAG_const_type: return (has_inner ? type_text(&inner, depth + 1) : "void") + " const";
    case DW_TAG_volatile_type: return (has_inner ? type_text(&inner, depth + 1) : "void") + " volatile";
    case DW_TAG_array_type: {
      std::string text = has_inner ? type_text(&inner, depth + 1) : "?";
      Dwarf_Die child;
      if (dwarf_child(die, &child) == 0) {
        do {
          if (dwarf_tag(&child) != DW_TAG_subrange_type) continue;
          const uint64_t upper = unsigned_attribute(&child, DW_AT_upper_bound, UINT64_MAX);
          const uint64_t count = upper == UINT64_MAX ? unsigned_attribute(&child, DW_AT_count) : upper + 1;
          text += fmt::format("[{}]", count);
        } while (dwarf_siblingof(&child, &child) == 0);
      }
      return text;
    }
    case DW_TAG_subroutine_type: return "function";
    default: return name != nullptr ? name : "?";
  }
}

class Compiler {
 public:
  Compiler(const DebugInfo& info, uint64_t pc, const StaticAddressWriter& writer)
      : info_(info), pc_(pc), static_address_(writer) {}

  Result<CompiledVariable> compile(const VariableRequest& request) {
    std::string_view text = request.expression;
    size_t identifier = 0;
    while (identifier < text.size() && (std::isalnum(static_cast<unsigned char>(text[identifier])) || text[identifier] == '_'))
      ++identifier;
    const std::string name(text.substr(0, identifier));
    if (name.empty()) return fail(request, "not a variable name");
    if (auto status = open_scopes(); !status) return status.error();
    Dwarf_Die variable;
    if (!find_variable(name, &variable)) {
      std::vector<std::string> visible = names(false);
      return fail(request, fmt::format("no variable '{}' in scope at {:#x} (in scope: {})", name, pc_,
                                       visible.empty() ? "none" : fmt::format("{}", fmt::join(visible, ", "))));
    }
    auto location = variable_location(&variable, name);
    if (!location) return fail(request, location.error().message);
    Dwarf_Die type;
    if (!type_of(&variable, &type)) return fail(request, fmt::format("'{}' has no type", name));
    Location current = *location;
    std::string path = name;
    text.remove_prefix(identifier);
    unsigned bit_size = 0;
    uint64_t bit_offset = 0;
    while (!text.empty()) {
      if (bit_size != 0) return fail(request, "a bitfield has no members");
      if (!strip_type(&type)) return fail(request, fmt::format("'{}' has type void", path));
      if (auto settled = settle_pointer(current, &type, path); !settled) return fail(request, settled.error().message);
      if (!follow_reference(current, type)) return fail(request, fmt::format("'{}' cannot be read", path));
      if (text.starts_with("->") || text.starts_with(".")) {
        const bool arrow = text[0] == '-';
        text.remove_prefix(arrow ? 2 : 1);
        size_t end = 0;
        while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) ++end;
        const std::string member(text.substr(0, end));
        text.remove_prefix(end);
        if (member.empty()) return fail(request, fmt::format("a member name is missing after '{}'", path));
        if (arrow) {
          if (dwarf_tag(&type) != DW_TAG_pointer_type)
            return fail(request, fmt::format("'{}' is not a pointer ({}): write '.{}'", path, type_text(&type), member));
          auto pointer = value_text(current, path);
          if (!pointer) return fail(request, pointer.error().message);
          current = Location{Location::Kind::Memory, *pointer, 0, std::nullopt, 0, nullptr};
          if (!type_of(&type, &type) || !strip_type(&type)) return fail(request, fmt::format("'{}' points to void", path));
        } else if (dwarf_tag(&type) == DW_TAG_pointer_type) {
          return fail(request, fmt::format("'{}' is a pointer: write '->{}'", path, member));
        }
        if (current.kind != Location::Kind::Memory && current.kind != Location::Kind::Pieces)
          return fail(request, fmt::format("'{}' is held in a register, not memory: its members cannot be read", path));
        auto found = find_member(&type, member, current.offset, bit_size, bit_offset);
        if (!found) return fail(request, fmt::format("'{}' ({}) {}", path, type_text(&type), found.error().message));
        type = *found;
        path += (arrow ? "->" : ".") + member;
        continue;
      }
      if (text.starts_with("[")) {
        const size_t close = text.find(']');
        if (close == std::string_view::npos) return fail(request, "a '[' without its ']'");
        const std::string digits(text.substr(1, close - 1));
        char* end = nullptr;
        const long long index = std::strtoll(digits.c_str(), &end, 0);
        if (digits.empty() || end == nullptr || *end != '\0' || index < 0)
          return fail(request, fmt::format("'{}' is not an array index", digits));
        text.remove_prefix(close + 1);
        Dwarf_Die element;
        if (dwarf_tag(&type) == DW_TAG_array_type) {
          if (current.kind != Location::Kind::Memory && current.kind != Location::Kind::Pieces)
            return fail(request, fmt::format("'{}' is not in memory", path));
          Dwarf_Word count = 0;
          if (array_count(&type, count) && static_cast<uint64_t>(index) >= count)
            return fail(request, fmt::format("index {} is outside '{}' ({})", index, path, type_text(&type)));
          if (!type_of(&type, &element)) return fail(request, "an array without an element type");
        } else if (dwarf_tag(&type) == DW_TAG_pointer_type) {
          auto pointer = value_text(current, path);
          if (!pointer) return fail(request, pointer.error().message);
          current = Location{Location::Kind::Memory, *pointer, 0, std::nullopt, 0, nullptr};
          if (!type_of(&type, &element)) return fail(request, fmt::format("'{}' points to void", path));
        } else {
          return fail(request, fmt::format("'{}' ({}) is neither an array nor a pointer", path, type_text(&type)));
        }
        Dwarf_Word element_size = 0;
        if (dwarf_aggregate_size(&element, &element_size) != 0 || element_size == 0)
          return fail(request, fmt::format("the elements of '{}' have no size", path));
        current.offset += static_cast<int64_t>(element_size) * index;
        type = element;
        path += fmt::format("[{}]", index);
        continue;
      }
      return fail(request, fmt::format("'{}' cannot follow '{}' (members are ->NAME or .NAME, elements [N])", text, path));
    }
    return finish(request, current, type, path, bit_size, bit_offset);
  }

  Status open_scopes() {
    Dwarf_Die cu;
    if (dwarf_addrdie(info_.dwarf(), pc_, &cu) == nullptr)
      return make_error(fmt::format("no compilation unit of the debug information covers {:#x}", pc_));
    scopes_.count = dwarf_getscopes(&cu, pc_, &scopes_.dies);
    if (scopes_.count <= 0) return make_error(fmt::format("no scope of the debug information covers {:#x}", pc_));
    return {};
  }

  // Names visible at the pc, innermost first.
  std::vector<std::string> names(bool parameters_only) {
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (int i = 0; i < scopes_.count; ++i) {
      const int scope_tag = dwarf_tag(&scopes_.dies[i]);
      if (scope_tag == DW_TAG_compile_unit) break;  // globals are not "$vars" (as perf)
      Dwarf_Die child;
      if (dwarf_child(&scopes_.dies[i], &child) != 0) continue;
      do {
        const int tag = dwarf_tag(&child);
        if (tag != DW_TAG_formal_parameter && (parameters_only || tag != DW_TAG_variable)) continue;
        const char* name = die_name(&child);
        if (name != nullptr && seen.insert(name).second) out.emplace_back(name);
      } while (dwarf_siblingof(&child, &child) == 0);
      if (scope_tag == DW_TAG_subprogram || scope_tag == DW_TAG_inlined_subroutine) {
        if (parameters_only) break;
      }
      if (scope_tag == DW_TAG_subprogram) break;
    }
    return out;
  }

  std::vector<ScopeVariable> describe() {
    std::vector<ScopeVariable> out;
    if (!open_scopes()) return out;
    std::set<std::string> seen;
    for (int i = 0; i < scopes_.count; ++i) {
      const int scope_tag = dwarf_tag(&scopes_.dies[i]);
      if (scope_tag == DW_TAG_compile_unit) break;
      Dwarf_Die child;
      if (dwarf_child(&scopes_.dies[i], &child) == 0) {
        do {
          const int tag = dwarf_tag(&child);
          if (tag != DW_TAG_formal_parameter && tag != DW_TAG_variable) continue;
          const char* name = die_name(&child);
          if (name == nullptr || !seen.insert(name).second) continue;
          ScopeVariable variable;
          variable.name = name;
          variable.parameter = tag == DW_TAG_formal_parameter;
          Dwarf_Die type;
          variable.type = type_of(&child, &type) ? type_text(&type) : "?";
          variable.available = variable_location(&child, name).ok();
          out.push_back(std::move(variable));
        } while (dwarf_siblingof(&child, &child) == 0);
      }
      if (scope_tag == DW_TAG_subprogram) break;
    }
    return out;
  }

 private:
  Error fail(const VariableRequest& request, const std::string& why) const {
    return make_error(fmt::format("'{}': {}", request.expression, why));
  }

  bool find_variable(const std::string& name, Dwarf_Die* out) {
    for (int i = 0; i < scopes_.count; ++i) {
      Dwarf_Die child;
      if (dwarf_child(&scopes_.dies[i], &child) != 0) continue;
      do {
        const int tag = dwarf_tag(&child);
        if (tag != DW_TAG_formal_parameter && tag != DW_TAG_variable) continue;
        const char* candidate = die_name(&child);
        if (candidate != nullptr && name == candidate) {
          *out = child;
          return true;
        }
      } while (dwarf_siblingof(&child, &child) == 0);
    }
    return false;
  }

  static bool array_count(Dwarf_Die* array, Dwarf_Word& count) {
    Dwarf_Die child;
    if (dwarf_child(array, &child) != 0) return false;
    do {
      if (dwarf_tag(&child) != DW_TAG_subrange_type) continue;
      const uint64_t upper = unsigned_attribute(&child, DW_AT_upper_bound, UINT64_MAX);
      if (upper != UINT64_MAX) {
        count = upper + 1;
        return true;
      }
      count = unsigned_attribute(&child, DW_AT_count);
      return count != 0;
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
  }

  // A pointer or reference read from a split variable is read from the piece holding it.
  Status settle_pointer(Location& current, Dwarf_Die* type, const std::string& path) const {
    const int tag = dwarf_tag(type);
    if (current.kind != Location::Kind::Pieces ||
        (tag != DW_TAG_pointer_type && tag != DW_TAG_reference_type && tag != DW_TAG_rvalue_reference_type))
      return {};
    Dwarf_Word size = 0;
    if (dwarf_aggregate_size(type, &size) != 0 || size == 0) size = info_.arch() == insn::Arch::I386 ? 4 : 8;
    auto settled = settle(current, size, path);
    if (!settled) return settled.error();
    current = *settled;
    return {};
  }

  // A C++ reference is a pointer read for you.
  bool follow_reference(Location& current, Dwarf_Die& type) {
    for (int hops = 0; hops < 4; ++hops) {
      const int tag = dwarf_tag(&type);
      if (tag != DW_TAG_reference_type && tag != DW_TAG_rvalue_reference_type) return true;
      auto pointer = value_text(current, "reference");
      if (!pointer) return false;
      current = Location{Location::Kind::Memory, *pointer, 0, std::nullopt, 0, nullptr};
      if (!type_of(&type, &type) || !strip_type(&type)) return false;
    }
    return true;
  }

  // Looks for `member` in a struct/class/union and its base classes; adds its byte offset.
  Result<Dwarf_Die> find_member(Dwarf_Die* aggregate, const std::string& member, int64_t& offset, unsigned& bit_size,
                                uint64_t& bit_offset, int depth = 0) {
    const int tag = dwarf_tag(aggregate);
    if (tag != DW_TAG_structure_type && tag != DW_TAG_class_type && tag != DW_TAG_union_type)
      return make_error("is not a struct, class or union");
    std::vector<std::string> members;
    Dwarf_Die child;
    if (dwarf_child(aggregate, &child) == 0) {
      do {
        const int child_tag = dwarf_tag(&child);
        if (child_tag == DW_TAG_inheritance && depth < 8) {
          Dwarf_Die base;
          if (!type_of(&child, &base) || !strip_type(&base)) continue;
          int64_t base_offset = offset + static_cast<int64_t>(unsigned_attribute(&child, DW_AT_data_member_location));
          unsigned base_bits = 0;
          uint64_t base_bit_offset = 0;
          auto found = find_member(&base, member, base_offset, base_bits, base_bit_offset, depth + 1);
          if (found) {
            offset = base_offset;
            bit_size = base_bits;
            bit_offset = base_bit_offset;
            return found;
          }
          continue;
        }
        if (child_tag != DW_TAG_member) continue;
        const char* name = dwarf_diename(&child);
        if (name == nullptr) {
          // An anonymous struct or union: its members are the parent's.
          Dwarf_Die inner;
          if (depth < 8 && type_of(&child, &inner) && strip_type(&inner)) {
            int64_t inner_offset = offset + static_cast<int64_t>(unsigned_attribute(&child, DW_AT_data_member_location));
            auto found = find_member(&inner, member, inner_offset, bit_size, bit_offset, depth + 1);
            if (found) {
              offset = inner_offset;
              return found;
            }
          }
          continue;
        }
        members.emplace_back(name);
        if (member != name) continue;
        Dwarf_Die type;
        if (!type_of(&child, &type)) return make_error(fmt::format("member {} has no type", member));
        bit_size = static_cast<unsigned>(unsigned_attribute(&child, DW_AT_bit_size));
        if (bit_size != 0) {
          Dwarf_Attribute storage;
          if (dwarf_attr(&child, DW_AT_data_bit_offset, &storage) != nullptr) {
            bit_offset = unsigned_attribute(&child, DW_AT_data_bit_offset);
          } else {
            // DWARF 2/3: DW_AT_bit_offset counts from the most significant bit of a storage
            // unit of DW_AT_byte_size at DW_AT_data_member_location (little-endian machines).
            const uint64_t unit = unsigned_attribute(&child, DW_AT_byte_size, 4);
            bit_offset = unsigned_attribute(&child, DW_AT_data_member_location) * 8 + unit * 8 -
                         unsigned_attribute(&child, DW_AT_bit_offset) - bit_size;
          }
        } else {
          offset += static_cast<int64_t>(unsigned_attribute(&child, DW_AT_data_member_location));
        }
        return type;
      } while (dwarf_siblingof(&child, &child) == 0);
    }
    return make_error(fmt::format("has no member '{}' (its members: {})", member, fmt::join(members, ", ")));
  }

  // The text that yields a location's value as a word.
  Result<std::string> value_text(const Location& location, const std::string& what) const {
    switch (location.kind) {
      case Location::Kind::Register: return location.base;
      case Location::Kind::Constant: return fmt::format("\\{}", location.constant);
      case Location::Kind::Value:
        if (location.offset == 0 && !location.static_address) return location.base;
        return make_error(fmt::format("'{}' is a computed value (a register plus {}), which fetch arguments cannot express",
                                      what, location.offset));
      case Location::Kind::Memory: {
        if (location.static_address) {
          auto text = static_address_(*location.static_address + static_cast<uint64_t>(location.offset));
          if (!text) return make_error(fmt::format("'{}' is at {:#x}, which has no file offset or symbol to read it by", what,
                                                   *location.static_address + static_cast<uint64_t>(location.offset)));
          return *text;
        }
        return deref_text(location.offset, location.base);
      }
      case Location::Kind::Pieces:
        return make_error(fmt::format("'{}' is split into pieces (DW_OP_piece): name a part of it", what));
    }
    return make_error("unknown location");
  }

  Result<Location> frame_base() {
    for (int i = 0; i < scopes_.count; ++i) {
      if (dwarf_tag(&scopes_.dies[i]) != DW_TAG_subprogram) continue;
      Dwarf_Attribute storage;
      Dwarf_Attribute* attribute = dwarf_attr_integrate(&scopes_.dies[i], DW_AT_frame_base, &storage);
      if (attribute == nullptr) return make_error("its function has no frame base");
      Dwarf_Op* ops = nullptr;
      size_t count = 0;
      if (dwarf_getlocation_addr(attribute, pc_, &ops, &count, 1) <= 0 || count == 0)
        return make_error(fmt::format("its function's frame base is not known at {:#x}", pc_));
      if (count == 1 && ops[0].atom == DW_OP_call_frame_cfa) return frame_address();
      return evaluate(ops, count, false);
    }
    return make_error("no function scope");
  }

  // The CFA at the pc, from .eh_frame or .debug_frame.
  Result<Location> frame_address() {
    for (Dwarf_CFI* cfi : {info_.eh_cfi(), info_.debug_cfi()}) {
      if (cfi == nullptr) continue;
      Dwarf_Frame* frame = nullptr;
      if (dwarf_cfi_addrframe(cfi, pc_, &frame) != 0 || frame == nullptr) continue;
      std::unique_ptr<Dwarf_Frame, void (*)(void*)> owned(frame, std::free);
      Dwarf_Op* ops = nullptr;
      size_t count = 0;
      if (dwarf_frame_cfa(frame, &ops, &count) != 0 || count == 0) continue;
      auto location = evaluate(ops, count, false);
      if (!location) return location.error();
      location->kind = Location::Kind::Value;
      return location;
    }
    return make_error(fmt::format("no call frame information gives the frame address at {:#x}", pc_));
  }

  Result<std::string> register_text(unsigned number) const {
    auto name = arch::dwarf_register_name(info_.arch(), number);
    if (!name) return make_error(fmt::format("it is in DWARF register {}, which fetch arguments cannot read", number));
    return fmt::format("%{}", *name);
  }

  // A DWARF location expression, for the subset fetch arguments can express. With
  // `is_location` the result says where the value is (an address on the stack means memory);
  // else it is the value computed (a frame base).
  Result<Location> evaluate(Dwarf_Op* ops, size_t count, bool is_location) {
    std::optional<Location> top;
    bool stack_value = false;
    for (size_t i = 0; i < count; ++i) {
      const Dwarf_Op& op = ops[i];
      const uint8_t atom = op.atom;
      if (atom >= DW_OP_reg0 && atom <= DW_OP_reg31) {
        auto name = register_text(atom - DW_OP_reg0);
        if (!name) return name.error();
        top = Location{Location::Kind::Register, *name, 0, std::nullopt, 0, nullptr};
      } else if (atom == DW_OP_regx) {
        auto name = register_text(static_cast<unsigned>(op.number));
        if (!name) return name.error();
        top = Location{Location::Kind::Register, *name, 0, std::nullopt, 0, nullptr};
      } else if ((atom >= DW_OP_breg0 && atom <= DW_OP_breg31) || atom == DW_OP_bregx) {
        const unsigned number = atom == DW_OP_bregx ? static_cast<unsigned>(op.number) : atom - DW_OP_breg0;
        const int64_t offset = static_cast<int64_t>(atom == DW_OP_bregx ? op.number2 : op.number);
        auto name = register_text(number);
        if (!name) return name.error();
        top = Location{Location::Kind::Value, *name, offset, std::nullopt, 0, nullptr};
      } else if (atom == DW_OP_fbreg) {
        if (top) return make_error("DW_OP_fbreg after another operation");
        auto base = frame_base();
        if (!base) return base.error();
        if (base->kind != Location::Kind::Value) return make_error("its frame base is not an address");
        top = *base;
        top->offset += static_cast<int64_t>(op.number);
      } else if (atom == DW_OP_addr) {
        top = Location{Location::Kind::Value, "", 0, op.number, 0, nullptr};
      } else if (atom == DW_OP_deref && top && top->kind == Location::Kind::Value) {
        Location address = *top;
        address.kind = Location::Kind::Memory;
        auto text = value_text(address, "the address");
        if (!text) return text.error();
        top = Location{Location::Kind::Value, *text, 0, std::nullopt, 0, nullptr};
      } else if (atom == DW_OP_plus_uconst && top && top->kind == Location::Kind::Value) {
        top->offset += static_cast<int64_t>(op.number);
      } else if (atom == DW_OP_stack_value) {
        stack_value = true;
        if (i + 1 != count && ops[i + 1].atom != DW_OP_piece) return make_error("operations after DW_OP_stack_value");
      } else if ((atom >= DW_OP_lit0 && atom <= DW_OP_lit31) || atom == DW_OP_constu || atom == DW_OP_consts ||
                 (atom >= DW_OP_const1u && atom <= DW_OP_const8s)) {
        if (top) return make_error("a constant after another operation");
        const uint64_t value = atom >= DW_OP_lit0 && atom <= DW_OP_lit31 ? atom - DW_OP_lit0 : op.number;
        top = Location{Location::Kind::Constant, "", 0, std::nullopt, value, nullptr};
      } else if (atom == DW_OP_implicit_value) {
        return make_error("it is an implicit value (DW_OP_implicit_value), which is not read from the process");
      } else if (atom == DW_OP_piece) {
        // The first piece of a variable that one location holds whole is that location.
        if (i + 1 == count && top) break;
        return make_error("it is split into pieces in several places (DW_OP_piece)");
      } else if (atom == DW_OP_entry_value || atom == DW_OP_GNU_entry_value) {
        if (top) return make_error("DW_OP_entry_value after another operation");
        auto entry = entry_value(op);
        if (!entry) return entry.error();
        top = *entry;
      } else if (atom == DW_OP_call_frame_cfa) {
        auto cfa = frame_address();
        if (!cfa) return cfa.error();
        top = *cfa;
      } else {
        return make_error(fmt::format("its location uses DWARF operation {:#x}, which fetch arguments cannot express", atom));
      }
    }
    if (!top) return make_error("an empty location");
    if (top->kind == Location::Kind::Value && is_location && !stack_value) top->kind = Location::Kind::Memory;
    return *top;
  }

  // The out-of-line function's first instruction: nothing of it has run, so every register
  // still holds what it held at the entry. (An inlined copy's entry is not that: DWARF's entry
  // value is the physical frame's, and the caller's code before the copy may have changed it.)
  std::optional<uint64_t> function_entry() {
    for (int i = 0; i < scopes_.count; ++i) {
      if (dwarf_tag(&scopes_.dies[i]) != DW_TAG_subprogram) continue;
      Dwarf_Addr entry = 0;
      if (dwarf_entrypc(&scopes_.dies[i], &entry) != 0) return std::nullopt;
      return entry;
    }
    return std::nullopt;
  }

  // DW_OP_entry_value(DW_OP_regN): register N as the function's entry had it, which is register
  // N itself only at that entry.
  Result<Location> entry_value(const Dwarf_Op& op) {
    Dwarf_Attribute block;
    Dwarf_Op* inner = nullptr;
    size_t inner_count = 0;
    if (location_attribute_ == nullptr || dwarf_getlocation_attr(location_attribute_, &op, &block) != 0 ||
        dwarf_getlocation(&block, &inner, &inner_count) != 0 || inner_count != 1 ||
        !((inner[0].atom >= DW_OP_reg0 && inner[0].atom <= DW_OP_reg31) || inner[0].atom == DW_OP_regx))
      return make_error("its value is what an expression gave at the function's entry (DW_OP_entry_value), which fetch "
                        "arguments cannot express");
    const unsigned number =
        inner[0].atom == DW_OP_regx ? static_cast<unsigned>(inner[0].number) : inner[0].atom - DW_OP_reg0;
    auto name = register_text(number);
    if (!name) return name.error();
    const std::optional<uint64_t> entry = function_entry();
    if (!entry || *entry != pc_)
      return make_error(fmt::format(
          "its value is only known as what {} held at its function's entry{} (DW_OP_entry_value), which the process no "
          "longer has here: probe that entry to read it",
          *name, entry ? fmt::format(" ({:#x})", *entry) : std::string()));
    return Location{Location::Kind::Value, *name, 0, std::nullopt, 0, nullptr};
  }

  // A location split by DW_OP_piece: each piece evaluated on its own (a piece that cannot be
  // read only matters if the value asked for lies in it).
  Result<Location> evaluate_pieces(Dwarf_Op* ops, size_t count) {
    auto pieces = std::make_shared<std::vector<Piece>>();
    uint64_t offset = 0;
    size_t start = 0;
    for (size_t i = 0; i < count; ++i) {
      if (ops[i].atom == DW_OP_bit_piece) return make_error("it is split into bit pieces (DW_OP_bit_piece)");
      if (ops[i].atom != DW_OP_piece) continue;
      Piece piece;
      piece.offset = offset;
      piece.size = ops[i].number;
      if (i == start) {
        piece.why_not = "that part of it is optimised out here";
      } else {
        auto where = evaluate(ops + start, i - start, true);
        if (where) piece.where = *where;
        else piece.why_not = where.error().message;
      }
      pieces->push_back(std::move(piece));
      offset += ops[i].number;
      start = i + 1;
    }
    if (start != count) return make_error("operations after its last DW_OP_piece");
    Location location;
    location.kind = Location::Kind::Pieces;
    location.pieces = std::move(pieces);
    return location;
  }

  // The plain location of `size` bytes at `current.offset` of a split variable: the one piece
  // that holds them all.
  Result<Location> settle(const Location& current, uint64_t size, const std::string& path) const {
    if (current.kind != Location::Kind::Pieces) return current;
    const uint64_t begin = static_cast<uint64_t>(current.offset);
    const uint64_t end = begin + size;
    std::vector<std::string> touched;
    for (const Piece& piece : *current.pieces) {
      if (piece.offset + piece.size <= begin || piece.offset >= end) continue;
      touched.push_back(fmt::format("{}-{}", piece.offset, piece.offset + piece.size));
      if (piece.offset > begin || piece.offset + piece.size < end) continue;
      if (!piece.where)
        return make_error(fmt::format("'{}' (bytes {}-{} of the variable, in its piece {}-{}): {}", path, begin, end,
                                      piece.offset, piece.offset + piece.size, piece.why_not));
      Location where = *piece.where;
      const uint64_t within = begin - piece.offset;
      if (within == 0) return where;
      switch (where.kind) {
        case Location::Kind::Memory: where.offset += static_cast<int64_t>(within); return where;
        case Location::Kind::Constant: where.constant = within >= 8 ? 0 : where.constant >> (within * 8); return where;
        default:
          return make_error(fmt::format("'{}' is byte {} onwards of the register piece {} of the variable, which fetch "
                                        "arguments cannot shift out",
                                        path, within, where.base));
      }
    }
    if (touched.empty()) return make_error(fmt::format("'{}' is outside the pieces of the variable", path));
    return make_error(fmt::format("'{}' (bytes {}-{} of the variable) straddles its pieces {} (DW_OP_piece), which one "
                                  "fetch argument cannot join",
                                  path, begin, end, fmt::join(touched, ", ")));
  }

  // Where `path` is evaluable: the ranges of its location list that do not need an entry value.
  std::string available_ranges(Dwarf_Attribute* attribute) {
    std::vector<std::string> ranges;
    Dwarf_Addr base = 0, begin = 0, end = 0;
    ptrdiff_t offset = 0;
    Dwarf_Op* range_ops = nullptr;
    size_t range_count = 0;
    for (int guard = 0; guard < 64; ++guard) {
      offset = dwarf_getlocations(attribute, offset, &base, &begin, &end, &range_ops, &range_count);
      if (offset <= 0) break;
      bool needs_entry = false;
      for (size_t i = 0; i < range_count; ++i)
        needs_entry = needs_entry || range_ops[i].atom == DW_OP_entry_value || range_ops[i].atom == DW_OP_GNU_entry_value;
      const bool everywhere = begin == 0 && end == static_cast<Dwarf_Addr>(-1);  // a single expression, not a list
      if (range_count != 0 && end > begin && !needs_entry && !everywhere) ranges.push_back(fmt::format("{:#x}-{:#x}", begin, end));
    }
    return ranges.empty() ? std::string() : fmt::format("; it has a location at {}", fmt::join(ranges, ", "));
  }

  Result<Location> variable_location(Dwarf_Die* variable, const std::string& name) {
    Dwarf_Attribute storage;
    Dwarf_Attribute* attribute = dwarf_attr_integrate(variable, DW_AT_location, &storage);
    if (attribute == nullptr) {
      Dwarf_Attribute constant_storage;
      Dwarf_Attribute* constant = dwarf_attr_integrate(variable, DW_AT_const_value, &constant_storage);
      Dwarf_Sword value = 0;
      if (constant != nullptr && dwarf_formsdata(constant, &value) == 0)
        return Location{Location::Kind::Constant, "", 0, std::nullopt, static_cast<uint64_t>(value), nullptr};
      return make_error(fmt::format("'{}' is optimised out (it has no location anywhere)", name));
    }
    Dwarf_Op* ops = nullptr;
    size_t count = 0;
    const int found = dwarf_getlocation_addr(attribute, pc_, &ops, &count, 1);
    if (found <= 0 || count == 0) {
      const std::string ranges = available_ranges(attribute);
      return make_error(fmt::format("'{}' is optimised out at {:#x}{}", name, pc_,
                                    ranges.empty() ? std::string(" (it has no location anywhere)") : ranges));
    }
    location_attribute_ = attribute;
    bool split = false;
    for (size_t i = 0; i + 1 < count; ++i) split = split || ops[i].atom == DW_OP_piece || ops[i].atom == DW_OP_bit_piece;
    auto location = split ? evaluate_pieces(ops, count) : evaluate(ops, count, true);
    location_attribute_ = nullptr;
    if (!location)
      return make_error(fmt::format("'{}' at {:#x}: {}{}", name, pc_, location.error().message, available_ranges(attribute)));
    return location;
  }

  static std::string default_name(const std::string& path) {
    std::string name;
    for (char c : path) {
      const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '_';
      if (keep) name += c;
      else if (!name.empty() && name.back() != '_') name += '_';
    }
    while (!name.empty() && name.back() == '_') name.pop_back();
    if (name.size() > 31) name.resize(31);
    return name;
  }

  Result<CompiledVariable> finish(const VariableRequest& request, Location current, Dwarf_Die type, const std::string& path,
                                  unsigned bit_size, uint64_t bit_offset) {
    CompiledVariable out;
    out.name = default_name(path);
    if (!strip_type(&type)) return fail(request, fmt::format("'{}' has type void", path));
    const int whole_tag = dwarf_tag(&type);
    const bool aggregate =
        whole_tag == DW_TAG_structure_type || whole_tag == DW_TAG_class_type || whole_tag == DW_TAG_union_type;
    if (current.kind == Location::Kind::Pieces && bit_size == 0 && !aggregate) {  // a whole struct: name a member
      Dwarf_Word size = 0;
      if (dwarf_aggregate_size(&type, &size) != 0 || size == 0) return fail(request, fmt::format("'{}' has no size", path));
      auto settled = settle(current, size, path);
      if (!settled) return fail(request, settled.error().message);
      current = *settled;
    }
    if (!follow_reference(current, type)) return fail(request, fmt::format("'{}' cannot be read", path));
    const int tag = dwarf_tag(&type);
    const bool wants_string = request.type && (*request.type == "string" || *request.type == "ustring");
    if (wants_string) {
      if (tag == DW_TAG_pointer_type) {
        auto pointer = value_text(current, path);
        if (!pointer) return fail(request, pointer.error().message);
        out.fetcharg = deref_text(0, *pointer);
      } else if (tag == DW_TAG_array_type && current.kind == Location::Kind::Memory) {
        auto text = value_text(current, path);
        if (!text) return fail(request, text.error().message);
        out.fetcharg = *text;
      } else {
        return fail(request, fmt::format("'{}' ({}) is not a char pointer or array, so not a string", path, type_text(&type)));
      }
      return out;
    }
    if (bit_size != 0) {
      Dwarf_Word container = 0;
      if (dwarf_aggregate_size(&type, &container) != 0 || container == 0 || container > 8)
        return fail(request, fmt::format("the bitfield '{}' has no container size", path));
      const uint64_t container_bits = container * 8;
      const uint64_t start = bit_offset / container_bits * container;
      const uint64_t shift = bit_offset - start * 8;
      if (shift + bit_size > container_bits)
        return fail(request, fmt::format("the bitfield '{}' straddles its container", path));
      current.offset += static_cast<int64_t>(start);
      auto settled = settle(current, container, path);
      if (!settled) return fail(request, settled.error().message);
      current = *settled;
      auto text = value_text(current, path);
      if (!text) return fail(request, text.error().message);
      out.fetcharg = *text;
      out.type = request.type ? *request.type : fmt::format("b{}@{}/{}", bit_size, shift, container_bits);
      return out;
    }
    if (tag == DW_TAG_array_type) {
      Dwarf_Die element;
      Dwarf_Word count = 0;
      if (!type_of(&type, &element) || !strip_type(&element) || !array_count(&type, count))
        return fail(request, fmt::format("'{}' is an array of unknown size", path));
      auto element_type = scalar_type(&element, path);
      if (!element_type) return fail(request, element_type.error().message);
      if (current.kind != Location::Kind::Memory) return fail(request, fmt::format("'{}' is not in memory", path));
      auto text = value_text(current, path);
      if (!text) return fail(request, text.error().message);
      out.fetcharg = *text;
      out.type = request.type ? *request.type : fmt::format("{}[{}]", *element_type, std::min<uint64_t>(count, 64));
      return out;
    }
    auto scalar = scalar_type(&type, path);
    if (!scalar) return fail(request, scalar.error().message);
    auto text = value_text(current, path);
    if (!text) return fail(request, text.error().message);
    out.fetcharg = *text;
    out.type = request.type ? *request.type : *scalar;
    return out;
  }

  Result<std::string> scalar_type(Dwarf_Die* type, const std::string& path) {
    Dwarf_Word size = 0;
    const int tag = dwarf_tag(type);
    if (tag == DW_TAG_pointer_type) return std::string(info_.arch() == insn::Arch::I386 ? "x32" : "x64");
    if (tag == DW_TAG_structure_type || tag == DW_TAG_class_type || tag == DW_TAG_union_type) {
      std::vector<std::string> members;
      Dwarf_Die child;
      if (dwarf_child(type, &child) == 0) {
        do {
          if (dwarf_tag(&child) == DW_TAG_member && dwarf_diename(&child) != nullptr) members.emplace_back(dwarf_diename(&child));
        } while (dwarf_siblingof(&child, &child) == 0);
      }
      return make_error(fmt::format("'{}' is a {}: name one of its members ({})", path, type_text(type), fmt::join(members, ", ")));
    }
    if (dwarf_aggregate_size(type, &size) != 0 || (size != 1 && size != 2 && size != 4 && size != 8))
      return make_error(fmt::format("'{}' ({}) is not 1, 2, 4 or 8 bytes", path, type_text(type)));
    bool is_signed = false;
    if (tag == DW_TAG_base_type) {
      const uint64_t encoding = unsigned_attribute(type, DW_AT_encoding);
      if (encoding == DW_ATE_float || encoding == DW_ATE_complex_float)
        return make_error(fmt::format("'{}' ({}) is floating-point, which fetch arguments cannot print", path, type_text(type)));
      is_signed = encoding == DW_ATE_signed || encoding == DW_ATE_signed_char;
    } else if (tag == DW_TAG_enumeration_type) {
      Dwarf_Die underlying;
      if (type_of(type, &underlying) && strip_type(&underlying))
        is_signed = unsigned_attribute(&underlying, DW_AT_encoding) == DW_ATE_signed;
    } else {
      return make_error(fmt::format("'{}' ({}) is not a scalar", path, type_text(type)));
    }
    return fmt::format("{}{}", is_signed ? 's' : 'u', size * 8);
  }

  const DebugInfo& info_;
  uint64_t pc_;
  const StaticAddressWriter& static_address_;
  ScopeList scopes_;
  Dwarf_Attribute* location_attribute_ = nullptr;  // the variable's, while its location is evaluated
};

}  // namespace

Result<CompiledVariable> compile_variable(const DebugInfo& info, uint64_t pc, const VariableRequest& request,
                                          const StaticAddressWriter& static_address) {
  Compiler compiler(info, pc, static_address);
  return compiler.compile(request);
}

std::vector<std::string> variables_in_scope(const DebugInfo& info, uint64_t pc, bool parameters_only) {
  StaticAddressWriter none = [](uint64_t) { return std::optional<std::string>{}; };
  Compiler compiler(info, pc, none);
  if (!compiler.open_scopes()) return {};
  return compiler.names(parameters_only);
}

std::vector<ScopeVariable> describe_scope(const DebugInfo& info, uint64_t pc) {
  StaticAddressWriter none = [](uint64_t) { return std::optional<std::string>{}; };
  Compiler compiler(info, pc, none);
  return compiler.describe();
}

bool is_variable_expression(std::string_view text) {
  if (text.empty()) return false;
  const char first = text[0];
  if (!std::isalpha(static_cast<unsigned char>(first)) && first != '_') return false;
  // The seed's aliases: aN, sN, rN, rv, rp.
  if (text == "rv" || text == "rp") return false;
  if ((first == 'a' || first == 's' || first == 'r') && text.size() > 1) {
    bool digits = true;
    for (char c : text.substr(1)) digits = digits && std::isdigit(static_cast<unsigned char>(c));
    if (digits) return false;
  }
  return true;
}

}  // namespace xprobe::source
