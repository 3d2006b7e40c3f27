#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <cstring>

#include "insn/x86/decoder.h"

namespace xprobe::insn::x86 {

static Vendor query_host_vendor() {
#if !defined(__x86_64__) && !defined(__i386__)
  return Vendor::Intel;  // not an x86 host: any choice is arbitrary
#else
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0) return Vendor::Intel;
  char id[12];
  std::memcpy(id, &ebx, 4);
  std::memcpy(id + 4, &edx, 4);
  std::memcpy(id + 8, &ecx, 4);
  // Hygon's Dhyana is an AMD Zen derivative and decodes like AMD.
  if (std::memcmp(id, "AuthenticAMD", 12) == 0 || std::memcmp(id, "HygonGenuine", 12) == 0) return Vendor::Amd;
  return Vendor::Intel;
#endif
}

Vendor host_vendor() {
  static const Vendor vendor = query_host_vendor();
  return vendor;
}

}  // namespace xprobe::insn::x86
