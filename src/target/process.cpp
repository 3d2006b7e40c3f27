#include "target/process.h"

#include <fcntl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "arch/register_block.h"
#include "target/proc_queries.h"
#include "target/wait.h"
#include "target/process_internal.h"

namespace xprobe::target {

using namespace detail;

bool Process::all_stopped() const {
  for (const auto& [tid, state] : threads_)
    if (state != ThreadState::Stopped) return false;
  return true;
}

Process::Process(pid_t pid, bool launched) : pid_(pid), launched_(launched) {}

Process::~Process() {
  if (!alive_) {
    if (mem_fd_ >= 0) ::close(mem_fd_);
    return;
  }
  // A destructor has nobody to report to; the process is let go or killed as well as it can be.
  if (launched_) {
    (void)kill();
  } else {
    (void)detach();
  }
  if (mem_fd_ >= 0) ::close(mem_fd_);
}

Status Process::open_memory() {
  if (mem_fd_ >= 0) ::close(mem_fd_);
  mem_fd_ = ::open(fmt::format("/proc/{}/mem", pid_).c_str(), O_RDWR | O_CLOEXEC);
  if (mem_fd_ < 0) return make_error(fmt::format("cannot open /proc/{}/mem: {}", pid_, errno_text()));
  return {};
}

Status Process::wait_until_stopped(pid_t tid) {
  for (;;) {
    auto state = threads_.find(tid);
    if (state == threads_.end()) return {};
    if (state->second == ThreadState::Stopped) return {};
    // A leader past its exit stop while other threads live will not stop again, and is not
    // reported before they are reaped (after their own exit stops, which this wait may hold).
    if (tid == pid_ && leader_exiting_) return {};
    int status = 0;
    if (auto early = take_stashed_status(tid)) {
      status = *early;
    } else {
      pid_t got = ::waitpid(tid, &status, __WALL);
      if (got < 0) {
        if (errno == EINTR) continue;
        if (errno == ECHILD) {  // gone without a trace (reaped elsewhere)
          threads_.erase(tid);
          if (tid == pid_) alive_ = false;
          return {};
        }
        return make_error(fmt::format("waitpid({}): {}", tid, errno_text()));
      }
    }
    auto event = classify(tid, status);
    if (!event) return event.error();
    if (*event) pending_.push_back(**event);
  }
}

Result<std::optional<StopEvent>> Process::next_event() {
  auto next = next_event(WaitOptions{});
  if (!next) return next.error();
  return std::move(next->event);
}

Result<NextEvent> Process::next_event(const WaitOptions& options) {
  WaitOptions wait = options;
  for (;;) {
    if (!pending_.empty()) {
      StopEvent event = pending_.front();
      pending_.pop_front();
      return NextEvent{event, false};
    }
    if (!alive_) return make_error(fmt::format("process {} is gone", pid_));
    for (auto& [tid, state] : threads_) {
      if (auto early = take_stashed_status(tid)) {
        auto event = classify(tid, *early);
        if (!event) return event.error();
        if (*event) pending_.push_back(**event);
        break;
      }
    }
    if (!pending_.empty()) continue;
    auto waited = wait_any(wait);
    wait.poll_first = true;  // what follows a reaped status is a fresh wait
    if (!waited) return waited.error();
    if (!waited->status) return NextEvent{std::nullopt, waited->idle};
    RawWait raw = *waited->status;
    if (!owns(raw.tid)) {
      stash_status(raw.tid, raw.status);
      StopEvent foreign;
      foreign.kind = StopKind::Foreign;
      foreign.tid = raw.tid;
      return NextEvent{foreign, false};
    }
    auto event = classify(raw.tid, raw.status);
    if (!event) return event.error();
    if (*event) return NextEvent{std::move(*event), false};
  }
}

Status Process::resume(pid_t tid, int signal) {
  auto state = threads_.find(tid);
  if (state == threads_.end()) return make_error(fmt::format("thread {} is not traced", tid));
  if (state->second != ThreadState::Stopped) return {};
  long request = PTRACE_CONT;
  if (signal == 0 && group_stopped_.count(tid)) request = PTRACE_LISTEN;  // stay in the program's group-stop
  long result = ::ptrace(static_cast<__ptrace_request>(request), tid, nullptr, signal);
  if (result != 0 && errno == EIO && request == PTRACE_LISTEN) {
    // A SIGCONT ended the group-stop while the thread sat in a ptrace-stop: LISTEN only
    // works in a group-stop, so the thread simply runs on.
    group_stopped_.erase(tid);
    request = PTRACE_CONT;
    result = ::ptrace(PTRACE_CONT, tid, nullptr, signal);
  }
  if (result != 0 && errno != ESRCH) {
    return make_error(fmt::format("cannot resume thread {}: {}", tid, errno_text()));
  }
  state->second = request == PTRACE_LISTEN ? ThreadState::Listening : ThreadState::Running;
  return {};
}

Status Process::resume_all(pid_t except) {
  std::set<pid_t> with_events;
  for (const StopEvent& event : pending_) with_events.insert(event.tid);
  std::vector<pid_t> to_resume;
  for (const auto& [tid, state] : threads_) {
    if (state == ThreadState::Stopped && !with_events.count(tid) && tid != except) to_resume.push_back(tid);
  }
  for (pid_t tid : to_resume) {
    if (auto resumed = resume(tid); !resumed) return resumed;
  }
  return {};
}

Status Process::stop_all() {
  waiting_for_interrupt_ = true;
  auto finish = [&](Status status) {
    waiting_for_interrupt_ = false;
    return status;
  };
  // A clone event that arrives while we wait adds a thread (Starting): it is waited for in
  // the next round, so that nothing of the program runs when this returns.
  for (;;) {
    std::vector<pid_t> waiting;
    for (const auto& [tid, state] : threads_) {
      if (state == ThreadState::Running || state == ThreadState::Listening) {
        ::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr);
        waiting.push_back(tid);
      } else if (state == ThreadState::Starting && !(tid == pid_ && leader_exiting_)) {
        waiting.push_back(tid);
      }
    }
    if (waiting.empty()) break;
    for (pid_t tid : waiting) {
      if (auto stopped = wait_until_stopped(tid); !stopped) return finish(stopped);
    }
  }
  // An interrupt is reported before a signal already queued: a thread that has just executed
  // a breakpoint may stop here with its signal still pending. Let it take the signal now, so the
  // caller sees the trap instead of the program dying of it after a detach. Its first resume
  // may end in one more interrupt stop instead (a PTRACE_INTERRUPT that reached it while it
  // was already stopped is kept for its next resume): then again.
  for (int round = 0; round < 4; ++round) {
    std::vector<pid_t> trapped;
    for (const auto& [tid, state] : threads_) {
      if (state != ThreadState::Stopped || !breakpoint_signal_pending(tid)) continue;
      // By value: clang before 16 cannot capture a structured binding.
      bool has_event = std::any_of(pending_.begin(), pending_.end(), [id = tid](const StopEvent& e) { return e.tid == id; });
      if (!has_event) trapped.push_back(tid);
    }
    if (trapped.empty()) break;
    for (pid_t tid : trapped) {
      if (::ptrace(PTRACE_CONT, tid, nullptr, 0) != 0) continue;
      threads_[tid] = ThreadState::Running;
      if (auto stopped = wait_until_stopped(tid); !stopped) return finish(stopped);
    }
  }
  return finish({});
}

