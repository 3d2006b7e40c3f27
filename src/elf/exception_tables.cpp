#include "elf/exception_tables.h"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

namespace xprobe::elf {
namespace {

// DW_EH_PE_* pointer encodings (LSB, "DWARF Exception Header Encoding"). The low nibble is
// the value's format, bits 4-6 what it is relative to, bit 7 "the value is the address of
// the pointer" (indirect).
constexpr uint8_t kOmit = 0xff;
constexpr uint8_t kFormatMask = 0x0f;
constexpr uint8_t kApplicationMask = 0x70;
constexpr uint8_t kIndirect = 0x80;

constexpr uint8_t kAbsptr = 0x00;
constexpr uint8_t kUleb128 = 0x01;
constexpr uint8_t kUdata2 = 0x02;
constexpr uint8_t kUdata4 = 0x03;
constexpr uint8_t kUdata8 = 0x04;
constexpr uint8_t kSigned = 0x08;  // a signed value the size of an address
constexpr uint8_t kSleb128 = 0x09;
constexpr uint8_t kSdata2 = 0x0a;
constexpr uint8_t kSdata4 = 0x0b;
constexpr uint8_t kSdata8 = 0x0c;

constexpr uint8_t kAbsolute = 0x00;
constexpr uint8_t kPcrel = 0x10;
constexpr uint8_t kTextrel = 0x20;
constexpr uint8_t kDatarel = 0x30;
constexpr uint8_t kFuncrel = 0x40;
constexpr uint8_t kAligned = 0x50;

// Little-endian reader over untrusted bytes that lie at a link-time address; every read is
// bounds-checked against `limit` (the end of the current record) and errors name the address.
class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, uint64_t address, std::string_view what)
      : bytes_(bytes), address_(address), what_(what), limit_(bytes.size()) {}

  size_t position() const { return position_; }
  uint64_t address() const { return address_ + position_; }
  size_t limit() const { return limit_; }
  size_t size() const { return bytes_.size(); }
  bool at_limit() const { return position_ >= limit_; }
  size_t remaining() const { return limit_ - position_; }
  void set_limit(size_t limit) { limit_ = limit; }
  void seek(size_t position) { position_ = position; }

  Error error(std::string_view message) const { return error_at(position_, message); }
  Error error_at(size_t position, std::string_view message) const {
    return make_error(fmt::format("{} at {:#x}: {}", what_, address_ + position, message));
  }

  Result<uint64_t> unsigned_bytes(unsigned size, std::string_view field) {
    if (remaining() < size) return error(fmt::format("{} ({} bytes) runs past the end", field, size));
    uint64_t value = 0;
    for (unsigned i = 0; i < size; ++i) value |= uint64_t{bytes_[position_ + i]} << (8 * i);
    position_ += size;
    return value;
  }
  Result<uint64_t> signed_bytes(unsigned size, std::string_view field) {
    auto value = unsigned_bytes(size, field);
    if (!value || size == 8) return value;
    const uint64_t sign = uint64_t{1} << (8 * size - 1);
    return (*value ^ sign) - sign;  // sign-extends without a signed overflow
  }
  Result<uint8_t> byte(std::string_view field) {
    auto value = unsigned_bytes(1, field);
    if (!value) return value.error();
    return static_cast<uint8_t>(*value);
  }
  Result<uint64_t> uleb128(std::string_view field) {
    uint64_t value = 0;
    for (unsigned shift = 0;; shift += 7) {
      if (at_limit()) return error(fmt::format("{} (LEB128) runs past the end", field));
      const uint8_t b = bytes_[position_++];
      if (shift >= 64 || (shift == 63 && (b & 0x7e) != 0))
        return error(fmt::format("{} (LEB128) does not fit 64 bits", field));
      value |= uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80) == 0) return value;
    }
  }
  Result<uint64_t> sleb128(std::string_view field) {
    uint64_t value = 0;
    for (unsigned shift = 0;; shift += 7) {
      if (at_limit()) return error(fmt::format("{} (LEB128) runs past the end", field));
      const uint8_t b = bytes_[position_++];
      if (shift >= 64) return error(fmt::format("{} (LEB128) does not fit 64 bits", field));
      value |= uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80) == 0) {
        if (shift + 7 < 64 && (b & 0x40) != 0) value |= ~uint64_t{0} << (shift + 7);
        return value;
      }
    }
  }
  Result<std::string> c_string(std::string_view field) {
    const size_t start = position_;
    while (position_ < limit_ && bytes_[position_] != 0) ++position_;
    if (position_ >= limit_) return error_at(start, fmt::format("{} has no terminating NUL", field));
    std::string text(reinterpret_cast<const char*>(bytes_.data() + start), position_ - start);
    ++position_;
    return text;
  }

 private:
  std::span<const uint8_t> bytes_;
  uint64_t address_;
  std::string_view what_;
  size_t limit_;
  size_t position_ = 0;
};

