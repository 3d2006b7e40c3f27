#include "arch/arm64/host/arm64_syscall_abi.h"

namespace xprobe::arch::arm64 {
namespace {

constexpr uint8_t kSyscallStub[] = {0x01, 0x00, 0x00, 0xd4, 0x00, 0x00, 0x20, 0xd4};  // svc #0; brk #0

class Arm64SyscallAbi final : public SyscallAbi {
 public:
  std::span<const uint8_t> stub() const override { return kSyscallStub; }
  // The stub's stop: at the BRK itself (an AArch64 breakpoint stops at its own address).
  uint64_t stub_stop_offset() const override { return 4; }
  Status load(RegisterBlock& block, int64_t host_number, std::span<const uint64_t> args) const override {
    if (args.size() > 6) return make_error("remote system call: at most 6 arguments");
    // No restart logic can apply on resume: the kernel decided any restart before the stop,
    // and the stub's own breakpoint stop is no system call.
    for (size_t i = 0; i < args.size(); ++i) block.regs[i] = args[i];
    block.regs[8] = static_cast<uint64_t>(host_number);
    return {};
  }
  int64_t result(const RegisterBlock& block) const override { return static_cast<int64_t>(block.regs[0]); }
};

}  // namespace

const SyscallAbi& arm64_syscall_abi() {
  static const Arm64SyscallAbi abi;
  return abi;
}

}  // namespace xprobe::arch::arm64
