#include "arch/x86/host/x86_syscall_abi.h"

#include <sys/syscall.h>

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>

namespace xprobe::arch::x86 {
namespace {

constexpr uint8_t kSyscallInstruction[] = {0x0f, 0x05};        // syscall
constexpr uint8_t kCompatSyscallStub[] = {0xcd, 0x80, 0xcc};   // int 0x80; int3

// The x86-64 resumable stub (arch/syscall_abi.h): `syscall`, then the way back for a thread
// whose tracer died: the flags through the stack (the only way to set them all; 144 bytes below
// the stack pointer, past the red zone, where a signal frame could go too, so the stack pointer
// is valid at every instruction), every general register by a RIP-relative load (which changes
// no flag), and an indirect jump to the instruction pointer. The resume block: flags, rip, then
// the 16 registers by their encoding number (rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8-r15).
constexpr uint64_t kResumeBlockOffset = 160;
constexpr size_t kResumeWords = 18;
constexpr size_t kStubBytes = kResumeBlockOffset + kResumeWords * 8;

std::array<uint8_t, kStubBytes> make_resumable_stub() {
  std::array<uint8_t, kStubBytes> code{};
  size_t at = 0;
  auto emit = [&](std::initializer_list<uint8_t> bytes) {
    for (uint8_t b : bytes) code[at++] = b;
  };
  // The disp32 of a RIP-relative operand that ends its instruction, addressing the block's `word`.
  auto rip_relative = [&](size_t word) {
    const int64_t target = static_cast<int64_t>(kResumeBlockOffset + word * 8);
    const auto disp = static_cast<int32_t>(target - static_cast<int64_t>(at + 4));
    std::memcpy(&code[at], &disp, 4);
    at += 4;
  };
  emit({0x0f, 0x05});                                      // syscall
  emit({0x48, 0x8d, 0xa4, 0x24, 0x78, 0xff, 0xff, 0xff});  // lea rsp, [rsp - 136]
  emit({0xff, 0x35});                                      // push qword [rip + flags]
  rip_relative(0);
  emit({0x9d});                                            // popfq
  emit({0x48, 0x8d, 0xa4, 0x24, 0x88, 0x00, 0x00, 0x00});  // lea rsp, [rsp + 136]
  for (uint8_t reg = 0; reg < 16; ++reg) {                 // mov reg, [rip + reg's word]
    emit({static_cast<uint8_t>(reg >= 8 ? 0x4c : 0x48), 0x8b, static_cast<uint8_t>(((reg & 7) << 3) | 0x05)});
    rip_relative(2 + reg);
  }
  emit({0xff, 0x25});  // jmp qword [rip + rip's word]
  rip_relative(1);
  // Never reached: what follows the code up to the block.
  while (at < kResumeBlockOffset) code[at++] = 0xcc;
  return code;
}

const std::array<uint8_t, kStubBytes> kResumableStub = make_resumable_stub();

class X86_64SyscallAbi final : public SyscallAbi {
 public:
  std::span<const uint8_t> stub() const override { return kResumableStub; }
  uint64_t stub_stop_offset() const override { return 0; }  // no breakpoint: stops at the call's exit
  bool resumable() const override { return true; }
  std::span<const uint8_t> instruction() const override { return kSyscallInstruction; }
  uint64_t resume_block_offset() const override { return kResumeBlockOffset; }
  std::vector<uint8_t> resume_block(const RegisterBlock& saved) const override {
    RegisterBlock resumed = saved;
    // Stopped inside a system call that is to be restarted: what the kernel's signal return
    // path does on resume (arch/x86/kernel/signal.c), for the codes that restart without a
    // handler.
    constexpr int64_t kRestartSys = -512, kRestartNoIntr = -513, kRestartNoHand = -514, kRestartBlock = -516;
    constexpr uint64_t kRestartSyscallNumber = 219;
    const auto error = static_cast<int64_t>(saved.rax);
    if (static_cast<int64_t>(saved.orig_rax) >= 0) {
      if (error == kRestartSys || error == kRestartNoIntr || error == kRestartNoHand) {
        resumed.rax = saved.orig_rax;
        resumed.rip -= 2;
      } else if (error == kRestartBlock) {
        resumed.rax = kRestartSyscallNumber;
        resumed.rip -= 2;
      }
    }
    constexpr uint64_t kTrapFlag = 0x100, kResumeFlag = 0x10000;
    const uint64_t by_number[16] = {resumed.rax, resumed.rcx, resumed.rdx, resumed.rbx, resumed.rsp, resumed.rbp,
                                    resumed.rsi, resumed.rdi, resumed.r8,  resumed.r9,  resumed.r10, resumed.r11,
                                    resumed.r12, resumed.r13, resumed.r14, resumed.r15};
    // A thread stopped by a breakpoint resumes on it (a breakpoint stop leaves rip there) and,
    // if nobody serves it any more, dies of its signal.
    uint64_t words[kResumeWords] = {resumed.eflags & ~(kTrapFlag | kResumeFlag), resumed.rip};
    std::copy(std::begin(by_number), std::end(by_number), words + 2);
    std::vector<uint8_t> bytes(sizeof words);
    std::memcpy(bytes.data(), words, sizeof words);
    return bytes;
  }
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
