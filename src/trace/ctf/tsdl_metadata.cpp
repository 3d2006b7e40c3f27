#include "trace/ctf/tsdl_metadata.h"

#include <fmt/format.h>

#include <bit>

namespace xprobe::trace {
namespace {

constexpr std::string_view kKeywords[] = {
    "align",    "callsite", "const",   "char",     "clock",   "double", "enum",   "env",
    "event",    "floating_point",      "float",    "integer", "int",    "long",   "short",
    "signed",   "stream",   "string",  "struct",   "trace",   "typealias",        "typedef",
    "unsigned", "variant",  "void",    "_Bool",    "_Complex", "_Imaginary"};

// A TSDL string literal.
std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out + "\"";
}

std::string integer(unsigned bits, bool is_signed, unsigned base) {
  return fmt::format("integer {{ size = {}; align = 8; signed = {}; base = {}; }}", bits, is_signed ? "true" : "false",
                     base);
}

std::string field_type(const probe::FetchType& type) {
  if (type.is_string()) return "string";
  const probe::TypeKind kind = type.kind;
  const unsigned base = kind == probe::TypeKind::Hex || kind == probe::TypeKind::Symbol ? 16 : 10;
  return integer(type.size * 8u, kind == probe::TypeKind::Signed, base);
}

}  // namespace

std::string uuid_text(const TraceUuid& uuid) {
  std::string out;
  for (size_t i = 0; i < uuid.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", uuid[i]);
  }
  return out;
}

std::string tsdl_identifier(std::string_view name) {
  bool keyword = false;
  for (std::string_view word : kKeywords) keyword = keyword || word == name;
  if (keyword || (!name.empty() && name.front() == '_')) return "_" + std::string(name);
  return std::string(name);
}

std::string tsdl_metadata(const EventCatalog& catalog, const TraceUuid& uuid, std::string_view hostname) {
  const bool little = std::endian::native == std::endian::little;
  std::string out = fmt::format(
      "/* CTF 1.8 */\n"
      "\n"
      "trace {{\n"
      "\tmajor = 1;\n"
      "\tminor = 8;\n"
      "\tuuid = \"{}\";\n"
      "\tbyte_order = {};\n"
      "\tpacket.header := struct {{\n"
      "\t\t{} magic;\n"
      "\t\t{} uuid[16];\n"
      "\t\t{} stream_id;\n"
      "\t}};\n"
      "}};\n"
      "\n"
      "env {{\n"
      "\ttracer_name = \"xprobe\";\n"
      "\thostname = {};\n"
      "}};\n"
      "\n"
      "clock {{\n"
      "\tname = monotonic;\n"
      "\tdescription = \"CLOCK_MONOTONIC (the time since boot, as ftrace's timestamps)\";\n"
      "\tfreq = 1000000000;\n"
      "\tprecision = 1;\n"
      "\toffset_s = 0;\n"
      "\toffset = 0;\n"
      "\tabsolute = false;\n"
      "}};\n"
      "\n"
      "typealias integer {{ size = 64; align = 8; signed = false; map = clock.monotonic.value; }} := monotonic_ns;\n"
      "\n"
      "stream {{\n"
      "\tid = 0;\n"
      "\tpacket.context := struct {{\n"
      "\t\tmonotonic_ns timestamp_begin;\n"
      "\t\tmonotonic_ns timestamp_end;\n"
      "\t\t{} content_size;\n"
      "\t\t{} packet_size;\n"
      "\t\t{} cpu_id;\n"
      "\t}};\n"
      "\tevent.header := struct {{\n"
      "\t\t{} id;\n"
      "\t\tmonotonic_ns timestamp;\n"
      "\t}};\n"
      "\tevent.context := struct {{\n"
      "\t\t{} pid;\n"
      "\t\t{} tid;\n"
      "\t\tstring comm;\n"
      "\t}};\n"
      "}};\n",
      uuid_text(uuid), little ? "le" : "be", integer(32, false, 16), integer(8, false, 16), integer(32, false, 10),
      quoted(hostname), integer(64, false, 10), integer(64, false, 10), integer(32, false, 10), integer(32, false, 10),
      integer(32, true, 10), integer(32, true, 10));
  const std::string address = integer(64, false, 16);
  for (size_t id = 0; id < catalog.size(); ++id) {
    const EventDescription& event = catalog[id];
    out += fmt::format("\nevent {{\n\tname = {};\n\tid = {};\n\tstream_id = 0;\n\tfields := struct {{\n",
                       quoted(event.group + ":" + event.event), id);
    if (event.is_return) {
      out += fmt::format("\t\t{} {};\n\t\t{} {};\n", address, tsdl_identifier("__probe_func"), address,
                         tsdl_identifier("__probe_ret_ip"));
    } else {
      out += fmt::format("\t\t{} {};\n", address, tsdl_identifier("__probe_ip"));
    }
    for (size_t i = 0; i < event.argument_types.size(); ++i) {
      const probe::FetchType& type = event.argument_types[i];
      const std::string name = i < event.argument_names.size() ? event.argument_names[i] : fmt::format("arg{}", i + 1);
      out += fmt::format("\t\t{} {}", field_type(type), tsdl_identifier(name));
      if (type.is_array()) out += fmt::format("[{}]", type.array_count);
      out += ";\n";
    }
    out += "\t};\n};\n";
  }
  return out;
}

}  // namespace xprobe::trace