uint64_t address_mask(unsigned address_size) {
  return address_size >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * address_size)) - 1;
}

// The value of a pointer encoding's format nibble, before its application is added.
Result<uint64_t> read_format(Reader& in, uint8_t encoding, unsigned address_size, std::string_view field) {
  switch (encoding & kFormatMask) {
    case kAbsptr: return in.unsigned_bytes(address_size, field);
    case kUleb128: return in.uleb128(field);
    case kUdata2: return in.unsigned_bytes(2, field);
    case kUdata4: return in.unsigned_bytes(4, field);
    case kUdata8: return in.unsigned_bytes(8, field);
    case kSigned: return in.signed_bytes(address_size, field);
    case kSleb128: return in.sleb128(field);
    case kSdata2: return in.signed_bytes(2, field);
    case kSdata4: return in.signed_bytes(4, field);
    case kSdata8: return in.signed_bytes(8, field);
    default: return in.error(fmt::format("{} has pointer encoding {:#04x}: unknown value format", field, encoding));
  }
}

// A pointer in `encoding`. Bases that only the loader knows (textrel, datarel: libgcc takes
// them from the object's registration or the GOT) and indirect pointers (the pointed-to
// word is relocated at run time) are refused; `function_start` is the funcrel base, when
// there is one. Like libgcc, a stored zero is a null pointer whatever the application.
Result<uint64_t> read_pointer(Reader& in, uint8_t encoding, unsigned address_size, std::string_view field,
                              std::optional<uint64_t> function_start = std::nullopt) {
  if ((encoding & kIndirect) != 0)
    return in.error(fmt::format("{} has pointer encoding {:#04x}: indirect pointers are not supported", field, encoding));
  const uint8_t application = encoding & kApplicationMask;
  if (application == kAligned) {
    const uint64_t misalignment = in.address() % address_size;
    if (misalignment != 0) {
      if (in.remaining() < address_size - misalignment) return in.error(fmt::format("{} runs past the end", field));
      in.seek(in.position() + (address_size - misalignment));
    }
  }
  const uint64_t field_address = in.address();
  auto raw = read_format(in, application == kAligned ? kAbsptr : encoding, address_size, field);
  if (!raw || *raw == 0) return raw;
  switch (application) {
    case kAbsolute:
    case kAligned: return *raw & address_mask(address_size);
    case kPcrel: return (field_address + *raw) & address_mask(address_size);
    case kFuncrel:
      if (function_start) return (*function_start + *raw) & address_mask(address_size);
      return in.error(fmt::format("{} is function-relative (encoding {:#04x}) where there is no function", field, encoding));
    case kTextrel:
    case kDatarel:
      return in.error(fmt::format("{} has pointer encoding {:#04x}: text- and data-relative pointers need the "
                                  "loader's bases and are not supported", field, encoding));
    default: return in.error(fmt::format("{} has pointer encoding {:#04x}: unknown application", field, encoding));
  }
}

struct CommonInformation {
  uint8_t fde_encoding = kAbsptr;
  uint8_t lsda_encoding = kOmit;
  bool has_augmentation_data = false;  // 'z': FDEs carry an augmentation length
};

