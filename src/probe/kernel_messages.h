#pragma once
// The messages of the kernel's probe parser (kernel/trace/trace_probe.h, ERRORS), as the
// running kernel prints them in tracefs's error_log; xprobe refuses a definition with the
// kernel's words wherever the kernel refuses it too.
#include <string_view>

namespace xprobe::probe {

namespace msg {
inline constexpr std::string_view kBadUprobeOffset = "Invalid uprobe offset";
inline constexpr std::string_view kRefCtrOpenBrace = "Reference counter brace is not closed";
inline constexpr std::string_view kBadRefCtrSuffix = "Reference counter has wrong suffix";
inline constexpr std::string_view kBadRefCtr = "Invalid reference counter offset";
inline constexpr std::string_view kBadProbeAddr = "Invalid probed address or symbol";
inline constexpr std::string_view kBadRetprobe = "Retprobe address must be an function entry";
inline constexpr std::string_view kBadAddrSuffix = "Invalid probed address suffix";
inline constexpr std::string_view kFileNotFound = "Failed to find the given file";
inline constexpr std::string_view kNoGroupName = "Group name is not specified";
inline constexpr std::string_view kGroupTooLong = "Group name is too long";
inline constexpr std::string_view kBadGroupName = "Group name must follow the same rules as C identifiers";
inline constexpr std::string_view kNoEventName = "Event name is not specified";
inline constexpr std::string_view kEventTooLong = "Event name is too long";
inline constexpr std::string_view kBadEventName = "Event name must follow the same rules as C identifiers";
inline constexpr std::string_view kRetvalOnProbe = "$retval is not available on probe";
inline constexpr std::string_view kBadArgNum = "Invalid argument number";
inline constexpr std::string_view kBadVar = "Invalid $-variable specified";
inline constexpr std::string_view kBadRegName = "Invalid register name";
inline constexpr std::string_view kBadMemAddr = "Invalid memory address";
inline constexpr std::string_view kBadImm = "Invalid immediate value";
inline constexpr std::string_view kImmStrNoClose = "String is not closed with '\"'";
inline constexpr std::string_view kBadFileOffs = "Invalid file offset value";
inline constexpr std::string_view kTooManyOps = "Dereference is too much nested";
inline constexpr std::string_view kDerefNeedBrace = "Dereference needs a brace";
inline constexpr std::string_view kBadDerefOffs = "Invalid dereference offset";
inline constexpr std::string_view kDerefOpenBrace = "Dereference brace is not closed";
inline constexpr std::string_view kCommCantDeref = "$comm can not be dereferenced";
inline constexpr std::string_view kBadFetchArg = "Invalid fetch argument";
inline constexpr std::string_view kArrayNoClose = "Array is not closed";
inline constexpr std::string_view kBadArraySuffix = "Array has wrong suffix";
inline constexpr std::string_view kBadArrayNum = "Invalid array size";
inline constexpr std::string_view kArrayTooBig = "Array number is too big";
inline constexpr std::string_view kBadType = "Unknown type is specified";
inline constexpr std::string_view kBadString = "String accepts only memory argument";
inline constexpr std::string_view kBadBitfield = "Invalid bitfield";
inline constexpr std::string_view kArgNameTooLong = "Argument name is too long";
inline constexpr std::string_view kNoArgName = "Argument name is not specified";
inline constexpr std::string_view kBadArgName = "Argument name must follow the same rules as C identifiers";
inline constexpr std::string_view kUsedArgName = "This argument name is already used";
inline constexpr std::string_view kNoArgBody = "No argument expression";
inline constexpr std::string_view kNoFentryArgs = "$arg* can be used only on function entry or exit";
inline constexpr std::string_view kNeedStringType = "$comm and immediate-string only accepts string type";
inline constexpr std::string_view kTooManyArgs = "Too many arguments are specified";
inline constexpr std::string_view kArgTooLong = "Argument expression is too long";
inline constexpr std::string_view kDiffProbeType = "Probe type is different from existing probe";
inline constexpr std::string_view kDiffArgType = "Argument type or name is different from existing probe";
inline constexpr std::string_view kSameProbe = "There is already the exact same probe event";
// xprobe's own (the kernel gives no message for these).
inline constexpr std::string_view kEmpty = "Empty probe definition";
inline constexpr std::string_view kBadProbeType = "Unknown probe type: a definition starts with p, r or -";
inline constexpr std::string_view kNoPlace = "Probe point is not specified";
}  // namespace msg

}  // namespace xprobe::probe
