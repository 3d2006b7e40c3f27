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
#include "probe/agent/filter_match.h"
#include "probe/agent/return_frames.h"

using namespace xprobe::agent;
using namespace xprobe::agent::arch;

namespace {

constexpr uint64_t kPage = 4096;

// What a return adds to a record, and where a return probe's entry keeps its saved words.
struct ReturnFacts {
  bool is_return = false;
  uint64_t return_address = 0;
  const uint64_t* saved = nullptr;  // the frame's words (return)
  uint64_t* save_to = nullptr;      // the new frame's words (entry)
};

struct IoVector {
  uint64_t base;
  uint64_t length;
};

// How the agent reads the program's memory: directly where the tracer said it is always
// readable, else with process_vm_readv, so that a bad pointer is a failed read, never a crash.
struct Reader {
  long pid;
  const AgentReadableRange* ranges;
  uint64_t range_count;
  // The end of the always-readable range holding `address`, or 0.
  uint64_t readable_until(uint64_t address) const {
    const uint64_t count = range_count > kReadableRanges ? kReadableRanges : range_count;
    for (uint64_t i = 0; i < count; ++i)
      if (address >= ranges[i].begin && address < ranges[i].end) return ranges[i].end;
    return 0;
  }
};

Reader reader_of(const AgentRingHeader& ring) {
  return Reader{static_cast<long>(ring.pid), ring.readable, ring.readable_count};
}

// Copies up to `length` bytes from the program's `address`; returns how many arrived (0 for a
// bad address). One system call per page, as process_vm_readv stops at the first bad iovec.
uint32_t copy_in(const Reader& reader, uint64_t address, uint8_t* out, uint32_t length) {
  const uint64_t until = reader.readable_until(address);
  if (until != 0 && until - address >= length) {
    const auto* from = reinterpret_cast<const volatile uint8_t*>(address);
    for (uint32_t i = 0; i < length; ++i) out[i] = from[i];
    return length;
  }
  uint32_t done = 0;
  while (done < length) {
    const uint64_t here = address + done;
    uint64_t chunk = kPage - here % kPage;
    if (chunk > length - done) chunk = length - done;
    IoVector local{reinterpret_cast<uint64_t>(out + done), chunk};
    IoVector remote{here, chunk};
    const long got = syscall6(kSysProcessVmReadv, reader.pid, reinterpret_cast<long>(&local), 1,
                              reinterpret_cast<long>(&remote), 1, 0);
    if (got <= 0) break;
    done += static_cast<uint32_t>(got);
    if (static_cast<uint64_t>(got) < chunk) break;
  }
  return done;
}

// A string of at most `limit` bytes: read in growing pieces that never cross a page, stop at
// the NUL.
uint32_t copy_string(const Reader& reader, uint64_t address, uint8_t* out, uint32_t limit) {
  uint32_t done = 0;
  if (const uint64_t until = reader.readable_until(address); until != 0) {
    const auto* from = reinterpret_cast<const volatile uint8_t*>(address);
    const uint64_t direct = until - address < limit ? until - address : limit;
    for (; done < direct; ++done) {
      out[done] = from[done];
      if (out[done] == 0) return done + 1;
    }
  }
  uint64_t want = 256;
  while (done < limit) {
    const uint64_t here = address + done;
    uint64_t chunk = kPage - here % kPage;
    if (chunk > want) chunk = want;
    if (chunk > limit - done) chunk = limit - done;
    IoVector local{reinterpret_cast<uint64_t>(out + done), chunk};
    IoVector remote{here, chunk};
    const long got = syscall6(kSysProcessVmReadv, reader.pid, reinterpret_cast<long>(&local), 1,
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

// Writes records into its reserved space, never past `end`.
class RecordWriter {
 public:
  RecordWriter(uint8_t* start, uint8_t* end) : at_(start), end_(end) {}
  uint8_t* at() const { return at_; }
  bool overflowed() const { return overflowed_; }
  // The latest chunk's bytes (a filter's view of a memory read).
  const uint8_t* last_bytes() const { return last_bytes_; }
  uint32_t last_requested() const { return last_requested_; }
  uint32_t last_copied() const { return last_copied_; }
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
    last_bytes_ = at_;
    last_requested_ = requested;
    last_copied_ = copied;
    at_ += (copied + 7u) & ~7u;
    return copied;
  }

 private:
  uint8_t* at_;
  uint8_t* end_;
  bool overflowed_ = false;
  const uint8_t* last_bytes_ = nullptr;
  uint32_t last_requested_ = 0;
  uint32_t last_copied_ = 0;
};

// What each argument's ops left, for the probe's filter.
struct CapturedArgument {
  uint64_t value;
  const uint8_t* bytes;  // its last memory read (null: none)
  uint32_t requested;
  uint32_t copied;
  bool faulted;
};
struct CapturedArguments {
  CapturedArgument arguments[kMaxFilterArguments];
  uint32_t count;
};

void copy_bytes(uint8_t* to, const uint8_t* from, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) to[i] = from[i];
}

// Runs the probe's ops from `first` to the next kOpEnd; every memory read becomes a chunk the
// tracer replays.
void run_ops(const AgentProbe& probe, uint32_t first, const Reader& reader, const uint64_t* registers,
             const ReturnFacts& facts, RecordWriter& out, CapturedArguments* captured = nullptr) {
  uint64_t value = 0;
  bool faulted = false;
  const uint8_t* argument_start = out.at();
  for (uint32_t i = first; i < probe.op_count; ++i) {
    const AgentOp& op = probe.ops[i];
    if (op.code == kOpEnd) return;
    if (op.code == kOpNextArgument) {
      if (captured != nullptr && captured->count < kMaxFilterArguments) {
        CapturedArgument& argument = captured->arguments[captured->count++];
        argument.value = value;
        argument.faulted = faulted;
        // A read of this argument's own, not one of an earlier argument.
        const bool read_here = out.last_bytes() != nullptr && out.last_bytes() >= argument_start;
        argument.bytes = read_here ? out.last_bytes() : nullptr;
        argument.requested = read_here ? out.last_requested() : 0;
        argument.copied = read_here ? out.last_copied() : 0;
      }
      argument_start = out.at();
      value = 0;
      faulted = false;
      continue;
    }
    if (op.code == kOpSave) {
      if (facts.save_to && op.reg < kMaxSavedWords) facts.save_to[op.reg] = faulted ? 0 : value;
      continue;
    }
    if (faulted) continue;
    switch (op.code) {
      case kOpLoadSaved: value = facts.saved && op.reg < kMaxSavedWords ? facts.saved[op.reg] : 0; break;
      case kOpReturnAddress: value = facts.return_address; break;
      case kOpClock: {
        uint32_t cpu = 0;
        value = read_clock(cpu);
        break;
      }
      case kOpRegister: value = op.reg < kSavedRegisterWords ? registers[op.reg] : 0; break;
      case kOpImmediate: value = static_cast<uint64_t>(op.operand); break;
      case kOpAdd: value += static_cast<uint64_t>(op.operand); break;
      case kOpDeref: {
        uint64_t word = 0;
        const uint64_t address = value;
        const uint32_t got = out.chunk(address, 8, [&](uint8_t* to, uint32_t n) {
          const uint32_t copied = copy_in(reader, address, to, n);
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
        out.chunk(address, size, [&](uint8_t* to, uint32_t n) { return copy_in(reader, address, to, n); });
        break;
      }
      case kOpString: {
        const uint64_t address = value;
        out.chunk(address, kMaxCopy, [&](uint8_t* to, uint32_t n) { return copy_string(reader, address, to, n); });
        break;
      }
      case kOpStringArray: {
        const uint64_t array = value;
        uint64_t pointers[16];
        const uint32_t count = op.size > 16 ? 16 : op.size;
        const uint32_t got = out.chunk(array, count * 8, [&](uint8_t* to, uint32_t n) {
          const uint32_t copied = copy_in(reader, array, to, n);
          for (uint32_t p = 0; p < count; ++p) {
            pointers[p] = 0;
            if ((p + 1) * 8 <= copied)
              for (uint32_t b = 0; b < 8; ++b) pointers[p] |= static_cast<uint64_t>(to[p * 8 + b]) << (8 * b);
          }
          return copied;
        });
        for (uint32_t p = 0; p < count && (p + 1) * 8 <= got; ++p) {
          const uint64_t address = pointers[p];
          out.chunk(address, kMaxCopy, [&](uint8_t* to, uint32_t n) { return copy_string(reader, address, to, n); });
        }
        break;
      }
      default: faulted = true; break;
    }
  }
}


// A number the hit captured (an argument's value or memory read, the CPU, the return address):
// false when the agent cannot know it (a fault, a read cut short). Cut to `size` bytes and
// a bitfield extracted (the caller cuts it to its size).
bool captured_number(uint8_t source, uint8_t argument_index, uint8_t size, uint8_t bit_width,
                     uint8_t bit_offset, const CapturedArguments& captured, uint32_t cpu, const ReturnFacts& facts,
                     uint64_t& number) {
  number = 0;
  switch (source) {
    case kFilterCpu: number = cpu; break;
    case kFilterReturnAddress:
      if (!facts.is_return) return false;
      number = facts.return_address;
      break;
    case kFilterArgumentValue:
    case kFilterArgumentNumber: {
      if (argument_index >= captured.count) return false;
      const CapturedArgument& argument = captured.arguments[argument_index];
      if (argument.faulted) return false;
      if (source == kFilterArgumentValue) {
        number = argument.value;
        break;
      }
      if (argument.bytes == nullptr || argument.copied == 0) return false;
      if (argument.copied < argument.requested || argument.copied < size || size > 8) return false;
      for (uint32_t b = 0; b < size; ++b) number |= static_cast<uint64_t>(argument.bytes[b]) << (8 * b);
      break;
    }
    default: return false;
  }
  if (bit_width != 0) {
    number = number_at_size(number, size, false);
    const uint64_t mask = bit_width >= 64 ? ~uint64_t{0} : (uint64_t{1} << bit_width) - 1;
    number = (number >> bit_offset) & mask;
  }
  return true;
}

// The NUL-terminated text of an argument's last memory read, or null (faulted, cut short).
const char* captured_string(uint8_t argument_index, const CapturedArguments& captured, uint32_t& length) {
  if (argument_index >= captured.count) return nullptr;
  const CapturedArgument& argument = captured.arguments[argument_index];
  if (argument.faulted || argument.bytes == nullptr || argument.copied == 0) return nullptr;
  length = 0;
  while (length < argument.copied && argument.bytes[length] != 0) ++length;
  if (length == argument.copied) return nullptr;  // cut short: the text is not all here
  return reinterpret_cast<const char*>(argument.bytes);
}

// The truth of one term on what the hit captured: 0 false, 1 true, 2 unknown.
uint8_t term_truth(const AgentFilterTerm& term, const uint8_t* filter, uint32_t filter_bytes,
                   const CapturedArguments& captured, uint32_t cpu, const ReturnFacts& facts) {
  constexpr uint8_t kFalse = 0, kTrue = 1, kUnknown = 2;
  const bool is_signed = (term.flags & kFilterSigned) != 0;
  const auto compare = static_cast<CompareOp>(term.compare);
  switch (term.source) {
    case kFilterTrue: return kTrue;
    case kFilterFalse: return kFalse;
    case kFilterArgumentString: {
      uint32_t length = 0;
      const char* text = captured_string(term.argument, captured, length);
      if (text == nullptr) return kUnknown;
      if (term.pattern_offset > filter_bytes || term.pattern_length > filter_bytes - term.pattern_offset) return kUnknown;
      const bool matched = string_matches(static_cast<StringMatch>(term.match),
                                          reinterpret_cast<const char*>(filter + term.pattern_offset),
                                          term.pattern_length, text, length);
      return matched != ((term.flags & kFilterNegate) != 0) ? kTrue : kFalse;
    }
    default: break;
  }
  uint64_t number = 0;
  if (!captured_number(term.source, term.argument, term.size, term.bit_width, term.bit_offset, captured, cpu,
                       facts, number))
    return kUnknown;
  return compare_numbers(compare, number, term.operand, term.size, is_signed) ? kTrue : kFalse;
}

// A filter's verdict on the hit: 0 false, 1 true, 2 unknown (the tracer decides). The filter was
// written by the tracer but lives in the program's memory: every count and offset is checked,
// and one that does not hold is unknown.
uint8_t filter_verdict(const uint8_t* filter, uint32_t filter_bytes, const CapturedArguments& captured, uint32_t cpu,
                       const ReturnFacts& facts) {
  constexpr uint8_t kUnknown = 2;
  if (filter_bytes < sizeof(AgentFilter)) return kUnknown;
  const auto& head = *reinterpret_cast<const AgentFilter*>(filter);
  if (head.term_count > kMaxFilterTerms || head.step_count > kMaxFilterSteps || head.step_count == 0) return kUnknown;
  const uint64_t steps_at = sizeof(AgentFilter) + uint64_t{head.term_count} * sizeof(AgentFilterTerm);
  if (steps_at + uint64_t{head.step_count} * 2 > filter_bytes) return kUnknown;
  const auto* terms = reinterpret_cast<const AgentFilterTerm*>(filter + sizeof(AgentFilter));
  const auto* steps = reinterpret_cast<const uint16_t*>(filter + steps_at);
  // Kleene's three values: false and unknown is false, true or unknown is true.
  uint8_t stack[kMaxFilterSteps];
  uint32_t depth = 0;
  for (uint32_t i = 0; i < head.step_count; ++i) {
    const uint32_t kind = steps[i] >> 8, index = steps[i] & 0xff;
    if (kind == kStepTest) {
      if (index >= head.term_count || depth >= kMaxFilterSteps) return kUnknown;
      stack[depth++] = term_truth(terms[index], filter, filter_bytes, captured, cpu, facts);
    } else if (kind == kStepNot) {
      if (depth < 1) return kUnknown;
      if (stack[depth - 1] != 2) stack[depth - 1] ^= 1;
    } else if (kind == kStepAnd || kind == kStepOr) {
      if (depth < 2) return kUnknown;
      const uint8_t right = stack[--depth], left = stack[depth - 1];
      if (kind == kStepAnd) stack[depth - 1] = (left == 0 || right == 0) ? 0 : (left == 1 && right == 1) ? 1 : 2;
      else stack[depth - 1] = (left == 1 || right == 1) ? 1 : (left == 0 && right == 0) ? 0 : 2;
    } else {
      return kUnknown;
    }
  }
  return depth == 1 ? stack[0] : kUnknown;
}

// The probe's own filter: 1 (true) when it has none.
uint8_t probe_filter_verdict(const AgentProbe& probe, const CapturedArguments& captured, uint32_t cpu, const ReturnFacts& facts) {
  if (probe.filter_offset == 0) return 1;
  return filter_verdict(reinterpret_cast<const uint8_t*>(&probe) + probe.filter_offset, probe.filter_bytes, captured, cpu, facts);
}

int floor_log2(uint64_t value) { return 63 - __builtin_clzll(value); }

uint64_t transformed(uint8_t transform, uint64_t number, const int64_t* parameters) {
  const auto value = static_cast<int64_t>(number);
  switch (transform) {
    case kTransformLog2Roundup: return number <= 1 ? 0 : static_cast<uint64_t>(floor_log2(number - 1) + 1);
    case kTransformBuckets: {
      const auto size = static_cast<uint64_t>(parameters[0]);
      return size == 0 ? number : number / size * size;
    }
    case kTransformHistBucket: return value < 0 ? 0 : value == 0 ? 1 : static_cast<uint64_t>(2 + floor_log2(number));
    case kTransformLinearBucket: {
      const int64_t min = parameters[0], max = parameters[1], step = parameters[2];
      if (step <= 0 || max <= min) return 0;
      if (value < min) return 0;
      if (value >= max) return static_cast<uint64_t>((max - min) / step + 1);
      return static_cast<uint64_t>((value - min) / step + 1);
    }
    case kTransformLatencyBucket: return number == 0 ? 0 : static_cast<uint64_t>(floor_log2(number) + 1);
    default: return number;
  }
}

// One key part or value of an aggregation; false when the agent cannot compute it.
bool aggregated_number(const AgentAggValue& part, const AgentAggTableHeader& table, const CapturedArguments& captured,
                       uint32_t cpu, const ReturnFacts& facts, uint64_t now, uint64_t& number) {
  if (part.source == kFilterConstant) {
    number = static_cast<uint64_t>(part.operand);
  } else if (part.source == kFilterLatency) {
    const auto slot = static_cast<uint64_t>(part.operand);
    if (!facts.is_return || facts.saved == nullptr || slot >= kMaxSavedWords) return false;
    const uint64_t ticks = now - facts.saved[slot];
    number = static_cast<uint64_t>((static_cast<unsigned __int128>(ticks) * table.clock_mult) >> 32);
  } else {
    if (!captured_number(part.source, part.argument, part.size, part.bit_width,
                         part.bit_offset, captured, cpu, facts, number))
      return false;
    number = number_at_size(number, part.size, (part.flags & kFilterSigned) != 0);
  }
  number = transformed(part.transform, number, part.parameters);
  return true;
}

// What one hit adds to one aggregation's table.
struct AggregatedHit {
  bool skipped;  // the aggregation's own filter turned the hit away
  uint32_t key_words;
  uint64_t key[kAggKeyWords];
  uint64_t values[kMaxAggValues];
};

bool table_usable(const AgentAggTableHeader& table) {
  return table.magic == kAggTableMagic && table.max_entries != 0 && table.max_entries <= kMaxAggEntries &&
         table.slot_count == 2 * table.max_entries && (table.slot_count & (table.slot_count - 1)) == 0;
}

void fold_value(uint64_t* word, uint8_t fold, uint64_t value) {
  if (fold == kFoldSum) {
    __atomic_fetch_add(word, value, __ATOMIC_RELAXED);
    return;
  }
  uint64_t seen = __atomic_load_n(word, __ATOMIC_RELAXED);
  for (;;) {
    const bool better = fold == kFoldMin ? static_cast<int64_t>(value) < static_cast<int64_t>(seen)
                                         : static_cast<int64_t>(value) > static_cast<int64_t>(seen);
    if (!better) return;
    if (__atomic_compare_exchange_n(word, &seen, value, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return;
  }
}

bool same_key(const AgentAggEntry& entry, const AggregatedHit& hit) {
  for (uint32_t i = 0; i < kAggKeyWords; ++i)
    if (entry.key[i] != hit.key[i]) return false;
  return true;
}

// Folds the hit into its key's entry: a new key claims a slot; a full table counts a drop.
void fold_into_table(AgentAggTableHeader& table, const AgentAggregation& aggregation, const AggregatedHit& hit) {
  auto* slots = reinterpret_cast<uint64_t*>(&table + 1);
  auto* entries = reinterpret_cast<AgentAggEntry*>(reinterpret_cast<uint8_t*>(&table) + agg_entries_offset(table.max_entries));
  const uint64_t hash = agg_key_hash(hit.key, kAggKeyWords);
  const uint64_t mask = table.slot_count - 1;
  uint64_t reserved = ~uint64_t{0};  // an entry this hit filled, not yet published
  uint64_t at = hash & mask;
  for (uint64_t probes = 0; probes < table.slot_count; ++probes, at = (at + 1) & mask) {
    uint64_t slot = load_acquire(&slots[at]);
    if (slot == 0) {
      if (reserved == ~uint64_t{0}) {
        const uint64_t index = __atomic_fetch_add(&table.entries, 1, __ATOMIC_RELAXED);
        if (index >= table.max_entries) break;
        reserved = index;
        AgentAggEntry& entry = entries[index];
        for (uint32_t i = 0; i < kAggKeyWords; ++i) entry.key[i] = hit.key[i];
        entry.hitcount = 0;
        for (uint32_t v = 0; v < kMaxAggValues; ++v) {
          const uint8_t fold = v < aggregation.value_count ? aggregation.values[v].fold : uint8_t{kFoldSum};
          entry.values[v] = fold == kFoldMin ? uint64_t{0x7fffffffffffffff} : fold == kFoldMax ? uint64_t{1} << 63 : 0;
        }
      }
      const uint64_t mine = (hash & 0xffffffff00000000ull) | (reserved + 1);
      if (__atomic_compare_exchange_n(&slots[at], &slot, mine, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        store_release(&entries[reserved].ready, 1);
        slot = mine;
      }
      // Lost the race: `slot` is the winner's, maybe this very key.
    }
    if ((slot >> 32) != (hash >> 32)) continue;
    const uint64_t index = (slot & 0xffffffff) - 1;
    if (index >= table.max_entries || !same_key(entries[index], hit)) continue;
    AgentAggEntry& entry = entries[index];
    __atomic_fetch_add(&entry.hitcount, 1, __ATOMIC_RELAXED);
    for (uint32_t v = 0; v < aggregation.value_count && v < kMaxAggValues; ++v)
      fold_value(&entry.values[v], aggregation.values[v].fold, hit.values[v]);
    return;
  }
  __atomic_fetch_add(&table.dropped, 1, __ATOMIC_RELAXED);
}

AgentAggTableHeader* table_of(AgentAggTablePair& pair, uint64_t t) {
  return reinterpret_cast<AgentAggTableHeader*>(reinterpret_cast<uint8_t*>(&pair) + sizeof pair + t * pair.table_bytes);
}

// The pair at `address` when it is what the tracer maps: two usable tables of one size.
AgentAggTablePair* usable_pair(uint64_t address) {
  auto* pair = reinterpret_cast<AgentAggTablePair*>(address);
  if (pair == nullptr || pair->magic != kAggPairMagic) return nullptr;
  const AgentAggTableHeader* first = table_of(*pair, 0);
  if (!table_usable(*first) || pair->table_bytes != agg_pair_table_bytes(first->max_entries)) return nullptr;
  const AgentAggTableHeader* second = table_of(*pair, 1);
  if (!table_usable(*second) || second->max_entries != first->max_entries) return nullptr;
  return pair;
}

// Folds the hit into the pair's active table (AgentAggTablePair: the tracer waits for
// writers[t] before it reads table t). A pair whose index keeps moving under the hit (only a
// program writing over it could do that) counts the hit dropped.
void fold_into_pair(AgentAggTablePair& pair, const AgentAggregation& aggregation, const AggregatedHit& hit) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    const uint64_t t = __atomic_load_n(&pair.active, __ATOMIC_SEQ_CST) & 1;
    __atomic_fetch_add(&pair.writers[t][0], 1, __ATOMIC_SEQ_CST);
    const bool still = (__atomic_load_n(&pair.active, __ATOMIC_SEQ_CST) & 1) == t;
    if (still) fold_into_table(*table_of(pair, t), aggregation, hit);
    __atomic_fetch_sub(&pair.writers[t][0], 1, __ATOMIC_RELEASE);
    if (still) return;
  }
  __atomic_fetch_add(&table_of(pair, 0)->dropped, 1, __ATOMIC_RELAXED);
}

// Folds the hit into the probe's aggregations; false (nothing changed) when the agent cannot
// compute all of them: the hit is then recorded for the tracer.
bool aggregate(const AgentProbe& probe, const CapturedArguments& captured, uint32_t cpu, const ReturnFacts& facts,
               uint64_t now) {
  if (probe.aggregation_bytes < sizeof(AgentAggregations)) return false;
  const auto* block = reinterpret_cast<const uint8_t*>(&probe) + probe.aggregation_offset;
  const auto& aggregations = *reinterpret_cast<const AgentAggregations*>(block);
  if (aggregations.count == 0 || aggregations.count > kMaxAggregations) return false;
  AggregatedHit hits[kMaxAggregations];
  for (uint32_t a = 0; a < aggregations.count; ++a) {
    const AgentAggregation& aggregation = aggregations.items[a];
    AggregatedHit& hit = hits[a];
    hit.skipped = false;
    for (uint32_t i = 0; i < kAggKeyWords; ++i) hit.key[i] = 0;
    if (aggregation.key_count > kMaxAggKeys || aggregation.value_count > kMaxAggValues) return false;
    AgentAggTablePair* pair = usable_pair(aggregation.table);
    if (pair == nullptr) return false;
    const AgentAggTableHeader* table = table_of(*pair, 0);  // its clock_mult (both tables have it)
    if (aggregation.filter_offset != 0) {
      if (aggregation.filter_offset > probe.aggregation_bytes ||
          aggregation.filter_bytes > probe.aggregation_bytes - aggregation.filter_offset)
        return false;
      const uint8_t verdict = filter_verdict(block + aggregation.filter_offset, aggregation.filter_bytes, captured, cpu, facts);
      if (verdict == 2) return false;
      hit.skipped = verdict == 0;
      if (hit.skipped) continue;
    }
    uint32_t words = 0;
    for (uint32_t k = 0; k < aggregation.key_count; ++k) {
      const AgentAggValue& part = aggregation.keys[k];
      if ((part.flags & kAggString) != 0) {
        uint32_t length = 0;
        const char* text = captured_string(part.argument, captured, length);
        constexpr uint32_t kWords = kAggStringBytes / 8;
        if (text == nullptr || length >= kAggStringBytes || words + kWords > kAggKeyWords) return false;
        auto* bytes = reinterpret_cast<uint8_t*>(&hit.key[words]);
        for (uint32_t b = 0; b < length; ++b) bytes[b] = static_cast<uint8_t>(text[b]);
        words += kWords;
        continue;
      }
      if (words >= kAggKeyWords) return false;
      if (!aggregated_number(part, *table, captured, cpu, facts, now, hit.key[words++])) return false;
    }
    hit.key_words = words;
    for (uint32_t v = 0; v < aggregation.value_count; ++v)
      if (!aggregated_number(aggregation.values[v], *table, captured, cpu, facts, now, hit.values[v])) return false;
  }
  for (uint32_t a = 0; a < aggregations.count; ++a) {
    if (hits[a].skipped) continue;
    fold_into_pair(*reinterpret_cast<AgentAggTablePair*>(aggregations.items[a].table), aggregations.items[a], hits[a]);
  }
  return true;
}

// The tracer's switch for the probe (AgentRingHeader::disabled). A relaxed load: the tracer's
// write is seen by whatever runs after it; a hit already past this test when it lands began
// while the probe was on, and is recorded.
inline bool switched_off(const AgentRingHeader& ring, uint32_t probe_index) {
  return __atomic_load_n(&ring.disabled[probe_index], __ATOMIC_RELAXED) != 0;
}

uint64_t current_tid() { return static_cast<uint64_t>(syscall6(kSysGettid, 0, 0, 0, 0, 0, 0)); }

// Records one event of `probe` (its ops from `first_op`) into the ring. `tid` 0: not asked yet
// (a system call: a hit the filter turns away or an aggregation takes never needs it).
void record(const AgentProbe& probe, uint32_t first_op, const uint64_t* registers, uint64_t tid,
            const ReturnFacts& facts) {
  auto* ring = reinterpret_cast<AgentRingHeader*>(probe.ring);
  if (ring->magic != kRingMagic || probe.probe_index >= kMaxProbes) return;
  if (switched_off(*ring, probe.probe_index)) return;
  const uint64_t size = ring->ring_size;
  uint8_t* const base = reinterpret_cast<uint8_t*>(ring + 1);
  if (probe.max_record < 8 * kRecordFixedWords || probe.max_record > size / 4 || (probe.max_record & 15) != 0 ||
      (size & 15) != 0 || probe.saved_count > kMaxSavedWords)
    return;

  // The hit is recorded on the stack first: most records are far smaller than the most their
  // probe could need (a string reserves 4 KiB), and the ring is reserved by the exact size.
  // Only a record that does not fit is recorded again, straight into a maximal reservation.
  constexpr uint32_t kScratchBytes = 512;
  uint8_t scratch[kScratchBytes];
  uint32_t cpu = 0;
  const uint64_t tsc = read_clock(cpu);
  const Reader reader = reader_of(*ring);
  CapturedArguments captured;
  captured.count = 0;
  auto fill = [&](RecordWriter& out, CapturedArguments* capture) {
    out.word(tid);
    out.word(tsc);
    out.word(cpu);
    if (facts.is_return) {
      out.word(facts.return_address);
      for (uint32_t i = 0; i < probe.saved_count; ++i) out.word(facts.saved[i]);
    }
    for (uint32_t r = 0; r < kSavedRegisterWords; ++r)
      if (probe.register_mask & (uint64_t{1} << r)) out.word(registers[r]);
    run_ops(probe, first_op, reader, registers, facts, out, capture);
  };
  RecordWriter staged(scratch + 16, scratch + kScratchBytes);
  const bool judged = probe.filter_offset != 0 || probe.aggregation_offset != 0;
  fill(staged, judged ? &captured : nullptr);
  const bool staged_fits = !staged.overflowed();
  // A hit the filter turns away never touches the ring, nor does one the agent aggregates
  // (what did not fit the scratch is left to the tracer).
  if (staged_fits && judged) {
    const uint8_t verdict = probe_filter_verdict(probe, captured, cpu & 0xfff, facts);
    if (verdict == 0) {
      __atomic_fetch_add(&ring->filtered[probe.probe_index], 1, __ATOMIC_RELAXED);
      return;
    }
    if (verdict == 1 && probe.aggregation_offset != 0 && aggregate(probe, captured, cpu & 0xfff, facts, tsc)) {
      __atomic_fetch_add(&ring->aggregated[probe.probe_index], 1, __ATOMIC_RELAXED);
      return;
    }
  }
  if (tid == 0) {
    tid = current_tid();
    *reinterpret_cast<uint64_t*>(scratch + 16) = tid;  // the staged record's first word
  }
  // Lengths are multiples of 16, so that what is left at the end of the ring always holds a
  // filler's two words.
  const uint64_t length = staged_fits ? (static_cast<uint64_t>(staged.at() - scratch) + 15) & ~uint64_t{15} : probe.max_record;

  // Reserve: [head, head + need); a record never wraps, a filler takes the end of the ring.
  uint64_t head = load_acquire(&ring->head);
  uint64_t offset = 0, need = 0;
  for (;;) {
    const uint64_t tail = load_acquire(&ring->tail);
    offset = head & (size - 1);
    need = offset + length > size ? (size - offset) + length : length;
    if (head + need - tail > size) {
      __atomic_fetch_add(&ring->dropped[probe.probe_index], 1, __ATOMIC_RELAXED);
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
  store_release(words, uint64_t{probe.probe_index} << 32 | length);  // reserved, not committed

  if (staged_fits) {
    copy_bytes(record + 16, scratch + 16, static_cast<uint64_t>(staged.at() - scratch) - 16);
    store_release(words, kCommitted | uint64_t{probe.probe_index} << 32 | length);
    return;
  }
  RecordWriter out(record + 16, record + length);
  fill(out, nullptr);
  // What the ops left unused becomes a filler, so the record's length is exact.
  const uint64_t used = static_cast<uint64_t>(out.at() - record);
  if (used + 16 <= length) {
    auto* filler = reinterpret_cast<uint64_t*>(record + used);
    filler[1] = position + used;
    store_release(filler, kCommitted | (uint64_t{kPadProbe} << 32) | (length - used));
    store_release(words, kCommitted | uint64_t{probe.probe_index} << 32 | used);
  } else {
    store_release(words, kCommitted | uint64_t{probe.probe_index} << 32 | length);
  }
}

// The thread's frame stack; with `claim`, a free slot becomes its own. Null when none is free.
// A thread's slot is freed by the tracer when the thread exits. With no tracer (xprobe was
// SIGKILLed) the slots of exited threads stay taken: a program that keeps making threads would
// fill the table, and every later hit would walk all of it for nothing. When no slot is free,
// the first few slots of the chain whose thread is gone (tgkill with signal 0: ESRCH) are taken
// over. Only a table full of threads is ever asked, so a traced program never pays for it.
inline constexpr uint32_t kReclaimTries = 8;
inline constexpr long kNoSuchProcess = -3;  // -ESRCH

AgentThread* reclaim_slot_of_exited_thread(AgentReturnState& state, uint64_t tid, long pid) {
  uint32_t at = thread_slot_hash(tid);
  for (uint32_t n = 0; n < kReclaimTries; ++n, at = (at + 1) & (kThreadSlots - 1)) {
    AgentThread& slot = state.threads[at];
    uint64_t owner = load_acquire(&slot.tid);
    if (owner == 0 || owner == kFreedThread || (owner & kGoroutineKey) != 0) continue;
    if (syscall6(kSysTgkill, pid, static_cast<long>(owner), 0, 0, 0, 0) != kNoSuchProcess) continue;
    if (__atomic_compare_exchange_n(&slot.tid, &owner, tid, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      slot.depth = 0;
      return &slot;
    }
  }
  return nullptr;
}

AgentThread* find_thread(AgentReturnState& state, uint64_t tid, bool claim, long pid = 0) {
  const uint32_t start = thread_slot_hash(tid);
  uint32_t at = start;
  for (uint32_t n = 0; n < kThreadSlots; ++n, at = (at + 1) & (kThreadSlots - 1)) {
    const uint64_t owner = load_acquire(&state.threads[at].tid);
    if (owner == tid) return &state.threads[at];
    if (owner == 0) break;  // the end of the chain
  }
  if (!claim) return nullptr;
  // Not there (and only this thread claims a slot for itself): the chain's first free slot.
  at = start;
  for (uint32_t n = 0; n < kThreadSlots; ++n, at = (at + 1) & (kThreadSlots - 1)) {
    AgentThread& slot = state.threads[at];
    uint64_t owner = load_acquire(&slot.tid);
    if (owner != 0 && owner != kFreedThread) continue;
    if (__atomic_compare_exchange_n(&slot.tid, &owner, tid, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      slot.depth = 0;
      return &slot;
    }
  }
  return (tid & kGoroutineKey) == 0 && pid != 0 ? reclaim_slot_of_exited_thread(state, tid, pid) : nullptr;
}

void count_discarded(AgentReturnState& state, const AgentFrame& frame) {
  if (frame.probe_index >= kMaxProbes) return;
  AgentProbeCounters& counters = state.counters[frame.probe_index];
  __atomic_fetch_sub(&counters.active, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add((frame.flags & kFrameSiteUnknown) ? &counters.missed : &counters.discarded, 1, __ATOMIC_RELAXED);
}

// The frame stack a hit of `probe` belongs to: the thread's, or in a Go program the running
// goroutine's (return_frames.h).
FrameOwner owner_of(const AgentReturnState& state, const AgentProbe& probe, uint64_t tid, const uint64_t* registers) {
  const Reader reader = reader_of(*reinterpret_cast<const AgentRingHeader*>(probe.ring));
  return frame_owner(load_acquire(&state.goroutine_frames) != 0, tid, registers[kSpWord], registers[kGoroutineWord],
                     [&](uint64_t address, uint64_t* words, uint32_t count) {
                       return copy_in(reader, address, reinterpret_cast<uint8_t*>(words), count * 8) == count * 8;
                     });
}

long pid_of(const AgentProbe& probe) { return static_cast<long>(reinterpret_cast<const AgentRingHeader*>(probe.ring)->pid); }

// Whether the request signal can be sent without the program noticing, should no tracer be
// there: not blocked in this thread, and no handler of the program's, or a Go program's: the
// Go runtime sends SIGURG itself to preempt goroutines, and documents that a program may see
// spurious ones.
bool request_signal_unnoticed(const AgentReturnState& state) {
  uint64_t action[4] = {};  // the kernel's sigaction: handler, flags, restorer, mask
  if (load_acquire(&state.goroutine_frames) == 0) {
    if (syscall6(kSysRtSigaction, kRequestSignal, 0, reinterpret_cast<long>(action), 8, 0, 0) != 0) return false;
    if (action[0] > 1) return false;  // neither SIG_DFL nor SIG_IGN
  }
  uint64_t blocked = 0;
  if (syscall6(kSysRtSigprocmask, 0, 0, reinterpret_cast<long>(&blocked), 8, 0, 0) != 0) return false;
  return (blocked & (uint64_t{1} << (kRequestSignal - 1))) == 0;
}

// The tracer must patch (or watch) `site` before the call returns: the signal stops this
// thread until it has. Else the request waits in `pending` for the tracer's next look.
// `thread` is the slot of the thread itself (not of a goroutine): the tracer finds the request
// by the tid of the thread the signal stopped.
void ask_for_site(AgentReturnState& state, AgentThread* thread, uint64_t site, uint64_t tid, long pid) {
  if (thread != nullptr && request_signal_unnoticed(state)) {
    store_release(&thread->request, site);
    (void)syscall6(kSysTgkill, pid, static_cast<long>(tid), kRequestSignal, 0, 0, 0);
    store_release(&thread->request, 0);
    return;
  }
  for (uint32_t i = 0; i < kPendingSlots; ++i) {
    uint64_t expected = 0;
    if (load_acquire(&state.pending[i]) == site) return;
    if (__atomic_compare_exchange_n(&state.pending[i], &expected, site, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return;
  }
}

// A return probe's function entry: a frame for the return, and the tracer asked for its
// return site if the agent does not know it yet.
void return_entry(const AgentProbe& probe, const uint64_t* registers) {
  auto* state = reinterpret_cast<AgentReturnState*>(probe.returns);
  if (state == nullptr || probe.probe_index >= kMaxProbes || probe.saved_count > kMaxSavedWords) return;
  if (switched_off(*reinterpret_cast<const AgentRingHeader*>(probe.ring), probe.probe_index)) return;
  AgentProbeCounters& counters = state->counters[probe.probe_index];
  const uint64_t tid = current_tid();
  const FrameOwner owner = owner_of(*state, probe, tid, registers);
  AgentThread* thread = find_thread(*state, owner.key, true, pid_of(probe));
  if (thread == nullptr) {
    __atomic_fetch_add(&counters.missed, 1, __ATOMIC_RELAXED);
    return;
  }
  const uint64_t sp = owner.sp;
  const uint64_t return_address = return_address_at_entry(registers);
  if (thread->depth > kMaxFrames) thread->depth = 0;
  discard_frames_at_or_below(*thread, sp, [&](const AgentFrame& frame) { count_discarded(*state, frame); });
  const uint64_t site = find_site(state->sites, return_address);
  const uint64_t active = load_acquire(&counters.active), released = load_acquire(&counters.released);
  if ((site & kSiteUnwatched) != 0 || thread->depth == kMaxFrames ||
      (active > released && active - released >= probe.max_active)) {
    __atomic_fetch_add(&counters.missed, 1, __ATOMIC_RELAXED);
    if ((owner.key & kGoroutineKey) != 0 && thread->depth == 0) store_release(&thread->tid, kFreedThread);
    return;
  }
  __atomic_fetch_add(&counters.active, 1, __ATOMIC_RELAXED);
  AgentFrame& frame = thread->frames[thread->depth];
  frame.descriptor = reinterpret_cast<uint64_t>(&probe);
  frame.return_address = return_address;
  frame.entry_sp = sp;
  frame.probe_index = probe.probe_index;
  frame.flags = site == 0 ? kFrameSiteUnknown : 0;
  for (uint32_t i = 0; i < kMaxSavedWords; ++i) frame.saved[i] = 0;
  if (probe.entry_ops != 0) {
    // The entry's reads are not recorded: the scratch only gives the ops room to read into.
    uint8_t scratch[512];
    RecordWriter discarded(scratch, scratch + sizeof scratch);
    ReturnFacts facts;
    facts.save_to = frame.saved;
    run_ops(probe, 0, reader_of(*reinterpret_cast<const AgentRingHeader*>(probe.ring)), registers, facts, discarded);
  }
  ++thread->depth;
  if (site == 0) {
    AgentThread* requester = owner.key == tid ? thread : find_thread(*state, tid, true, pid_of(probe));
    ask_for_site(*state, requester, return_address, tid, pid_of(probe));
    // Asked with the signal, the tracer has planted the site by now.
    if (find_site(state->sites, return_address) != 0) thread->frames[thread->depth - 1].flags = 0;
  }
  return;
}

// Code a call returns to: the frames that are over now, the returning one recorded.
void return_site(const AgentProbe& site, const uint64_t* registers) {
  auto* state = reinterpret_cast<AgentReturnState*>(site.returns);
  if (state == nullptr) return;
  const uint64_t tid = current_tid();
  const FrameOwner owner = owner_of(*state, site, tid, registers);
  AgentThread* thread = find_thread(*state, owner.key, false);
  if (thread == nullptr || thread->depth == 0) return;
  if (thread->depth > kMaxFrames) thread->depth = 0;
  AgentFrame returning;
  const bool returned = pop_returning_frame(*thread, owner.sp, registers[kIpWord], returning,
                                            [&](const AgentFrame& frame) { count_discarded(*state, frame); });
  // A goroutine's slot is given back when its last frame is over (goroutines come and go by
  // the million; threads' slots are freed by the tracer when the thread exits).
  if ((owner.key & kGoroutineKey) != 0 && thread->depth == 0) store_release(&thread->tid, kFreedThread);
  if (!returned) return;
  if (returning.probe_index < kMaxProbes)
    __atomic_fetch_sub(&state->counters[returning.probe_index].active, 1, __ATOMIC_RELAXED);
  const auto* probe = reinterpret_cast<const AgentProbe*>(returning.descriptor);
  if (probe->kind != kKindReturnEntry) return;
  ReturnFacts facts;
  facts.is_return = true;
  facts.return_address = registers[kIpWord];
  facts.saved = returning.saved;
  record(*probe, probe->entry_ops, registers, tid, facts);
}

// Runs on an agent stack: what the trampoline asked for.
void hit_on_agent_stack(const void* probe_address, const void* registers_address) {
  const auto& probe = *static_cast<const AgentProbe*>(probe_address);
  const auto* registers = static_cast<const uint64_t*>(registers_address);
  switch (probe.kind) {
    case kKindEvent: record(probe, 0, registers, 0, ReturnFacts{}); break;
    case kKindReturnEntry: return_entry(probe, registers); break;
    case kKindReturnSite: return_site(probe, registers); break;
    default: break;
  }
}

// A free agent stack claimed (its top), or 0 when all are in use.
uint64_t claim_stack(AgentRingHeader& ring) {
  if (ring.stacks == 0 || (ring.stacks & 15) != 0) return 0;
  for (uint32_t word = 0; word < kAgentStacks / 64; ++word) {
    uint64_t busy = load_acquire(&ring.stacks_busy[word]);
    while (busy != ~uint64_t{0}) {
      const uint32_t bit = static_cast<uint32_t>(__builtin_ctzll(~busy));
      if (__atomic_compare_exchange_n(&ring.stacks_busy[word], &busy, busy | (uint64_t{1} << bit), false,
                                      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return ring.stacks + (uint64_t{word} * 64 + bit + 1) * kAgentStackBytes;
    }
  }
  return 0;
}

void release_stack(AgentRingHeader& ring, uint64_t top) {
  // After a detach the header reads as zeros (its pages were given back): nothing to release.
  const uint64_t stacks = load_acquire(&ring.stacks);
  if (stacks == 0 || top <= stacks || top - stacks > uint64_t{kAgentStacks} * kAgentStackBytes) return;
  const uint64_t index = (top - stacks) / kAgentStackBytes - 1;
  __atomic_fetch_and(&ring.stacks_busy[index / 64], ~(uint64_t{1} << (index % 64)), __ATOMIC_RELEASE);
}

}  // namespace

// The trampolines' one entry. It runs on the thread's own stack only long enough to claim an
// agent stack: the rest runs there.
extern "C" __attribute__((section(".text.entry"), used)) void xprobe_agent_hit(const AgentProbe* probe,
                                                                                const uint64_t* registers) {
  auto* ring = reinterpret_cast<AgentRingHeader*>(probe->ring);
  if (ring->magic != kRingMagic) return;
  const uint64_t top = claim_stack(*ring);
  if (top == 0) {
    // A return site's miss shows later, as its frame's unseen return.
    if (probe->kind != kKindReturnSite && probe->probe_index < kMaxProbes) __atomic_fetch_add(&ring->dropped[probe->probe_index], 1, __ATOMIC_RELAXED);
    return;
  }
  call_on_stack(top, hit_on_agent_stack, probe, registers);
  release_stack(*ring, top);
}