// Reads one CIE whose body (after the CIE id) `in` is positioned at, limited to the record.
Result<CommonInformation> read_cie(Reader& in, unsigned address_size) {
  CommonInformation cie;
  auto version = in.byte("CIE version");
  if (!version) return version.error();
  if (*version != 1 && *version != 3 && *version != 4)
    return in.error(fmt::format("CIE version {} (known: 1, 3, 4)", *version));
  const size_t augmentation_position = in.position();
  auto augmentation = in.c_string("CIE augmentation string");
  if (!augmentation) return augmentation.error();
  if (!augmentation->empty() && (*augmentation)[0] != 'z')
    // Without 'z' nothing says how long the unknown augmentation's data are ("eh" is gcc 2's).
    return in.error_at(augmentation_position,
                       fmt::format("CIE augmentation \"{}\" does not start with 'z'", *augmentation));
  if (*version == 4) {
    auto cie_address_size = in.byte("CIE address size");
    if (!cie_address_size) return cie_address_size.error();
    auto segment_size = in.byte("CIE segment selector size");
    if (!segment_size) return segment_size.error();
  }
  if (auto code_alignment = in.uleb128("CIE code alignment factor"); !code_alignment) return code_alignment.error();
  if (auto data_alignment = in.sleb128("CIE data alignment factor"); !data_alignment) return data_alignment.error();
  if (*version == 1) {
    if (auto ra = in.byte("CIE return address register"); !ra) return ra.error();
  } else if (auto ra = in.uleb128("CIE return address register"); !ra) {
    return ra.error();
  }
  if (augmentation->empty()) return cie;

  cie.has_augmentation_data = true;
  auto length = in.uleb128("CIE augmentation data length");
  if (!length) return length.error();
  if (*length > in.remaining()) return in.error("CIE augmentation data run past the end of the CIE");
  const size_t record_limit = in.limit();
  const size_t data_end = in.position() + *length;
  in.set_limit(data_end);
  for (size_t i = 1; i < augmentation->size(); ++i) {
    switch ((*augmentation)[i]) {
      case 'L': {
        auto encoding = in.byte("CIE LSDA encoding");
        if (!encoding) return encoding.error();
        cie.lsda_encoding = *encoding;
        break;
      }
      case 'R': {
        auto encoding = in.byte("CIE FDE pointer encoding");
        if (!encoding) return encoding.error();
        if (*encoding == kOmit) return in.error("CIE FDE pointer encoding is 'omit'");
        cie.fde_encoding = *encoding;
        break;
      }
      case 'P': {
        auto encoding = in.byte("CIE personality encoding");
        if (!encoding) return encoding.error();
        // Only stepped over (its base and indirection do not matter): the personality
        // routine does not say where landing pads are.
        if ((*encoding & kApplicationMask) == kAligned) {
          const uint64_t misalignment = in.address() % address_size;
          if (misalignment != 0 && in.remaining() >= address_size - misalignment)
            in.seek(in.position() + (address_size - misalignment));
        }
        auto personality = read_format(in, (*encoding & kApplicationMask) == kAligned ? kAbsptr : *encoding,
                                       address_size, "CIE personality pointer");
        if (!personality) return personality.error();
        break;
      }
      case 'S':  // signal frame
      case 'B':  // AArch64: return address signed with the B key
      case 'G':  // AArch64: MTE-tagged stack frame
        break;
      default:
        return in.error_at(augmentation_position,
                           fmt::format("CIE augmentation \"{}\" has unknown character '{}'", *augmentation,
                                       (*augmentation)[i]));
    }
  }
  in.set_limit(record_limit);
  in.seek(data_end);
  return cie;
}

unsigned address_size_of(const ElfFile& file) { return file.arch() == insn::Arch::I386 ? 4 : 8; }

const Section* section_holding(const ElfFile& file, uint64_t address) {
  for (const Section& section : file.sections())
    if (section.has_file_bytes && address >= section.address && address - section.address < section.size)
      return &section;
  return nullptr;
}

void attach_landing_pads(const ElfFile& file, unsigned address_size, FrameDescription& frame) {
  const Section* section = section_holding(file, *frame.lsda);
  if (section == nullptr) {
    frame.lsda_error = fmt::format("LSDA at {:#x} (FDE at {:#x}) lies in no section with file bytes", *frame.lsda,
                                   frame.fde_address);
    return;
  }
  const auto bytes = file.section_bytes(*section).subspan(*frame.lsda - section->address);
  auto pads = parse_lsda_landing_pads(bytes, *frame.lsda, frame.pc_begin, address_size);
  if (pads)
    frame.landing_pads = std::move(*pads);
  else
    frame.lsda_error = fmt::format("{} (section {}, FDE at {:#x})", pads.error().message, section->name,
                                   frame.fde_address);
}

}  // namespace

