#include "arch/x86/host/x86_syscall_abi.h"

#include <sys/syscall.h>

#include <algorithm>

#include <fmt/format.h>

namespace xprobe::arch::x86 {
namespace {

constexpr uint8_t kSyscallStub[] = {0x0f, 0x05, 0xcc};         // syscall; int3
constexpr uint8_t kCompatSyscallStub[] = {0xcd, 0x80, 0xcc};   // int 0x80; int3

class X86_64SyscallAbi final : public SyscallAbi {
 public:
  std::span<const uint8_t> stub() const override { return kSyscallStub; }
  uint64_t stub_stop_offset() const override { return sizeof kSyscallStub; }  // after the int3
  Status load(RegisterBlock& block, int64_t host_number, std::span<const uint64_t> args) const override {
    if (args.size() > 6) return make_error("remote system call: at most 6 arguments");
    unsigned long long* registers[] = {&block.rdi, &block.rsi, &block.rdx, &block.r10, &block.r8, &block.r9};
    for (size_t i = 0; i < args.size(); ++i) *registers[i] = args[i];
    block.rax = static_cast<uint64_t>(host_number);
    block.orig_rax = ~uint64_t{0};  // not in a system call: no restart logic on resume
    return {};
  }
  int64_t result(const RegisterBlock& block) const override { return static_cast<int64_t>(block.rax); }
};

class I386SyscallAbi final : public SyscallAbi {
 public:
  std::span<const uint8_t> stub() const override { return kCompatSyscallStub; }
  uint64_t stub_stop_offset() const override { return sizeof kCompatSyscallStub; }
  Status load(RegisterBlock& block, int64_t host_number, std::span<const uint64_t> args) const override {
    if (args.size() > 6) return make_error("remote system call: at most 6 arguments");
    uint64_t call_args[6] = {};
    std::copy(args.begin(), args.end(), call_args);
    // The i386 numbers (the kernel's arch/x86/entry/syscalls/syscall_32.tbl); mmap2 takes its
    // offset in pages.
    constexpr int64_t kI386Munmap = 91, kI386Mmap2 = 192;
    constexpr uint64_t kPageSize = 4096;
    int64_t number = 0;
    if (host_number == SYS_mmap) {
      number = kI386Mmap2;
      call_args[5] /= kPageSize;
    } else if (host_number == SYS_munmap) {
      number = kI386Munmap;
    } else {
      return make_error(fmt::format("remote system call {} has no i386 counterpart here", host_number));
    }
    // int 0x80 takes ebx, ecx, edx, esi, edi, ebp.
    unsigned long long* registers[] = {&block.rbx, &block.rcx, &block.rdx, &block.rsi, &block.rdi, &block.rbp};
    for (size_t i = 0; i < args.size(); ++i) *registers[i] = call_args[i];
    block.rax = static_cast<uint64_t>(number);
    block.orig_rax = ~uint64_t{0};
    return {};
  }
  int64_t result(const RegisterBlock& block) const override {
    // eax: an address up to 4 GiB, or -errno (-4095..-1).
    const auto eax = static_cast<uint32_t>(block.rax);
    if (eax >= static_cast<uint32_t>(-4095)) return static_cast<int64_t>(static_cast<int32_t>(eax));
    return static_cast<int64_t>(eax);
  }
};

}  // namespace

const SyscallAbi& x86_64_syscall_abi() {
  static const X86_64SyscallAbi abi;
  return abi;
}

const SyscallAbi& i386_syscall_abi() {
  static const I386SyscallAbi abi;
  return abi;
}

}  // namespace xprobe::arch::x86
