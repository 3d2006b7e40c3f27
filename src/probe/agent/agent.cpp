// The in-process agent: what a jump-optimized probe runs in the traced thread, called by its
// trampoline with the thread's registers saved. It records one event into the shared ring:
// no trap, no context switch, no lock (threads reserve space with one compare-and-swap).
//
// Built freestanding (no libc, no TLS, no relocations, general registers only, see
// CMakeLists.txt) and copied into the traced process as flat bytes, so it must not touch
// anything the program owns: it calls no library function, takes no lock the program could
// hold, uses only the thread's stack (a few hundred bytes) and raw system calls that change no
// state of the program (gettid, process_vm_readv on itself). Every read of program memory
// goes through process_vm_readv, so a bad pointer is recorded as a fault, never a crash.
#include "probe/agent/agent_abi.h"

using namespace xprobe::agent;

namespace {

constexpr long kSysGettid = 186;
constexpr long kSysProcessVmReadv = 310;
constexpr uint64_t kPage = 4096;

inline long syscall6(long number, long a, long b, long c, long d, long e, long f) {
  long result;
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  __asm__ volatile("syscall"
                   : "=a"(result)
                   : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return result;
}

struct IoVector {
  uint64_t base;
  uint64_t length;
};

// Copies up to `length` bytes from the program's `address`; returns how many arrived (0 for a
// bad address). One system call per page, as process_vm_readv stops at the first bad iovec.
uint32_t copy_in(long pid, uint64_t address, uint8_t* out, uint32_t length) {
  uint32_t done = 0;
  while (done < length) {
    const uint64_t here = address + done;
    uint64_t chunk = kPage - here % kPage;
    if (chunk > length - done) chunk = length - done;
    IoVector local{reinterpret_cast<uint64_t>(out + done), chunk};
    IoVector remote{here, chunk};
    const long got = syscall6(kSysProcessVmReadv, pid, reinterpret_cast<long>(&local), 1,
                              reinterpret_cast<long>(&remote), 1, 0);
    if (got <= 0) break;
    done += static_cast<uint32_t>(got);
    if (static_cast<uint64_t>(got) < chunk) break;
  }
  return done;
}

// A string of at most `limit` bytes: read in growing pieces that never cross a page, stop at
// the NUL.
uint32_t copy_string(long pid, uint64_t address, uint8_t* out, uint32_t limit) {
  uint32_t done = 0;
  uint64_t want = 256;
  while (done < limit) {
    const uint64_t here = address + done;
    uint64_t chunk = kPage - here % kPage;
    if (chunk > want) chunk = want;
    if (chunk > limit - done) chunk = limit - done;
    IoVector local{reinterpret_cast<uint64_t>(out + done), chunk};
    IoVector remote{here, chunk};
    const long got = syscall6(kSysProcessVmReadv, pid, reinterpret_cast<long>(&local), 1,
                              reinterpret_cast<long>(&remote), 1, 0);
    if (got <= 0) return done;
    for (long i = 0; i < got; ++i) {
      if (out[done + static_cast<uint32_t>(i)] == 0) return done + static_cast<uint32_t>(i) + 1;
    }
    done += static_cast<uint32_t>(got);
    if (static_cast<uint64_t>(got) < chunk) return done;
    want *= 2;
  }
  return done;
}

inline uint64_t load_acquire(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
inline void store_release(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

uint64_t read_tsc(uint32_t& cpu) {
  uint32_t low, high, aux;
  __asm__ volatile("rdtscp" : "=a"(low), "=d"(high), "=c"(aux));
  cpu = aux & 0xfff;
  return (static_cast<uint64_t>(high) << 32) | low;
}

// Writes records into its reserved space, never past `end`.
class RecordWriter {
 public:
  RecordWriter(uint8_t* start, uint8_t* end) : at_(start), end_(end) {}
  uint8_t* at() const { return at_; }
  bool overflowed() const { return overflowed_; }
  bool room(uint64_t bytes) const { return static_cast<uint64_t>(end_ - at_) >= bytes; }
  void word(uint64_t value) {
    *reinterpret_cast<uint64_t*>(at_) = value;
    at_ += 8;
  }
  // A chunk header, then the bytes filled by `copy` (returns how many it copied).
  template <typename Copy>
  uint32_t chunk(uint64_t address, uint32_t requested, Copy copy) {
    if (!room(kChunkHeaderBytes)) {
      overflowed_ = true;
      return 0;
    }
    uint8_t* header = at_;
    at_ += kChunkHeaderBytes;
    uint32_t limit = static_cast<uint32_t>(end_ - at_);
    if (requested > limit) requested = limit;
    const uint32_t copied = copy(at_, requested);
    // A string that filled all the room may have been cut by it, not by its NUL.
    if (copied == limit) overflowed_ = true;
    reinterpret_cast<uint64_t*>(header)[0] = address;
    reinterpret_cast<uint32_t*>(header)[2] = requested;
    reinterpret_cast<uint32_t*>(header)[3] = copied;
    at_ += (copied + 7u) & ~7u;
    return copied;
  }

 private:
  uint8_t* at_;
  uint8_t* end_;
  bool overflowed_ = false;
};

void copy_bytes(uint8_t* to, const uint8_t* from, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) to[i] = from[i];
}

// Runs the probe's ops; every memory read becomes a chunk the tracer replays.
void run_ops(const AgentProbe& probe, long pid, const uint64_t* registers, RecordWriter& out) {
  uint64_t value = 0;
  bool faulted = false;
  for (uint32_t i = 0; i < probe.op_count; ++i) {
    const AgentOp& op = probe.ops[i];
    if (op.code == kOpEnd) return;
    if (op.code == kOpNextArgument) {
      value = 0;
      faulted = false;
      continue;
    }
    if (faulted) continue;
    switch (op.code) {
      case kOpRegister: value = op.reg < kSavedRegisterWords ? registers[op.reg] : 0; break;
      case kOpImmediate: value = static_cast<uint64_t>(op.operand); break;
      case kOpAdd: value += static_cast<uint64_t>(op.operand); break;
      case kOpDeref: {
        uint64_t word = 0;
        const uint64_t address = value;
        const uint32_t got = out.chunk(address, 8, [&](uint8_t* to, uint32_t n) {
          const uint32_t copied = copy_in(pid, address, to, n);
          for (uint32_t b = 0; b < copied && b < 8; ++b) word |= static_cast<uint64_t>(to[b]) << (8 * b);
          return copied;
        });
        if (got < 8) faulted = true;
        value = word;
        break;
      }
      case kOpCopy: {
        const uint64_t address = value;
        const uint32_t size = op.size > kMaxCopy ? kMaxCopy : op.size;
        out.chunk(address, size, [&](uint8_t* to, uint32_t n) { return copy_in(pid, address, to, n); });
        break;
      }
      case kOpString: {
        const uint64_t address = value;
        out.chunk(address, kMaxCopy, [&](uint8_t* to, uint32_t n) { return copy_string(pid, address, to, n); });
        break;
      }
      case kOpStringArray: {
        const uint64_t array = value;
        uint64_t pointers[16];
        const uint32_t count = op.size > 16 ? 16 : op.size;
        const uint32_t got = out.chunk(array, count * 8, [&](uint8_t* to, uint32_t n) {
          const uint32_t copied = copy_in(pid, array, to, n);
          for (uint32_t p = 0; p < count; ++p) {
            pointers[p] = 0;
            if ((p + 1) * 8 <= copied)
              for (uint32_t b = 0; b < 8; ++b) pointers[p] |= static_cast<uint64_t>(to[p * 8 + b]) << (8 * b);
          }
          return copied;
        });
        for (uint32_t p = 0; p < count && (p + 1) * 8 <= got; ++p) {
          const uint64_t address = pointers[p];
          out.chunk(address, kMaxCopy, [&](uint8_t* to, uint32_t n) { return copy_string(pid, address, to, n); });
        }
        break;
      }
      default: faulted = true; break;
    }
  }
}

}  // namespace

extern "C" __attribute__((section(".text.entry"), used)) void xprobe_agent_hit(const AgentProbe* probe,
                                                                                const uint64_t* registers) {
  auto* ring = reinterpret_cast<AgentRingHeader*>(probe->ring);
  if (ring->magic != kRingMagic || probe->probe_index >= kMaxProbes) return;
  const uint64_t size = ring->ring_size;
  uint8_t* const base = reinterpret_cast<uint8_t*>(ring + 1);
  if (probe->max_record < 8 * kRecordFixedWords || probe->max_record > size / 4 || (probe->max_record & 15) != 0 ||
      (size & 15) != 0)
    return;

  // The hit is recorded on the stack first: most records are far smaller than the most their
  // probe could need (a string reserves 4 KiB), and the ring is reserved by the exact size.
  // Only a record that does not fit is recorded again, straight into a maximal reservation.
  constexpr uint32_t kScratchBytes = 512;
  uint8_t scratch[kScratchBytes];
  uint32_t cpu = 0;
  const uint64_t tsc = read_tsc(cpu);
  const auto tid = static_cast<uint64_t>(syscall6(kSysGettid, 0, 0, 0, 0, 0, 0));
  const long pid = static_cast<long>(ring->pid);
  auto fill = [&](RecordWriter& out) {
    out.word(tid);
    out.word(tsc);
    out.word(cpu);
    for (uint32_t r = 0; r < kSavedRegisterWords; ++r)
      if (probe->register_mask & (1u << r)) out.word(registers[r]);
    run_ops(*probe, pid, registers, out);
  };
  RecordWriter staged(scratch + 16, scratch + kScratchBytes);
  fill(staged);
  const bool staged_fits = !staged.overflowed();
  // Lengths are multiples of 16, so that what is left at the end of the ring always holds a
  // filler's two words.
  const uint64_t length = staged_fits ? (static_cast<uint64_t>(staged.at() - scratch) + 15) & ~uint64_t{15} : probe->max_record;

  // Reserve: [head, head + need); a record never wraps, a filler takes the end of the ring.
  uint64_t head = load_acquire(&ring->head);
  uint64_t offset = 0, need = 0;
  for (;;) {
    const uint64_t tail = load_acquire(&ring->tail);
    offset = head & (size - 1);
    need = offset + length > size ? (size - offset) + length : length;
    if (head + need - tail > size) {
      __atomic_fetch_add(&ring->dropped[probe->probe_index], 1, __ATOMIC_RELAXED);
      return;
    }
    if (__atomic_compare_exchange_n(&ring->head, &head, head + need, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) break;
  }
  uint64_t position = head;
  if (need != length) {  // filler up to the end of the ring
    auto* filler = reinterpret_cast<uint64_t*>(base + offset);
    filler[1] = position;
    store_release(filler, kCommitted | (uint64_t{kPadProbe} << 32) | (size - offset));
    position += size - offset;
    offset = 0;
  }
  uint8_t* const record = base + offset;
  auto* words = reinterpret_cast<uint64_t*>(record);
  words[1] = position;
  store_release(words, uint64_t{probe->probe_index} << 32 | length);  // reserved, not committed

  if (staged_fits) {
    copy_bytes(record + 16, scratch + 16, static_cast<uint64_t>(staged.at() - scratch) - 16);
    store_release(words, kCommitted | uint64_t{probe->probe_index} << 32 | length);
    return;
  }
  RecordWriter out(record + 16, record + length);
  fill(out);
  // What the ops left unused becomes a filler, so the record's length is exact.
  const uint64_t used = static_cast<uint64_t>(out.at() - record);
  if (used + 16 <= length) {
    auto* filler = reinterpret_cast<uint64_t*>(record + used);
    filler[1] = position + used;
    store_release(filler, kCommitted | (uint64_t{kPadProbe} << 32) | (length - used));
    store_release(words, kCommitted | uint64_t{probe->probe_index} << 32 | used);
  } else {
    store_release(words, kCommitted | uint64_t{probe->probe_index} << 32 | length);
  }
}