Result<std::vector<uint64_t>> parse_lsda_landing_pads(std::span<const uint8_t> bytes, uint64_t lsda_address,
                                                      uint64_t function_start, unsigned address_size) {
  if (address_size != 4 && address_size != 8) return make_error(fmt::format("address size {}", address_size));
  Reader in(bytes, lsda_address, "LSDA");
  auto lpstart_encoding = in.byte("LPStart encoding");
  if (!lpstart_encoding) return lpstart_encoding.error();
  uint64_t lpstart = function_start;
  if (*lpstart_encoding != kOmit) {
    auto value = read_pointer(in, *lpstart_encoding, address_size, "LPStart", function_start);
    if (!value) return value.error();
    lpstart = *value;
  }
  auto ttype_encoding = in.byte("TType encoding");
  if (!ttype_encoding) return ttype_encoding.error();
  if (*ttype_encoding != kOmit) {
    auto ttype_offset = in.uleb128("TType offset");
    if (!ttype_offset) return ttype_offset.error();
    if (*ttype_offset > in.remaining()) return in.error("the type table's end lies past the end of the section");
  }
  auto call_site_encoding = in.byte("call-site encoding");
  if (!call_site_encoding) return call_site_encoding.error();
  // Call-site fields are offsets (from the function start, from LPStart): only an
  // application of "absolute" means that; gcc writes uleb128, clang uleb128 or udata4.
  if (*call_site_encoding == kOmit || (*call_site_encoding & (kApplicationMask | kIndirect)) != 0)
    return in.error(fmt::format("call-site encoding {:#04x} is not an offset format", *call_site_encoding));
  auto table_length = in.uleb128("call-site table length");
  if (!table_length) return table_length.error();
  if (*table_length > in.remaining())
    return in.error(fmt::format("call-site table ({} bytes) runs past the end of the section", *table_length));
  in.set_limit(in.position() + *table_length);

  std::vector<uint64_t> pads;
  while (!in.at_limit()) {
    auto start = read_format(in, *call_site_encoding, address_size, "call-site start");
    if (!start) return start.error();
    auto length = read_format(in, *call_site_encoding, address_size, "call-site length");
    if (!length) return length.error();
    auto landing_pad = read_format(in, *call_site_encoding, address_size, "call-site landing pad");
    if (!landing_pad) return landing_pad.error();
    auto action = in.uleb128("call-site action");
    if (!action) return action.error();
    if (*landing_pad != 0) pads.push_back((lpstart + *landing_pad) & address_mask(address_size));
  }
  std::sort(pads.begin(), pads.end());
  pads.erase(std::unique(pads.begin(), pads.end()), pads.end());
  return pads;
}

Result<std::vector<FrameDescription>> parse_eh_frame(std::span<const uint8_t> bytes, uint64_t section_address,
                                                     unsigned address_size) {
  if (address_size != 4 && address_size != 8) return make_error(fmt::format("address size {}", address_size));
  std::vector<FrameDescription> frames;
  Reader in(bytes, section_address, ".eh_frame");
  std::unordered_map<size_t, CommonInformation> cies;  // by offset of the record in .eh_frame
  while (!in.at_limit()) {
    const size_t record_start = in.position();
    auto length32 = in.unsigned_bytes(4, "record length");
    if (!length32) return length32.error();
    if (*length32 == 0) break;  // the terminator (crtend.o's __FRAME_END__)
    unsigned offset_size = 4;
    uint64_t length = *length32;
    if (*length32 == 0xffffffff) {  // 64-bit DWARF format: an 8-byte length follows
      auto length64 = in.unsigned_bytes(8, "64-bit record length");
      if (!length64) return length64.error();
      length = *length64;
      offset_size = 8;
    }
    if (length > in.remaining())
      return in.error_at(record_start, fmt::format("record length {:#x} runs past the end of the section", length));
    const size_t record_end = in.position() + length;
    in.set_limit(record_end);

    const size_t id_position = in.position();
    auto id = in.unsigned_bytes(offset_size, "CIE id / CIE pointer");
    if (!id) return id.error();
    if (*id == 0) {
      auto cie = read_cie(in, address_size);
      if (!cie) return cie.error();
      cies.emplace(record_start, *cie);
    } else {
      // In .eh_frame the CIE pointer counts back from its own field to the CIE.
      const auto cie_it = *id <= id_position ? cies.find(id_position - *id) : cies.end();
      if (cie_it == cies.end())
        return in.error_at(id_position, fmt::format("FDE's CIE pointer {:#x} does not lead to a CIE", *id));
      const CommonInformation& cie = cie_it->second;
      FrameDescription frame;
      frame.fde_address = section_address + record_start;
      auto pc_begin = read_pointer(in, cie.fde_encoding, address_size, "FDE pc_begin");
      if (!pc_begin) return pc_begin.error();
      auto pc_range = read_format(in, cie.fde_encoding, address_size, "FDE pc_range");
      if (!pc_range) return pc_range.error();
      if (*pc_range > address_mask(address_size) - *pc_begin)
        return in.error_at(record_start, fmt::format("FDE range {:#x}+{:#x} wraps around", *pc_begin, *pc_range));
      frame.pc_begin = *pc_begin;
      frame.pc_end = *pc_begin + *pc_range;
      if (cie.has_augmentation_data) {
        auto data_length = in.uleb128("FDE augmentation data length");
        if (!data_length) return data_length.error();
        if (*data_length > in.remaining()) return in.error("FDE augmentation data run past the end of the FDE");
        in.set_limit(in.position() + *data_length);
        if (cie.lsda_encoding != kOmit) {
          auto lsda = read_pointer(in, cie.lsda_encoding, address_size, "FDE LSDA pointer", frame.pc_begin);
          if (!lsda) return lsda.error();
          if (*lsda != 0) frame.lsda = *lsda;
        }
      }
      // pc_begin 0 is what the linker leaves of an FDE whose code it discarded.
      if (frame.pc_begin != 0 && frame.pc_end > frame.pc_begin) frames.push_back(std::move(frame));
    }
    in.set_limit(in.size());
    in.seek(record_end);
  }
  std::sort(frames.begin(), frames.end(),
            [](const FrameDescription& a, const FrameDescription& b) { return a.pc_begin < b.pc_begin; });
  return frames;
}

