#include "trace/ftrace/event_format.h"

#include <vector>

#include <fmt/format.h>

namespace xprobe::trace {
namespace {

struct FieldText {
  std::string type;   // "s32", "__data_loc char[]"
  std::string print;  // "%d", "\"%s\""
  unsigned size = 0;  // bytes in the record
  bool is_signed = false;
};

FieldText field_of(const probe::FetchType& type, unsigned word_size) {
  FieldText field;
  const unsigned size = type.size != 0 ? type.size : word_size;
  if (type.is_string()) {
    // A string is a 4-byte __data_loc (offset and length of the text that follows the fields).
    return {"__data_loc char[]", "\\\"%s\\\"", 4, true};
  }
  const bool wide = size == 8;
  switch (type.kind) {
    case probe::TypeKind::Signed: field = {fmt::format("s{}", size * 8), wide ? "%Ld" : "%d", size, true}; break;
    case probe::TypeKind::Hex: field = {fmt::format("u{}", size * 8), wide ? "0x%Lx" : "0x%x", size, false}; break;
    case probe::TypeKind::Char: field = {"u8", "'%c'", 1, false}; break;
    case probe::TypeKind::Symbol: field = {wide ? "u64" : "u32", "%pS", size, false}; break;
    default: field = {fmt::format("u{}", size * 8), wide ? "%Lu" : "%u", size, false}; break;
  }
  return field;
}

}  // namespace

std::string kernel_event_format(const EventDescription& event, unsigned id, unsigned word_size) {
  const char* word = word_size == 8 ? "unsigned long" : "unsigned int";
  std::string out = fmt::format("name: {}\nID: {}\nformat:\n", event.event, id);
  out += "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
         "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
         "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
         "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";
  unsigned offset = 8;
  std::string print = event.is_return ? "(%lx <- %lx)" : "(%lx)";
  std::string values = event.is_return ? "REC->__probe_func, REC->__probe_ret_ip" : "REC->__probe_ip";
  const std::vector<const char*> address_fields =
      event.is_return ? std::vector<const char*>{"__probe_func", "__probe_ret_ip"} : std::vector<const char*>{"__probe_ip"};
  for (const char* name : address_fields) {
    out += fmt::format("\tfield:{} {};\toffset:{};\tsize:{};\tsigned:0;\n", word, name, offset, word_size);
    offset += word_size;
  }
  for (size_t i = 0; i < event.argument_names.size() && i < event.argument_types.size(); ++i) {
    const std::string& name = event.argument_names[i];
    const probe::FetchType& type = event.argument_types[i];
    const FieldText field = field_of(type, word_size);
    if (type.is_array() && !type.is_string()) {
      const unsigned size = field.size * type.array_count;
      out += fmt::format("\tfield:{} {}[];\toffset:{};\tsize:{};\tsigned:{};\n", field.type, name, offset, size,
                         field.is_signed ? 1 : 0);
      offset += size;
      std::string elements;
      for (unsigned e = 0; e < type.array_count; ++e) {
        elements += (e == 0 ? "" : ",") + field.print;
        values += fmt::format(", REC->{}[{}]", name, e);
      }
      print += fmt::format(" {}={{{}}}", name, elements);
      continue;
    }
    out += fmt::format("\tfield:{} {};\toffset:{};\tsize:{};\tsigned:{};\n", field.type, name, offset, field.size,
                       field.is_signed ? 1 : 0);
    offset += field.size;
    print += fmt::format(" {}={}", name, field.print);
    values += type.is_string() ? fmt::format(", __get_str({})", name) : fmt::format(", REC->{}", name);
  }
  out += fmt::format("\nprint fmt: \"{}\", {}\n", print, values);
  return out;
}

}  // namespace xprobe::trace