bool Process::breakpoint_signal_pending(pid_t tid) const {
  // A breakpoint's signal is forced (never blocked); the same signal the program blocks and
  // someone sent it stays pending while it runs: resuming to deliver it would let the thread run on.
  return signal_pending_unblocked(pid_, tid, arch::kBreakpointSignal);
}

std::deque<StopEvent> Process::take_pending_events() {
  std::deque<StopEvent> events;
  events.swap(pending_);
  return events;
}

Status Process::detach() {
  if (!alive_) return {};
  if (auto stopped = stop_all(); !stopped) return stopped;
  std::map<pid_t, int> deliver;
  for (const StopEvent& event : pending_) {
    if (event.kind == StopKind::Signal || event.kind == StopKind::Trap) deliver[event.tid] = event.signal;
  }
  pending_.clear();
  for (const auto& [tid, state] : threads_) {
    if (state != ThreadState::Stopped) continue;
    ::ptrace(PTRACE_DETACH, tid, nullptr, deliver.count(tid) ? deliver[tid] : 0);
  }
  threads_.clear();
  alive_ = false;
  return {};
}

Status Process::kill() {
  if (!alive_) return {};
  ::kill(pid_, SIGKILL);
  while (alive_) {
    int status = 0;
    pid_t got = ::waitpid(-1, &status, __WALL);
    if (got < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (!owns(got)) {
      stash_status(got, status);
      continue;
    }
    if (WIFSTOPPED(status)) {
      ::ptrace(PTRACE_CONT, got, nullptr, 0);
      continue;
    }
    if (got == pid_) break;
    threads_.erase(got);
  }
  alive_ = false;
  threads_.clear();
  pending_.clear();
  return {};
}

pid_t Process::any_stopped_thread() const {
  for (const auto& [tid, state] : threads_) {
    if (state == ThreadState::Stopped) return tid;
  }
  return 0;
}

Result<Registers> Process::get_registers(pid_t tid) {
  Registers registers;
  if (auto read = arch::read_register_block(tid, registers.raw); !read) return read.error();
  return registers;
}

Status Process::set_registers(pid_t tid, const Registers& registers) {
  return arch::write_register_block(tid, registers.raw);
}

Status Process::read(uint64_t address, std::span<uint8_t> buffer) {
  ReadRequest request{address, buffer, 0};
  if (auto batch = read_batch(std::span<ReadRequest>(&request, 1)); !batch) return batch;
  if (request.copied != buffer.size()) {
    return make_error(fmt::format("cannot read {} bytes at 0x{:x} in process {}", buffer.size(), address, pid_));
  }
  return {};
}

Status Process::read_batch(std::span<ReadRequest> requests) {
  // One iovec per page so that a read running into an unmapped page still returns the part
  // before it (process_vm_readv never splits an iovec).
  struct Piece {
    size_t request;
    iovec local;
    iovec remote;
  };
  std::vector<Piece> pieces;
  for (size_t i = 0; i < requests.size(); ++i) {
    ReadRequest& request = requests[i];
    request.copied = 0;
    uint64_t address = request.address;
    size_t done = 0;
    while (done < request.buffer.size()) {
      uint64_t page_left = kPageSize - (address % kPageSize);
      size_t chunk = static_cast<size_t>(std::min<uint64_t>(page_left, request.buffer.size() - done));
      pieces.push_back({i, {request.buffer.data() + done, chunk}, {reinterpret_cast<void*>(address), chunk}});
      done += chunk;
      address += chunk;
    }
  }
  std::vector<bool> failed(requests.size(), false);
  size_t next = 0;
  while (next < pieces.size()) {
    if (failed[pieces[next].request]) {
      ++next;
      continue;
    }
    size_t count = 0;
    std::vector<iovec> local, remote;
    while (next + count < pieces.size() && count < IOV_MAX && !failed[pieces[next + count].request]) {
      local.push_back(pieces[next + count].local);
      remote.push_back(pieces[next + count].remote);
      ++count;
    }
    ssize_t got = -1;
    if (use_vm_readv_) {
      got = ::process_vm_readv(pid_, local.data(), count, remote.data(), count, 0);
      if (got < 0 && (errno == ENOSYS || errno == EPERM)) use_vm_readv_ = false;
    }
    if (!use_vm_readv_) {
      got = 0;
      for (size_t i = 0; i < count; ++i) {
        ssize_t one = ::pread(mem_fd_, local[i].iov_base, local[i].iov_len,
                              static_cast<off_t>(reinterpret_cast<uint64_t>(remote[i].iov_base)));
        if (one != static_cast<ssize_t>(local[i].iov_len)) break;
        got += one;
      }
    }
    if (got < 0) {
      if (errno == ESRCH) return make_error(fmt::format("process {} is gone", pid_));
      got = 0;  // EFAULT on the first piece
    }
    size_t left = static_cast<size_t>(got);
    size_t i = 0;
    for (; i < count && left >= pieces[next + i].local.iov_len; ++i) {
      requests[pieces[next + i].request].copied += pieces[next + i].local.iov_len;
      left -= pieces[next + i].local.iov_len;
    }
    if (i < count) {
      failed[pieces[next + i].request] = true;  // its first unreadable page ends that request
      ++i;
    }
    next += i;
  }
  return {};
}

Status Process::write(uint64_t address, std::span<const uint8_t> bytes) {
  if (mem_fd_ >= 0) {
    ssize_t written = ::pwrite(mem_fd_, bytes.data(), bytes.size(), static_cast<off_t>(address));
    if (written == static_cast<ssize_t>(bytes.size())) return {};
  }
  return poke_write(address, bytes);
}

Status Process::write_pieces(std::span<const WritePiece> pieces) {
  // Runs: the pieces (in address order) on the pages a run has reached or the page after
  // (function entries of a whole library make runs of its whole text), up to kLongestRun.
  constexpr uint64_t kLongestRun = uint64_t{1} << 20;
  std::vector<size_t> order(pieces.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return pieces[a].address < pieces[b].address; });
  struct Run {
    uint64_t begin = 0;
    uint64_t end = 0;
    std::vector<size_t> pieces;  // indexes into `pieces`, in address order
    std::vector<uint8_t> bytes;
  };
  std::vector<Run> runs;
  for (size_t index : order) {
    const WritePiece& piece = pieces[index];
    if (piece.bytes.empty()) continue;
    const uint64_t end = piece.address + piece.bytes.size();
    const bool joins = !runs.empty() && piece.address / kPageSize <= (runs.back().end - 1) / kPageSize + 1 &&
                       end - runs.back().begin <= kLongestRun;
    if (!joins) runs.push_back({piece.address, end, {}, {}});
    Run& run = runs.back();
    run.end = std::max(run.end, end);
    run.pieces.push_back(index);
  }
  std::vector<ReadRequest> reads;
  for (Run& run : runs) {
    if (run.pieces.size() < 2) continue;
    run.bytes.resize(run.end - run.begin);
    reads.push_back({run.begin, run.bytes, 0});
  }
  if (!reads.empty()) {
    if (auto read = read_batch(reads); !read) return read;
  }
  Status result;
  size_t next_read = 0;
  for (Run& run : runs) {
    bool whole = false;
    if (run.pieces.size() >= 2) {
      whole = reads[next_read++].copied == run.bytes.size();
      if (whole) {
        std::vector<size_t> in_order = run.pieces;
        std::sort(in_order.begin(), in_order.end());
        for (size_t index : in_order)
          std::copy(pieces[index].bytes.begin(), pieces[index].bytes.end(), run.bytes.begin() + (pieces[index].address - run.begin));
      }
    }
    if (whole) {
      if (auto written = write(run.begin, run.bytes); !written && result) result = written;
      continue;
    }
    // One piece, or the page could not be read whole: each piece by itself.
    std::vector<size_t> in_order = run.pieces;
    std::sort(in_order.begin(), in_order.end());
    for (size_t index : in_order)
      if (auto written = write(pieces[index].address, pieces[index].bytes); !written && result) result = written;
  }
  return result;
}

Status Process::poke_write(uint64_t address, std::span<const uint8_t> bytes) {
  pid_t tid = any_stopped_thread();
  if (tid == 0) return make_error(fmt::format("cannot write at 0x{:x}: no stopped thread in process {}", address, pid_));
  size_t done = 0;
  while (done < bytes.size()) {
    uint64_t at = address + done;
    uint64_t word_address = at & ~uint64_t{7};
    size_t skip = static_cast<size_t>(at - word_address);
    errno = 0;
    long word = ::ptrace(PTRACE_PEEKDATA, tid, reinterpret_cast<void*>(word_address), nullptr);
    if (errno != 0) return make_error(fmt::format("cannot write at 0x{:x}: {}", at, errno_text()));
    size_t chunk = std::min(bytes.size() - done, 8 - skip);
    std::memcpy(reinterpret_cast<uint8_t*>(&word) + skip, bytes.data() + done, chunk);
    if (::ptrace(PTRACE_POKEDATA, tid, reinterpret_cast<void*>(word_address), reinterpret_cast<void*>(word)) != 0) {
      return make_error(fmt::format("cannot write at 0x{:x}: {}", at, errno_text()));
    }
    done += chunk;
  }
  return {};
}

}  // namespace xprobe::target