Result<ExceptionTables> ExceptionTables::index(const ElfFile& file) {
  ExceptionTables tables;
  const Section* eh_frame = nullptr;
  for (const Section& section : file.sections())
    if (section.name == ".eh_frame") eh_frame = &section;
  if (eh_frame == nullptr || !eh_frame->has_file_bytes) return tables;
  const unsigned address_size = address_size_of(file);
  auto frames = parse_eh_frame(file.section_bytes(*eh_frame), eh_frame->address, address_size);
  if (!frames) return frames.error();
  tables.frames_ = std::move(*frames);
  for (FrameDescription& frame : tables.frames_)
    if (frame.lsda) attach_landing_pads(file, address_size, frame);
  return tables;
}

const FrameDescription* ExceptionTables::frame_covering(uint64_t link_address) const {
  auto after = std::upper_bound(frames_.begin(), frames_.end(), link_address,
                                [](uint64_t address, const FrameDescription& f) { return address < f.pc_begin; });
  if (after == frames_.begin()) return nullptr;
  const FrameDescription& frame = *std::prev(after);
  return link_address < frame.pc_end ? &frame : nullptr;
}

Result<std::vector<uint64_t>> ExceptionTables::landing_pads_covering(uint64_t link_address) const {
  const FrameDescription* frame = frame_covering(link_address);
  if (frame == nullptr) return std::vector<uint64_t>{};
  if (frame->lsda_error) return make_error(*frame->lsda_error);
  return frame->landing_pads;
}

Result<std::vector<uint64_t>> ExceptionTables::landing_pads_in(uint64_t begin, uint64_t end) const {
  std::vector<uint64_t> pads;
  auto it = std::upper_bound(frames_.begin(), frames_.end(), begin,
                             [](uint64_t address, const FrameDescription& f) { return address < f.pc_begin; });
  if (it != frames_.begin() && std::prev(it)->pc_end > begin) --it;
  for (; it != frames_.end() && it->pc_begin < end; ++it) {
    if (it->lsda_error) return make_error(*it->lsda_error);
    for (uint64_t pad : it->landing_pads)
      if (pad >= begin && pad < end) pads.push_back(pad);
  }
  std::sort(pads.begin(), pads.end());
  pads.erase(std::unique(pads.begin(), pads.end()), pads.end());
  return pads;
}

Result<std::vector<uint64_t>> landing_pads_covering(const ElfFile& file, uint64_t link_address) {
  const auto& tables = file.exception_tables();
  if (!tables) return tables.error();
  return tables->landing_pads_covering(link_address);
}

}  // namespace xprobe::elf
