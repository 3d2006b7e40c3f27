#include "session/trace_session.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "arch/registry.h"
#include "elf/go_program.h"
#include "probe/filter/agent_filter.h"
#include "probe/filter/trailing_filter.h"
#include "session/control_core.h"
#include "session/control_socket.h"
#include "session/event_buffer.h"
#include "session/event_filters.h"
#include "session/tracefs_mount.h"
#include "session/jump_candidate.h"
#include "support/regular_file.h"
#include "session/live_fetch.h"
#include "session/sdt_semaphores.h"
#include "session/source_expansion.h"
#include "probe/definition_list.h"
#include "probe/definition_parser.h"
#include "probe/definition_text.h"
#include "probe/engine/jump_engine.h"
#include "probe/engine/trap_engine.h"
#include "probe/fetch_program.h"
#include "probe/prefetched_memory.h"
#include "probe/resolve/ifunc_choice.h"
#include "probe/resolve/module_map.h"
#include "probe/resolve/place_resolver.h"
#include "probe/resolve/symbolizer.h"
#include "supervisor/all_threads_stopped.h"
#include "supervisor/supervisor.h"
#include "supervisor/supervisor_group.h"
#include "target/proc_queries.h"
#include "target/process.h"
#include "target/wait.h"
#include "probe/user_stack.h"
#include "trace/aggregation/agent_aggregation.h"
#include "trace/aggregation/hist_trigger.h"
#include "trace/event_fields.h"
#include "trace/event_output.h"
#include "trace/ftrace/event_format.h"
#include "trace/event_record.h"
#include "trace/probe_statistics.h"

namespace xprobe::session {
namespace {

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// A line a second on stderr while planting takes longer than a second (10,000 probes on a
// loaded machine): what is being done and how far it got, so a long attach is not mistaken
// for a hang.
class PlantingProgress {
 public:
  explicit PlantingProgress(std::function<void(std::string)> say) : say_(std::move(say)), start_(monotonic_ns()) {}

  void step(const char* what, size_t done, size_t total) {
    if ((++calls_ & 63) != 0) return;  // the clock every 64 steps
    const uint64_t now = monotonic_ns();
    if (now - start_ < kSecond || now < next_) return;
    next_ = now + kSecond;
    say_(fmt::format("planting: {} {} of {} ({:.1f} s)", what, done, total, static_cast<double>(now - start_) / 1e9));
  }

 private:
  static constexpr uint64_t kSecond = 1000000000;
  std::function<void(std::string)> say_;
  uint64_t start_;
  uint64_t next_ = 0;
  uint64_t calls_ = 0;
};

std::string read_link(const std::string& path) {
  char buffer[4096];
  const ssize_t n = readlink(path.c_str(), buffer, sizeof buffer - 1);
  if (n <= 0) return {};
  return std::string(buffer, static_cast<size_t>(n));
}

struct TracedProcess;

struct PlantedProbe {
  TracedProcess* process = nullptr;  // the one it is planted in
  size_t definition = 0;  // index into TraceSession::definitions_
  uint32_t catalog_id = 0;
  probe::ProbeFetchPlan plan;
  probe::engine::ProbeId engine_id = 0;
  uint64_t address = 0;
  bool is_return = false;
  uint32_t max_active = 0;
  bool jumped = false;  // a jump-optimized probe (else a breakpoint of the trap engine)
  EventFilters::Filter filter;  // null: every hit is an event
  std::vector<size_t> aggregations;  // indices into TraceSession::aggregations_: no event lines then
  std::optional<uint32_t> entry_clock_slot;  // latency: the saved word with the entry's clock
  bool needs_stack = false;        // a hist keys its events on common_stacktrace
  bool at_function_entry = false;  // the probe is a function's first instruction
  // Live control: a disabled breakpoint probe is taken out (trap_in false), a disabled jump
  // is switched off in the agent; a removed probe (or one of an image an exec replaced) is
  // gone for good, its counts stay.
  bool enabled = true;
  bool removed = false;
  bool trap_in = false;
  uint32_t jump_index = 0;  // the jump engine's index
  std::vector<probe::engine::ProbeId> trap_ids;  // every breakpoint it had (their misses add up)
};

// One --hist trigger or summary, for the events of one GROUP/EVENT.
struct Aggregation {
  std::string group_event;
  bool removed = false;  // a live session's `!hist:...`: no longer fed nor printed
  std::optional<trace::HistTable> hist;
  std::optional<trace::Summary> summary;
  bool latency() const { return summary && summary->spec().kind == trace::SummaryKind::Latency; }
};

class TraceSession;

// One traced process of the session (-p may be given several times): what is its own. The
// process, its supervisor and both engines; its address space (the objects it maps, the SDT
// semaphores raised in it, the internal breakpoints that watch its dynamic linker, entry,
// exec and seccomp calls); which definitions still wait for an object it has not loaded.
// Everything else (definitions, enable state, filters, aggregations, output, counts, the
// control surfaces) is the session's, shared by all its processes.
struct TracedProcess final : public supervisor::Participant, public probe::engine::ReturnSiteHost {
  explicit TracedProcess(TraceSession& owner) : session(owner) {}
  ~TracedProcess() override {
    if (supervisor) supervisor->leave(*this);
  }
  TracedProcess(const TracedProcess&) = delete;
  TracedProcess& operator=(const TracedProcess&) = delete;

  // supervisor::Participant: after an exec the definitions are resolved again in the new
  // image; a thread's name and CPU are not asked for again once it is gone.
  void on_exec() override;
  void on_thread_exited(pid_t tid) override;
  // SDT semaphores raised for the probes are taken back when they go, and in forked children
  // that are let go.
  Status remove_patches() override {
    if (process) semaphores.lower_all(*process);
    return {};
  }
  void clean_forked_child(target::Process& child) override { semaphores.lower_all(child); }

  // probe::engine::ReturnSiteHost
  Result<arch::JumpPatchFunction> describe_return_site(uint64_t address) override {
    return return_site_function(address, modules);
  }
  void return_site_not_patched(uint64_t address, const std::string& why) override;
  Status watch_return_site(uint64_t address) override;

  TraceSession& session;
  std::unique_ptr<target::Process> process;
  std::unique_ptr<supervisor::Supervisor> supervisor;
  std::unique_ptr<probe::engine::TrapEngine> engine;
  std::unique_ptr<probe::engine::JumpEngine> jump_engine;
  std::string jump_unusable;  // why the process cannot have jump-optimized probes
  probe::ModuleMap modules;
  std::string main_executable;
  SdtSemaphores semaphores;
  std::vector<size_t> pending;  // indices into TraceSession::definitions_ not planted here yet
  std::optional<probe::engine::ProbeId> rendezvous;
  uint64_t rendezvous_address = 0;
  // The startup objects are relocated (IFUNC choices are in their GOT slots): at once for an
  // attached process, at the program's entry point for one started here or after an exec.
  bool relocated = false;
  std::optional<probe::engine::ProbeId> entry_watch;
  std::set<uint64_t> exec_watches;
  std::set<uint64_t> seccomp_watches;
  bool jumps_demoted = false;
  bool ended = false;  // its tracing is over (it exited, or was detached): nothing is planted in it
};

// The session joins the loop of its processes (supervisor_group.h) for what is done once a
// turn: the live requests, the interval's aggregations.
class TraceSession final : public supervisor::Participant, public LiveSession {
 public:
  TraceSession(const SessionConfig& config, Diagnostics& diagnostics) : options_(config), diagnostics_(diagnostics) {}
  ~TraceSession() override { close_control_surfaces(); }
  int run();

 private:
  friend struct TracedProcess;
  void on_exec(TracedProcess& p);
  void on_thread_exited(pid_t tid);
  void return_site_not_patched(uint64_t address, const std::string& why);
  Status watch_return_site(TracedProcess& p, uint64_t address);
  // The process's tracing is over: its agent's last records read, its probes gone (their counts stay).
  void process_ended(TracedProcess& p, const Result<supervisor::RunResult>& how);
  TracedProcess* first_live_process();
  void drain_jump_engines();
  Status attach_processes();

  bool parse_definitions();
  // The --filter options and the definitions' `if EXPR`, checked against the events they name.
  bool set_filters();
  // Whether the probe's filter lets this event through.
  bool passes_filter(const PlantedProbe& probe, const trace::EventRecord& record);
  // The aggregation options, checked against the events they name.
  bool set_aggregations();
  // Feeds the event to the probe's aggregations; false when it has none (print it then).
  bool aggregate(const PlantedProbe& probe, const trace::EventRecord& record, uint64_t latency_ns);
  std::string format_aggregations() const;
  // A hist trigger on the event is keyed on common_stacktrace.
  bool needs_user_stack(const std::string& group_event) const;
  // The aggregations now: their tables (text formats; `with_clock`: an --interval's, after the
  // time of day), or counters (--format perfetto).
  void write_aggregations(uint64_t now_ns, bool with_clock);
  trace::HistTable::Symbolize hist_symbolizer() const;
  // The probe's aggregations compiled for the jump engine's agent, when it can compute every
  // one of them (trace/aggregation/agent_aggregation.h); none: the tracer aggregates records.
  std::optional<std::vector<probe::AgentAggregationSpec>> agent_aggregations_of(const PlantedProbe& planted) const;
  // The agent's tables read, so the tracer's tables are whole.
  void collect_agent_aggregations() {
    for (auto& p : processes_)
      if (p->jump_engine && !p->ended) p->jump_engine->collect_aggregations();
  }
  // --interval: prints (and with --clear empties) the aggregations when the interval is over.
  void print_interval_if_due();
  void on_idle() override { print_interval_if_due(); }
  unsigned idle_interval_ms() const override {
    // With a control surface the wait wakes for requests; a wake lost in a race waits this long.
    if (live()) return 50;
    return options_.interval_seconds != 0 ? 100 : 0;
  }
  void between_events() override {
    flush_in_time();
    if (live()) control_.serve(*this);
    flush_in_time();
  }
  bool live() const { return control_socket_ || control_mount_; }

  // LiveSession: the control core's requests, on the tracer's thread.
  ControlReply execute(const ControlRequest& request) override;
  ControlReply add_live(const std::string& line);
  ControlReply remove_live(const probe::ProbeDefinition& deletion);
  ControlReply remove_definitions(const std::vector<size_t>& indices);
  ControlReply set_enabled_live(const std::string& target, bool enabled);
  std::string list_live() const;
  std::string profile_live();
  std::string events_live() const;
  // The description of a live event (GRP/EVENT), or null.
  const trace::EventDescription* live_event(const std::string& group_event);
  std::optional<trace::EventDescription> described_;
  ControlReply format_live(const std::string& group_event);
  ControlReply set_filter_live(const std::string& request);
  // The event's trigger file (`hist`: its hist file), and a write to the trigger file.
  ControlReply trigger_live(const std::string& group_event, bool hist);
  ControlReply set_trigger_live(const std::string& request);
  // The agent's share of a jump-optimized probe's work, from its filter and aggregations now.
  void set_agent_work(const PlantedProbe& planted, probe::engine::JumpProbeSpec& jump);
  // The probe's filter or aggregations changed: the agent gets the new ones (jump_engine.h).
  void replant_agent_work(PlantedProbe& planted);
  // The events that exist now (GRP/EVENT), of live definitions and of the probes planted for them.
  std::set<std::string> live_events() const;
  // Switches one planted probe on or off (a breakpoint goes in or out; a jump's flag flips).
  Status switch_probe(PlantedProbe& planted, bool enabled);
  Status unplant_probe(PlantedProbe& planted);
  bool event_starts_enabled(const std::string& group_event, size_t definition);
  bool open_control_surfaces();
  void close_control_surfaces();
  void filter_refused(const std::string& context, const probe::filter::FilterError& error) {
    std::string rendered = error.render();
    if (!rendered.empty() && rendered.back() == '\n') rendered.pop_back();
    this->error(fmt::format("{}: the filter is refused:\n{}", context, rendered));
  }
  bool check_named_binaries();
  bool check_named_binary(const probe::ProbeDefinition& definition);
  void report_unmatched();
  bool open_output();
  bool start_process();
  void rebuild_modules(TracedProcess& p);
  // The main executable's read-only segments, for the agent to read without a system call.
  void publish_readable_ranges(TracedProcess& p);
  // A Go program: both engines follow return probes per goroutine.
  void follow_goroutines_if_go(TracedProcess& p);
  // Resolves, checks and plants the definitions still waiting. At start (strict) any error
  // or refusal stops xprobe before anything is planted; later (dlopen, exec) it is reported
  // and that definition is dropped.
  bool plant_pending(TracedProcess& p, bool strict);
  uint32_t catalog_entry(const TracedProcess& p, size_t definition, trace::EventDescription&& described);
  // Register names, $argN and default types depend on the architecture of the code probed
  // (an i386 program, or one exec'ed by the program): the definitions are parsed again for it.
  bool parse_for_arch(insn::Arch arch);
  bool resolve_relocations(TracedProcess& p, probe::ProbeFetchPlan& plan, const std::string& module_path);
  void watch_dynamic_linker(TracedProcess& p);
  void watch_program_entry(TracedProcess& p);
  enum class IfuncOutcome { Moved, NotYet, Resolver };
  IfuncOutcome move_to_ifunc_choice(TracedProcess& p, const probe::ProbeDefinition& definition, probe::ResolvedPoint& point);
  // An exec replaces the memory the jump engine's ring is in: a breakpoint on the exec calls
  // of the C library drains the ring just before (a raw execve system call is not seen).
  void watch_exec_calls(TracedProcess& p);
  // A program that puts itself under seccomp could forbid the agent's system calls: the
  // calls that install a filter (prctl, syscall(SYS_seccomp)) are watched, and from then on
  // every jump-optimized probe is a breakpoint.
  void watch_seccomp_calls(TracedProcess& p);
  void demote_jumps(TracedProcess& p);
  // An internal breakpoint on each function of these names in every loaded object (once per
  // address), while the jump engine has probes.
  void watch_functions(TracedProcess& p, std::initializer_list<const char*> names, std::set<uint64_t>& watched,
                       const std::function<void(const probe::engine::HitContext&)>& callback);
  probe::engine::ProbeSpec breakpoint_spec(PlantedProbe& planted);
  trace::EventRecord fetch_event(const PlantedProbe& probe, const probe::engine::HitContext& hit,
                                 std::optional<uint64_t> return_address, std::span<const uint64_t> saved_arguments);
  void on_hit(const PlantedProbe& probe, const probe::engine::HitContext& context);
  void on_record(const PlantedProbe& probe, const probe::AgentRecord& record, uint64_t timestamp_ns);
  void on_lost(const PlantedProbe& probe, uint64_t count);
  // Return probes' entries that were not tracked (MAXACTIVE, too deep): hits without events.
  void on_missed(const PlantedProbe& probe, uint64_t count);
  void start_jump_engine(TracedProcess& p);
  // Which of the ready probes become jumps: those jump_candidate() accepts whose patched
  // bytes hold no breakpoint (of another probe, or planted before).
  struct JumpChoice {
    std::optional<probe::engine::JumpProbeSpec> spec;
    std::string why_not;
  };
  void on_return(const PlantedProbe& probe, const probe::engine::ReturnContext& context);
  // A return event from live registers (the trap engine's, or a return site a breakpoint watches).
  void emit_return(const PlantedProbe& probe, const probe::engine::HitContext& at_return, uint64_t function,
                   uint64_t return_address, std::span<const uint64_t> saved);
  std::vector<uint64_t> save_at_entry(const PlantedProbe& probe, const probe::engine::HitContext& context);
  void emit(TracedProcess& p, trace::EventRecord&& record);
  // With several processes each has its own ring, drained in turn: their records wait until
  // the loop's turn is over (or a breakpoint's event is due), then go out in the order of
  // their time, every ring drained first, as the kernel's per-CPU buffers are merged.
  void emit_in_time(TracedProcess& p, trace::EventRecord&& record);
  void flush_in_time();
  // Before a breakpoint's event: the jump-optimized probes' earlier events.
  void earlier_jump_events_first(TracedProcess& p);
  struct TimedEvent {
    TracedProcess* process;
    trace::EventRecord record;
  };
  std::vector<TimedEvent> in_time_;
  std::optional<trace::ThreadProcess> process_of_thread(pid_t tid);
  // The writer's trailer, everything flushed, the counts reported.
  void end_output();
  void fail_before_tracing();
  int wait_for_detached_program();

  // While a live request runs, its errors and warnings go to its reply instead.
  void report(Severity severity, std::string message) {
    if (request_messages_ != nullptr && (severity == Severity::Error || severity == Severity::Warning)) {
      *request_messages_ += message + "\n";
      request_failed_ = request_failed_ || severity == Severity::Error;
      return;
    }
    diagnostics_.report(Diagnostic{severity, std::move(message), {}});
  }
  void error(std::string message) { report(Severity::Error, std::move(message)); }
  void warning(std::string message) { report(Severity::Warning, std::move(message)); }
  void parse_failed(probe::ParseError parse_error, std::string context = {}) {
    if (request_messages_ != nullptr) {
      *request_messages_ += (context.empty() ? "" : context + "\n") + parse_error.render();
      request_failed_ = true;
      return;
    }
    diagnostics_.report(Diagnostic{Severity::Error, std::move(context), std::move(parse_error)});
  }

  const SessionConfig& options_;
  Diagnostics& diagnostics_;
  std::vector<probe::ProbeDefinition> definitions_;
  // By index into definitions_: still defined (a live `-:` takes one away), and whether its
  // events start enabled (the command line's do; a live add's do not, as in tracefs).
  std::vector<bool> defined_;
  std::vector<bool> starts_enabled_;
  std::map<std::string, bool> event_enabled_;  // GRP/EVENT -> enabled
  // A definition's trailing `if EXPR`, by its command (a glob without a name is several events).
  std::map<std::string, std::string> definition_filters_;
  EventFilters filters_;
  std::vector<Aggregation> aggregations_;
  uint64_t next_interval_ns_ = 0;
  pid_t counter_pid_ = 0;             // the process the counters are tracks of
  std::string counter_process_name_;  // its name while it could still be asked
  insn::Arch definitions_arch_ = arch::host_arch();  // what definitions_ were parsed for
  probe::ElfCache elf_cache_;  // before the processes: their module maps point into it
  // In the order of -p (or the one started); never removed before the session ends: the
  // planted probes point to them.
  std::deque<std::unique_ptr<TracedProcess>> processes_;
  TracedProcess* symbolizing_in_ = nullptr;  // the process of the event being written
  std::optional<supervisor::RunResult> first_end_;  // how the first process's tracing ended
  bool process_failed_ = false;  // a process's tracing ended in an error
  uint64_t ring_records_ = 0;    // read from every process's agent ring
  bool ring_used_ = false;
  std::unique_ptr<CommCache> comms_;
  std::unique_ptr<CpuReader> cpus_;
  trace::EventCatalog catalog_;
  trace::ProbeStatistics statistics_;
  std::deque<PlantedProbe> planted_;
  // The planted probes of each definition (pointers into planted_, which only grows): a new
  // probe's catalog entry is looked for among its definition's, not among all 10,000.
  std::unordered_map<size_t, std::vector<const PlantedProbe*>> planted_by_definition_;
  std::unique_ptr<trace::EventOutput> output_;
  std::unique_ptr<trace::EventWriter> writer_;
  std::string line_;
  ControlCore control_;
  std::unique_ptr<EventBuffer> live_events_buffer_;
  std::unique_ptr<ControlSocket> control_socket_;
  std::unique_ptr<TracefsMount> control_mount_;
  std::string* request_messages_ = nullptr;  // a live request's errors, while it runs
  bool request_failed_ = false;
};

// "BINARY:FUNCTION[+0xOFF]", or "BINARY:0xFILE_OFFSET" where no function covers the point.
std::string describe_probe_point(const probe::ResolvedPoint& point) {
  if (point.function.empty()) {
    return fmt::format("{}:{:#x} (in the {})", point.module_path, point.file_offset, point.function_proof);
  }
  const uint64_t into = point.address - point.function_address;
  return fmt::format("{}:{}{}", point.module_path, point.function, into != 0 ? fmt::format("+{:#x}", into) : "");
}

bool TraceSession::parse_definitions() {
  probe::ParseOptions parse_options;
  parse_options.arch = definitions_arch_;
  std::vector<probe::ProbeDefinition> parsed;
  // Source-level lines (perf probe's places, variables, SDT markers) become kernel-syntax
  // definitions first.
  SourceExpansion sources(!options_.pids.empty() ? read_link(fmt::format("/proc/{}/exe", options_.pids.front()))
                                            : program_path(options_.command.empty() ? "" : options_.command.front()));
  auto parse_line = [&](std::string_view whole_line, const std::string& file, size_t line_number) {
    // 20,000 definitions take seconds to parse (under the sanitizers): an interrupt ends it.
    if (target::stop_requested()) return false;
    const probe::filter::DefinitionAndFilter split = probe::filter::split_trailing_filter(whole_line);
    const std::string_view line = split.definition;
    auto expanded = sources.expand(line);
    if (!expanded) {
      error(file.empty() ? expanded.error().message
                         : fmt::format("{}:{}: {}", file, line_number, expanded.error().message));
      return false;
    }
    for (const std::string& text : *expanded) {
      auto result = probe::parse_definition(text, parse_options);
      if (!result) {
        probe::ParseError parse_error = result.error();
        if (!file.empty()) {
          parse_error.line = line_number;
          parse_error.file = file;
        }
        parse_failed(parse_error);
        return false;
      }
      if (!file.empty()) result->line = line_number;
      if (split.filter) definition_filters_[result->command] = *split.filter;
      parsed.push_back(std::move(result.value()));
    }
    return true;
  };
  for (const DefinitionSource& source : options_.definitions) {
    if (source.kind == DefinitionSource::Kind::Text) {
      if (!parse_line(source.value, {}, 0)) return false;
      continue;
    }
    // A bound far above any real definitions file, so a device cannot fill memory.
    auto text = read_regular_text_file(source.value, uint64_t{64} << 20);
    if (!text) {
      error(fmt::format("-f {}", text.error().message));
      return false;
    }
    std::istringstream in(*text);
    // One definition per line; '#' starts a comment anywhere on it (as in uprobe_events).
    size_t line_number = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_number;
      line = line.substr(0, line.find('#'));
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      if (!parse_line(line, source.value, line_number)) return false;
    }
  }
  // In order, as writing each to uprobe_events: a definition for an existing event adds a
  // probe point to it (or is refused as the kernel refuses it), `-:GRP/EVENT [PLACE]` removes.
  probe::DefinitionList list;
  for (auto& definition : parsed) {
    const std::optional<size_t> line = definition.line;
    if (auto refused = list.apply(std::move(definition))) {
      refused->line = line;
      parse_failed(std::move(*refused));
      return false;
    }
  }
  definitions_ = std::move(list).take();
  if (definitions_.empty() && !options_.control_socket && options_.control_mount.empty()) {
    report(Severity::Usage, "no probe definitions (give -e DEF or -f FILE, or --ctl to add them while tracing)");
    return false;
  }
  defined_.assign(definitions_.size(), true);
  starts_enabled_.assign(definitions_.size(), true);
  return check_named_binaries() && set_filters() && set_aggregations();
}

bool TraceSession::set_aggregations() {
  for (const SessionConfig::AggregationOption& option : options_.aggregations) {
    const std::string name = trace::summary_event(option.text);
    const probe::ProbeDefinition* named = nullptr;
    for (const probe::ProbeDefinition& definition : definitions_) {
      if (definition.event.empty()) continue;
      if (name.find('/') == std::string::npos ? definition.event == name : definition.group + "/" + definition.event == name) {
        named = &definition;
        break;
      }
    }
    if (named == nullptr) {
      error(fmt::format("'{}': no event {} is defined (aggregations name an event with an explicit or derived name)",
                        option.text, name));
      return false;
    }
    const trace::EventDescription event = trace::describe_event(*named);
    Aggregation aggregation;
    aggregation.group_event = group_event_of(event);
    const std::string rest = option.text.substr(std::min(option.text.size(), name.size() + 1));
    if (option.kind == trace::SummaryKind::Hist && rest.starts_with("hist:")) {
      auto spec = trace::parse_hist_trigger(rest, event);
      if (!spec) {
        error(fmt::format("--hist {}", spec.error().message));
        return false;
      }
      // As the kernel registers a trigger: one like an existing one is a command to it.
      Aggregation* existing = nullptr;
      for (Aggregation& other : aggregations_)
        if (other.hist && other.group_event == aggregation.group_event && other.hist->spec().same_trigger(*spec)) existing = &other;
      using Command = trace::HistSpec::Command;
      if (existing != nullptr) {
        if (spec->command == Command::None) {
          error(fmt::format("--hist '{}': Hist trigger already exists", rest));
          return false;
        }
        if (spec->command == Command::Clear) existing->hist->clear();
        else existing->hist->set_paused(spec->command == Command::Pause);
        continue;
      }
      if (spec->command == Command::Cont || spec->command == Command::Clear) {
        error(fmt::format("--hist '{}': Can't clear or continue a nonexistent hist trigger", rest));
        return false;
      }
      aggregation.hist.emplace(std::move(*spec), event);
    } else {
      auto spec = trace::parse_summary(option.kind, option.text, event);
      if (!spec) {
        error(spec.error().message);
        return false;
      }
      aggregation.summary.emplace(std::move(*spec));
    }
    aggregations_.push_back(std::move(aggregation));
  }
  return true;
}

bool TraceSession::aggregate(const PlantedProbe& probe, const trace::EventRecord& record, uint64_t latency_ns) {
  if (probe.aggregations.empty()) return false;
  for (size_t index : probe.aggregations) {
    Aggregation& aggregation = aggregations_[index];
    if (aggregation.hist) aggregation.hist->add(record, probe.is_return);
    if (aggregation.summary) aggregation.summary->add(record, probe.is_return, latency_ns);
  }
  print_interval_if_due();
  return true;
}

std::optional<std::vector<probe::AgentAggregationSpec>> TraceSession::agent_aggregations_of(const PlantedProbe& planted) const {
  if (planted.aggregations.empty() || planted.aggregations.size() > agent::kMaxAggregations) return std::nullopt;
  std::vector<probe::AgentAggregationSpec> out;
  const trace::EventDescription& event = catalog_[planted.catalog_id];
  for (size_t index : planted.aggregations) {
    const Aggregation& aggregation = aggregations_[index];
    std::optional<probe::AgentAggregationSpec> compiled;
    if (aggregation.hist) compiled = trace::agent_aggregation_of(aggregation.hist->spec(), event, planted.plan, planted.address);
    if (aggregation.summary)
      compiled = trace::agent_aggregation_of(aggregation.summary->spec(), planted.plan, planted.address,
                                             planted.entry_clock_slot);
    if (!compiled) return std::nullopt;
    out.push_back(std::move(*compiled));
  }
  return out;
}

bool TraceSession::needs_user_stack(const std::string& group_event) const {
  for (const Aggregation& aggregation : aggregations_)
    if (!aggregation.removed && aggregation.hist && aggregation.group_event == group_event && aggregation.hist->needs_stack())
      return true;
  return false;
}

trace::HistTable::Symbolize TraceSession::hist_symbolizer() const {
  // Of the first process still traced: a table's addresses are not told apart by process.
  const TracedProcess* in = nullptr;
  for (const auto& p : processes_)
    if (in == nullptr || (in->ended && !p->ended)) in = p.get();
  static const probe::ModuleMap none;
  // The symbolizer keeps a reference to the map: the process's own, which lives as long as the session.
  const probe::ModuleMap& modules = in != nullptr ? in->modules : none;
  return [symbolizer = std::make_shared<probe::Symbolizer>(modules)](uint64_t address, bool with_offset) {
    // The bare address where no symbol covers it; the kernel's sprint_symbol_no_offset(): the name alone.
    std::string text = symbolizer->symbolize(address).value_or(fmt::format("{:#x}", address));
    if (!with_offset) text = text.substr(0, text.find('+'));
    return text;
  };
}

void TraceSession::write_aggregations(uint64_t now_ns, bool with_clock) {
  if (options_.format->text_lines) {
    std::string text = format_aggregations();
    if (with_clock) {
      time_t wall = time(nullptr);
      tm local{};
      localtime_r(&wall, &local);
      char clock[16];
      strftime(clock, sizeof clock, "%H:%M:%S", &local);
      text = fmt::format("{}\n{}\n", clock, text);
    }
    output_->write_text(text);
    return;
  }
  // Counter tracks of the traced process (its first pid: an exec keeps it).
  std::vector<trace::CounterSample> samples;
  const trace::HistTable::Symbolize symbolize = hist_symbolizer();
  for (const Aggregation& aggregation : aggregations_) {
    if (aggregation.removed) continue;
    if (aggregation.hist) {
      auto taken = aggregation.hist->counters(aggregation.group_event, symbolize);
      samples.insert(samples.end(), taken.begin(), taken.end());
    }
    if (aggregation.summary) {
      auto taken = aggregation.summary->counters();
      samples.insert(samples.end(), taken.begin(), taken.end());
    }
  }
  trace::ThreadProcess process{counter_pid_, {}};
  if (auto known = process_of_thread(counter_pid_)) process.name = known->name;
  if (process.name.empty()) process.name = counter_process_name_;
  counter_process_name_ = process.name;
  std::string out;
  writer_->write_counters(now_ns, process, samples, out);
  if (!out.empty()) output_->write_text(out);
}

std::string TraceSession::format_aggregations() const {
  std::string out;
  const trace::HistTable::Symbolize symbolize = hist_symbolizer();
  for (size_t i = 0; i < aggregations_.size(); ++i) {
    const Aggregation& aggregation = aggregations_[i];
    if (aggregation.removed) continue;
    if (i > 0 && !out.empty() && !out.ends_with("\n\n")) out += "\n";
    if (aggregation.hist) out += aggregation.hist->format(symbolize);
    if (aggregation.summary) {
      if (aggregation.latency()) out += fmt::format("Function latency of {}:\n", aggregation.group_event);
      out += aggregation.summary->format();
    }
  }
  return out;
}

void TraceSession::print_interval_if_due() {
  if (options_.interval_seconds == 0 || aggregations_.empty() || !output_) return;
  const uint64_t now = monotonic_ns();
  if (next_interval_ns_ == 0) next_interval_ns_ = now + uint64_t{options_.interval_seconds} * 1000000000ull;
  if (now < next_interval_ns_) return;
  next_interval_ns_ = now + uint64_t{options_.interval_seconds} * 1000000000ull;
  drain_jump_engines();
  collect_agent_aggregations();
  write_aggregations(now, true);
  output_->flush();
  if (!options_.clear_each_interval) return;
  for (Aggregation& aggregation : aggregations_) {
    if (aggregation.hist) aggregation.hist->clear();
    if (aggregation.summary) aggregation.summary->clear();
  }
}

bool TraceSession::set_filters() {
  // A definition's own `if` first, then --filter in order: the last one given wins.
  for (const probe::ProbeDefinition& definition : definitions_) {
    auto text = definition_filters_.find(definition.command);
    if (text == definition_filters_.end() || definition.event.empty()) continue;
    const trace::EventDescription event = trace::describe_event(definition);
    if (auto refused = filters_.set(event, text->second)) {
      filter_refused(fmt::format("'{}'", definition.command), *refused);
      return false;
    }
  }
  for (const std::string& option : options_.filters) {
    const size_t colon = option.find(':');
    if (colon == std::string::npos || colon == 0) {
      report(Severity::Usage, fmt::format("--filter '{}': give GRP/EVENT:EXPR", option));
      return false;
    }
    const std::string name = option.substr(0, colon), text = option.substr(colon + 1);
    bool found = false, unnamed_globs = false;
    for (const probe::ProbeDefinition& definition : definitions_) {
      unnamed_globs = unnamed_globs || definition.event.empty();
      if (definition.event.empty()) continue;
      const bool named = name.find('/') == std::string::npos ? definition.event == name
                                                              : definition.group + "/" + definition.event == name;
      if (!named) continue;
      found = true;
      if (auto refused = filters_.set(trace::describe_event(definition), text)) {
        filter_refused(fmt::format("--filter '{}'", option), *refused);
        return false;
      }
    }
    if (found) continue;
    if (!unnamed_globs || name.find('/') == std::string::npos) {
      error(fmt::format("--filter '{}': no event {} is defined", option, name));
      return false;
    }
    filters_.set_text(name, text);  // an event a glob makes: checked when it is planted
  }
  filters_.on_change([this](const std::string& group_event) {
    for (PlantedProbe& planted : planted_) {
      const trace::EventDescription& event = catalog_[planted.catalog_id];
      if (planted.removed || group_event_of(event) != group_event) continue;
      planted.filter = filters_.filter_for(event);
      // The agent gets the new filter too (or none): its copy of the old one must not turn
      // away what the new one lets through.
      replant_agent_work(planted);
    }
  });
  return true;
}

bool TraceSession::passes_filter(const PlantedProbe& probe, const trace::EventRecord& record) {
  if (!probe.filter || probe.filter->matches(trace::inputs_of(record, probe.is_return))) return true;
  statistics_.counters(probe.catalog_id).filter();
  return false;
}

// A BINARY given as a path must exist and be an object of the traced architecture: said now,
// before anything starts. (A bare file name may still be loaded later by dlopen.)
bool TraceSession::check_named_binaries() {
  for (const probe::ProbeDefinition& definition : definitions_)
    if (!check_named_binary(definition)) return false;
  return true;
}

bool TraceSession::check_named_binary(const probe::ProbeDefinition& definition) {
  const std::string& binary = definition.place.binary;
  if (binary.find('/') == std::string::npos) return true;
  auto file = elf_cache_.open(binary);
  if (!file) {
    error(fmt::format("'{}': {}", definition.command, file.error().message));
    return false;
  }
  if (auto traceable = arch::probe_arch((*file)->arch()); !traceable) {
    error(fmt::format("'{}': {} is an {} object; {}", definition.command, binary, insn::arch_name((*file)->arch()),
                      traceable.error().message));
    return false;
  }
  return true;
}

std::optional<trace::ThreadProcess> TraceSession::process_of_thread(pid_t tid) {
  // A thread gone before its event was written (jump-probe records are read later) belonged,
  // as far as anyone can tell now, to the traced process whose event is being written.
  const std::optional<pid_t> pid = target::thread_group_of(tid);
  const TracedProcess* in = symbolizing_in_ != nullptr ? symbolizing_in_ : (processes_.empty() ? nullptr : processes_.front().get());
  if (!pid && in == nullptr) return std::nullopt;
  const pid_t process = pid ? *pid : in->process->pid();
  return trace::ThreadProcess{process, comms_ ? comms_->comm(process) : std::string()};
}

// A definition that went in nowhere: every process still waited for its object.
void TraceSession::report_unmatched() {
  std::set<size_t> waiting;
  for (const auto& p : processes_) waiting.insert(p->pending.begin(), p->pending.end());
  for (const PlantedProbe& planted : planted_) waiting.erase(planted.definition);
  for (size_t index : waiting)
    if (defined_[index])
    warning(fmt::format("'{}': no object named '{}' was loaded while tracing: the probe never went in",
                        definitions_[index].command, definitions_[index].place.binary));
}

bool TraceSession::open_output() {
  int fd = STDOUT_FILENO;
  bool owns = false;
  if (!aggregations_.empty() && !options_.format->text_lines && !options_.format->counters) {
    report(Severity::Usage, fmt::format("--format {}: the aggregations (--hist, --count, --latency, ...) are text tables "
                                        "(--format ftrace or json) or counter tracks (--format perfetto); this format "
                                        "holds neither",
                                        options_.format->name));
    return false;
  }
  if (options_.format->prepare_directory) {
    if (options_.output_path.empty()) {
      report(Severity::Usage, fmt::format("--format {} writes a trace directory: name it with -o DIR", options_.format->name));
      return false;
    }
    if (Status ready = options_.format->prepare_directory(options_.output_path); !ready) {
      error(ready.error().message);
      return false;
    }
    fd = -1;
  } else if (!options_.output_path.empty()) {
    fd = ::open(options_.output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      error(fmt::format("-o {}: cannot open: {}", options_.output_path, std::strerror(errno)));
      return false;
    }
    owns = true;
  }
  const bool terminal = fd == STDOUT_FILENO && isatty(STDOUT_FILENO) != 0;
  output_ = std::make_unique<trace::EventOutput>(fd, owns, terminal, statistics_);
  trace::FormatContext context{catalog_, [this](uint64_t address) -> std::optional<std::string> {
                                 // In the process of the event being written (or the first one).
                                 const TracedProcess* in = symbolizing_in_ != nullptr ? symbolizing_in_ : first_live_process();
                                 if (in == nullptr) return std::nullopt;
                                 return probe::Symbolizer(in->modules).symbolize(address);
                               },
                               options_.irq_info, static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN)),
                               [this](int32_t tid) { return process_of_thread(tid); },
                               options_.format->prepare_directory ? options_.output_path : std::string()};
  writer_ = options_.format->make(context);
  return true;
}

bool TraceSession::start_process() {
  comms_ = std::make_unique<CommCache>();
  cpus_ = std::make_unique<CpuReader>();
  std::set<pid_t> seen;
  for (pid_t pid : options_.pids) {
    if (!seen.insert(pid).second) continue;  // -p 12 -p 12: one process
    auto attached = target::Process::attach(pid);
    if (!attached) {
      error(fmt::format("cannot attach to process {}: {}", pid, attached.error().message));
      // The processes attached before it run on as they were: nothing is planted yet.
      for (auto& other : processes_) static_cast<void>(other->process->detach());
      processes_.clear();
      return false;
    }
    processes_.push_back(std::make_unique<TracedProcess>(*this));
    processes_.back()->process = std::move(attached.value());
  }
  if (options_.pids.empty()) {
    auto launched = target::Process::launch(options_.command);
    if (!launched) {
      error(fmt::format("cannot start '{}': {}", options_.command.front(), launched.error().message));
      return false;
    }
    processes_.push_back(std::make_unique<TracedProcess>(*this));
    processes_.back()->process = std::move(launched.value());
  }
  for (auto& p : processes_) p->main_executable = read_link(fmt::format("/proc/{}/exe", p->process->pid()));
  counter_pid_ = processes_.front()->process->pid();
  return true;
}

TracedProcess* TraceSession::first_live_process() {
  for (auto& p : processes_)
    if (!p->ended) return p.get();
  return processes_.empty() ? nullptr : processes_.front().get();
}

void TraceSession::drain_jump_engines() {
  for (auto& p : processes_)
    if (p->jump_engine && !p->ended) p->jump_engine->drain();
}

void TraceSession::process_ended(TracedProcess& p, const Result<supervisor::RunResult>& how) {
  if (p.ended) return;
  p.ended = true;
  if (p.jump_engine) {
    p.jump_engine->finish();
    if (p.jump_engine->probe_count() != 0 || p.jump_engine->records_read() != 0) {
      ring_records_ += p.jump_engine->records_read();
      ring_used_ = true;
    }
  }
  // Return probes on breakpoints: entries the trap engine could not track (MAXACTIVE), and
  // frames it gave up without a return.
  for (PlantedProbe& planted : planted_) {
    if (planted.process != &p) continue;
    if (!planted.jumped && planted.is_return && p.engine) {
      for (probe::engine::ProbeId id : planted.trap_ids) {
        on_missed(planted, p.engine->stats(id).misses);
        statistics_.counters(planted.catalog_id).add_unwound(p.engine->stats(id).discarded);
      }
    }
    planted.removed = true;  // its counts stay
    planted.trap_in = false;
  }
  const bool several = processes_.size() > 1;
  if (!how) {
    process_failed_ = true;
    error(several ? fmt::format("process {}: {}", p.process->pid(), how.error().message) : how.error().message);
  } else if (several) {
    switch (how->end) {
      case supervisor::RunEnd::Exited:
        report(Severity::Note, fmt::format("process {} exited with status {}", p.process->pid(), how->exit_status));
        break;
      case supervisor::RunEnd::Killed:
        report(Severity::Note, fmt::format("process {} was killed by signal {}", p.process->pid(), how->signal));
        break;
      case supervisor::RunEnd::Detached: break;
    }
  }
  if (&p == processes_.front().get()) first_end_ = how ? std::optional<supervisor::RunResult>(*how) : std::nullopt;
}

void TraceSession::rebuild_modules(TracedProcess& p) {
  auto maps = p.process->maps();
  if (!maps) return;
  p.modules = probe::ModuleMap::from_maps(*maps, elf_cache_, p.main_executable,
                                         fmt::format("/proc/{}/root", p.process->pid()));
}

void TraceSession::follow_goroutines_if_go(TracedProcess& p) {
  const probe::LoadedModule* main = p.modules.main_executable();
  const bool go = main != nullptr && main->elf && elf::is_go_program(*main->elf);
  if (p.engine) p.engine->set_goroutine_frames(go);
  if (p.jump_engine) p.jump_engine->set_goroutine_frames(go);
}

void TraceSession::publish_readable_ranges(TracedProcess& p) {
  if (!p.jump_engine) return;
  auto maps = p.process->maps();
  if (!maps) return;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const target::MapEntry& entry : *maps) {
    if (entry.path != p.main_executable || !entry.readable || entry.writable || entry.shared) continue;
    if (!ranges.empty() && ranges.back().second == entry.start) ranges.back().second = entry.end;
    else ranges.emplace_back(entry.start, entry.end);
  }
  p.jump_engine->set_readable_ranges(std::move(ranges));
}

bool TraceSession::resolve_relocations(TracedProcess& p, probe::ProbeFetchPlan& plan, const std::string& module_path) {
  auto resolve = [&](probe::FetchProgram& program) {
    for (probe::Relocation& relocation : program.relocations) {
      if (relocation.kind == probe::Relocation::Kind::Symbol) {
        auto address = probe::resolve_data_symbol(relocation.symbol, 0, p.modules, module_path);
        if (!address) {
          error(fmt::format("argument {}: {}", program.name, address.error().message));
          return false;
        }
        relocation.address = *address;
      } else {
        const probe::LoadedModule* module = p.modules.find(module_path);
        auto link = module ? module->elf->file_offset_to_address(relocation.file_offset) : std::nullopt;
        if (!link) {
          error(fmt::format("argument {}: file offset {:#x} is not loaded from {}", program.name,
                            relocation.file_offset, module_path));
          return false;
        }
        relocation.address = *link + module->bias;
      }
    }
    return true;
  };
  for (auto& program : plan.arguments)
    if (!resolve(program)) return false;
  for (auto& [index, program] : plan.entry_captures)
    if (!resolve(program)) return false;
  return true;
}

bool TraceSession::parse_for_arch(insn::Arch arch) {
  if (arch == definitions_arch_) return true;
  if (processes_.size() > 1) {
    // The definitions are parsed once for the session: for one architecture.
    error(fmt::format("a process runs {} code, the session's definitions are for {}: one session traces processes "
                      "of one architecture",
                      insn::arch_name(arch), insn::arch_name(definitions_arch_)));
    return false;
  }
  probe::ParseOptions parse_options;
  parse_options.arch = arch;
  std::vector<probe::ProbeDefinition> reparsed;
  for (const probe::ProbeDefinition& definition : definitions_) {
    auto result = probe::parse_definition(definition.command, parse_options);
    if (!result) {
      parse_failed(result.error(), fmt::format("the process runs {} code:", insn::arch_name(arch)));
      return false;
    }
    reparsed.push_back(std::move(result.value()));
  }
  definitions_ = std::move(reparsed);
  definitions_arch_ = arch;
  return true;
}

// The same probe point of the same definition in several processes is one event with one
// line of counts (the kernel's uprobe_profile has one per probe, whatever maps the file): a
// probe planted in another process gives its entry; one the process had before (an image
// an exec replaced) does not.
uint32_t TraceSession::catalog_entry(const TracedProcess& p, size_t definition, trace::EventDescription&& described) {
  std::optional<std::set<uint32_t>> own;  // the entries p's probes have: only when another process's might do
  if (auto same = planted_by_definition_.find(definition); same != planted_by_definition_.end()) {
    for (const PlantedProbe* planted : same->second) {
      if (planted->process == &p) continue;
      const trace::EventDescription& known = catalog_[planted->catalog_id];
      if (known.probe_point != described.probe_point || group_event_of(known) != group_event_of(described)) continue;
      if (!own) {
        own.emplace();
        for (const PlantedProbe& mine : planted_)
          if (mine.process == &p) own->insert(mine.catalog_id);
      }
      if (!own->contains(planted->catalog_id)) return planted->catalog_id;
    }
  }
  const auto catalog_id = static_cast<uint32_t>(catalog_.size());
  catalog_.push_back(std::move(described));
  (void)statistics_.counters(catalog_id);
  return catalog_id;
}

bool TraceSession::plant_pending(TracedProcess& p, bool strict) {
  if (!parse_for_arch(p.engine->arch())) {
    p.pending.clear();
    return false;
  }
  struct Ready {
    size_t definition;
    probe::ResolvedPoint point;
    probe::ProbeFetchPlan plan;
  };
  std::vector<Ready> ready;
  std::vector<size_t> still_pending;
  bool failed = false;
  const insn::Arch arch = p.engine->arch();  // of the code the process runs now
  PlantingProgress progress([this](std::string line) { report(Severity::Note, std::move(line)); });
  size_t resolved = 0;
  // A SIGINT/SIGTERM ends the planting between two definitions or probes (20,000 probes take
  // seconds): what is in is removed by the detach that follows, what is not stays out. The
  // caller goes on to the event loop, which sees the request at its first wait.
  auto interrupted = [&](const char* what, size_t done, size_t total) {
    if (!target::stop_requested()) return false;
    report(Severity::Note, fmt::format("planting interrupted: {} {} of {}", what, done, total));
    return true;
  };
  for (size_t index : p.pending) {
    if (interrupted("resolved definitions", resolved, p.pending.size())) return true;
    progress.step("resolved definitions", resolved++, p.pending.size());
    const probe::ProbeDefinition& definition = definitions_[index];
    auto resolution = probe::resolve_place(definition, p.modules);
    if (!resolution) {
      error(resolution.error().message);
      failed = true;
      continue;
    }
    if (resolution->waiting_for_module) {
      still_pending.push_back(index);
      continue;
    }
    // An IFUNC is probed at the implementation the dynamic linker chose; until the process
    // has one, the whole definition waits (a glob's points go in together).
    bool waits_for_relocation = false;
    for (probe::ResolvedPoint& point : resolution->points) {
      if (point.ifunc && move_to_ifunc_choice(p, definition, point) == IfuncOutcome::NotYet) waits_for_relocation = true;
    }
    if (waits_for_relocation) {
      still_pending.push_back(index);
      continue;
    }
    for (probe::ResolvedPoint& point : resolution->points) {
      if (!point.check.accepted()) {
        error(fmt::format("{}: {}", definition.command, point.check.message()));
        failed = true;
        continue;
      }
      probe::ProbeFetchPlan plan = probe::compile_fetch_plan(definition, arch);
      if (!resolve_relocations(p, plan, point.module_path)) {
        failed = true;
        continue;
      }
      ready.push_back({index, std::move(point), std::move(plan)});
    }
  }
  if (failed && strict) return false;
  p.pending = std::move(still_pending);

  std::vector<JumpChoice> jumps(ready.size());
  std::vector<uint64_t> trap_addresses;
  for (size_t i = 0; i < ready.size(); ++i) {
    if (interrupted("probe points checked for a jump", i, ready.size())) return true;
    progress.step("probe points checked for a jump", i, ready.size());
    JumpChoice& choice = jumps[i];
    if (!p.jump_engine || p.jumps_demoted || !arch::jump_arch(arch)) {
      choice.why_not = !arch::jump_arch(arch) ? fmt::format("the process is {}", insn::arch_name(arch)) : p.jump_unusable;
    } else if (needs_user_stack(group_event_of(trace::describe_event(definitions_[ready[i].definition])))) {
      // The agent would walk the frame pointers with a process_vm_readv per frame, inside the
      // program and in its time; the tracer does it at the breakpoint's stop.
      choice.why_not = "a hist is keyed on common_stacktrace: the agent does not walk stacks (a breakpoint does)";
    } else {
      auto spec = jump_candidate(definitions_[ready[i].definition], ready[i].point, ready[i].plan, p.modules);
      if (!spec) {
        choice.why_not = spec.error().message;
      } else if (auto plan = p.jump_engine->plan(*spec); !plan) {
        choice.why_not = plan.error().message;
      } else {
        spec->patch = std::move(*plan);
        choice.spec = std::move(*spec);
      }
    }
    if (!choice.spec) trap_addresses.push_back(ready[i].point.address);
  }
  // A breakpoint inside a jump's bytes would break both: such probes stay breakpoints.
  std::sort(trap_addresses.begin(), trap_addresses.end());
  for (JumpChoice& choice : jumps) {
    if (!choice.spec) continue;
    const uint64_t begin = choice.spec->patch->address, end = begin + choice.spec->patch->length;
    bool clash = p.supervisor->patches().claimed_by_other(*p.jump_engine, begin, end);
    const auto first_at_or_after = std::lower_bound(trap_addresses.begin(), trap_addresses.end(), begin);
    clash = clash || (first_at_or_after != trap_addresses.end() && *first_at_or_after < end);
    if (clash) {
      choice.spec.reset();
      choice.why_not = "a breakpoint probe shares its bytes";
    }
  }
  if (options_.engine == EngineChoice::Jump) {
    bool refused = false;
    for (size_t i = 0; i < ready.size(); ++i) {
      if (jumps[i].spec) continue;
      error(fmt::format("{}: cannot be jump-optimized: {}", definitions_[ready[i].definition].command, jumps[i].why_not));
      refused = true;
    }
    if (refused && strict) return false;
  }

  for (size_t i = 0; i < ready.size(); ++i) {
    if (interrupted("probes in", i, ready.size())) return true;
    progress.step("probes in", i, ready.size());
    Ready& item = ready[i];
    probe::ProbeDefinition definition = definitions_[item.definition];
    definition.event = item.point.event;
    trace::EventDescription described = trace::describe_event(definition, item.point.module_path);
    described.probe_point = describe_probe_point(item.point);
    const uint32_t catalog_id = catalog_entry(p, item.definition, std::move(described));
    if (definition.place.ref_ctr_offset) {
      // The marker's semaphore (uprobe_events' REF_CTR_OFFSET, a file offset of the object).
      const probe::LoadedModule* module = p.modules.find(item.point.module_path);
      const auto link = module ? module->elf->file_offset_to_address(*definition.place.ref_ctr_offset) : std::nullopt;
      Status raised = link ? p.semaphores.raise(*p.process, *link + module->bias)
                           : Status(make_error(fmt::format("file offset {:#x} is not loaded from {}",
                                                           *definition.place.ref_ctr_offset, item.point.module_path)));
      if (!raised) {
        error(fmt::format("{}: its semaphore: {}", definition.command, raised.error().message));
        if (strict) return false;
        continue;
      }
    }
    if (auto text = definition_filters_.find(definition.command); text != definition_filters_.end())
      if (filters_.file_text(group_event_of(catalog_[catalog_id])) == "none") filters_.set_text(group_event_of(catalog_[catalog_id]), text->second);
    std::optional<probe::filter::FilterError> refused_filter;
    EventFilters::Filter filter = filters_.filter_for(catalog_[catalog_id], &refused_filter);
    if (refused_filter) {
      filter_refused(fmt::format("event {}", group_event_of(catalog_[catalog_id])), *refused_filter);
      if (strict) return false;
      continue;
    }
    PlantedProbe& planted = planted_.emplace_back();
    planted.process = &p;
    planted.definition = item.definition;
    planted_by_definition_[item.definition].push_back(&planted);
    planted.enabled = event_starts_enabled(group_event_of(catalog_[catalog_id]), item.definition);
    planted.filter = std::move(filter);
    bool latency = false;
    for (size_t a = 0; a < aggregations_.size(); ++a) {
      if (aggregations_[a].removed || aggregations_[a].group_event != group_event_of(catalog_[catalog_id])) continue;
      planted.aggregations.push_back(a);
      latency = latency || aggregations_[a].latency();
    }
    if (latency) {
      unsigned highest = 0;
      for (const auto& [number, program] : item.plan.entry_captures) highest = std::max(highest, number);
      planted.entry_clock_slot = highest;
    }
    planted.catalog_id = catalog_id;
    planted.plan = std::move(item.plan);
    planted.address = item.point.address;
    planted.is_return = definition.kind == probe::ProbeKind::Return;
    planted.max_active = definition.maxactive.value_or(0);
    planted.needs_stack = needs_user_stack(group_event_of(catalog_[catalog_id]));
    planted.at_function_entry = item.point.function_address != 0 && item.point.address == item.point.function_address;

    if (jumps[i].spec && planted.entry_clock_slot) {
      auto slot = probe::add_entry_clock(jumps[i].spec->capture);
      if (!slot || *slot != *planted.entry_clock_slot) jumps[i].spec.reset();  // a breakpoint measures it
    }
    if (jumps[i].spec) {
      probe::engine::JumpProbeSpec jump = std::move(*jumps[i].spec);
      jump.on_record = [this, &planted](const probe::AgentRecord& r, uint64_t ns) { on_record(planted, r, ns); };
      jump.on_lost = [this, &planted](uint64_t count) { on_lost(planted, count); };
      jump.on_missed = [this, &planted](uint64_t count) { on_missed(planted, count); };
      jump.on_unwound = [this, &planted](uint64_t count) { statistics_.counters(planted.catalog_id).add_unwound(count); };
      // Also without a filter: a live session may give it one later.
      jump.on_filtered = [this, &planted](uint64_t count) { statistics_.counters(planted.catalog_id).add_filtered_hits(count); };
      set_agent_work(planted, jump);
      jump.on_trapped_return = [this, &planted](const probe::engine::HitContext& c, uint64_t return_address,
                                                std::span<const uint64_t> saved) {
        emit_return(planted, c, planted.address, return_address, saved);
      };
      jump.disabled = !planted.enabled;
      auto added = p.jump_engine->add_probe(std::move(jump));
      if (added) {
        planted.jumped = true;
        planted.jump_index = *added;
        continue;
      }
      if (options_.engine == EngineChoice::Jump) {
        error(fmt::format("{}: cannot be jump-optimized: {}", definition.command, added.error().message));
        if (strict) return false;
        continue;
      }
    }
    if (!planted.enabled) continue;  // a disabled breakpoint probe is not in the code
    auto id = p.engine->add_probe(breakpoint_spec(planted));
    if (!id) {
      error(fmt::format("{}: {}", definition.command, id.error().message));
      planted.removed = true;
      if (strict) return false;
      continue;
    }
    planted.engine_id = *id;
    planted.trap_ids.push_back(*id);
    planted.trap_in = true;
  }
  return true;
}


// ---- The live session: the control core's requests (control_core.h), on the tracer's thread.

bool TraceSession::event_starts_enabled(const std::string& group_event, size_t definition) {
  auto known = event_enabled_.find(group_event);
  if (known != event_enabled_.end()) return known->second;
  const bool enabled = definition < starts_enabled_.size() && starts_enabled_[definition];
  event_enabled_[group_event] = enabled;
  return enabled;
}

std::set<std::string> TraceSession::live_events() const {
  std::set<std::string> events;
  for (size_t i = 0; i < definitions_.size(); ++i)
    if (defined_[i] && !definitions_[i].event.empty()) events.insert(definitions_[i].group + "/" + definitions_[i].event);
  for (const PlantedProbe& planted : planted_)
    if (!planted.removed) events.insert(group_event_of(catalog_[planted.catalog_id]));
  return events;
}

Status TraceSession::switch_probe(PlantedProbe& planted, bool enabled) {
  TracedProcess& p = *planted.process;
  if (planted.removed || planted.enabled == enabled) return {};
  planted.enabled = enabled;
  if (planted.jumped) {
    p.jump_engine->set_enabled(planted.jump_index, enabled);
    return {};
  }
  if (!enabled) {
    if (!planted.trap_in) return {};
    planted.trap_in = false;
    return p.engine->remove_probe(planted.engine_id);
  }
  auto id = p.engine->add_probe(breakpoint_spec(planted));
  if (!id) {
    planted.enabled = false;
    return id.error();
  }
  planted.engine_id = *id;
  planted.trap_ids.push_back(*id);
  planted.trap_in = true;
  return {};
}

Status TraceSession::unplant_probe(PlantedProbe& planted) {
  TracedProcess& p = *planted.process;
  if (planted.removed) return {};
  Status done;
  if (planted.jumped) done = p.jump_engine->remove_probe(planted.jump_index);
  else if (planted.trap_in) done = p.engine->remove_probe(planted.engine_id);
  planted.trap_in = false;
  planted.enabled = false;
  planted.removed = true;
  return done;
}

ControlReply TraceSession::execute(const ControlRequest& request) {
  using Verb = ControlRequest::Verb;
  switch (request.verb) {
    case Verb::Add: return add_live(request.text);
    case Verb::Clear: {
      std::vector<size_t> all;
      for (size_t i = 0; i < definitions_.size(); ++i)
        if (defined_[i]) all.push_back(i);
      return remove_definitions(all);
    }
    case Verb::Enable: return set_enabled_live(request.text, true);
    case Verb::Disable: return set_enabled_live(request.text, false);
    case Verb::List: return ControlReply{0, list_live(), {}};
    case Verb::Stats: return ControlReply{0, profile_live(), {}};
    case Verb::Events: return ControlReply{0, events_live(), {}};
    case Verb::Info: {
      // A pair of lines for each process still traced, in the order of -p.
      std::string out;
      for (const auto& p : processes_)
        if (!p->ended) out += fmt::format("pid {}\ncommand {}\n", p->process->pid(), p->main_executable);
      return ControlReply{0, out, {}};
    }
    case Verb::Format: return format_live(request.text);
    case Verb::Filter:
      if (live_event(request.text) == nullptr) return ControlReply{ENOENT, fmt::format("no event {}\n", request.text), {}};
      return ControlReply{0, filters_.file_text(request.text) + "\n", {}};
    case Verb::SetFilter: return set_filter_live(request.text);
    case Verb::Trigger: return trigger_live(request.text, false);
    case Verb::Hist: return trigger_live(request.text, true);
    case Verb::SetTrigger: return set_trigger_live(request.text);
    case Verb::Drain:
      drain_jump_engines();
      flush_in_time();
      return ControlReply{};
  }
  return ControlReply{EINVAL, "unknown request\n", {}};
}

ControlReply TraceSession::add_live(const std::string& line) {
  const probe::filter::DefinitionAndFilter split = probe::filter::split_trailing_filter(line);
  // A source-level line (perf probe's places and variables, an SDT marker: as -e takes them)
  // becomes the kernel-syntax definitions it stands for, each added as if written so; all of
  // them go in, or none.
  if (!split.definition.starts_with("-")) {
    const TracedProcess* first = first_live_process();  // its executable is the one a bare name means
    SourceExpansion sources(first != nullptr ? first->main_executable : std::string());
    auto expanded = sources.expand(split.definition);
    if (!expanded) return ControlReply{EINVAL, expanded.error().message + "\n", {}};
    if (expanded->size() != 1 || (*expanded)[0] != split.definition) {
      const size_t before = definitions_.size();
      ControlReply all;
      for (const std::string& text : *expanded) {
        ControlReply one = add_live(split.filter ? text + " if " + *split.filter : text);
        all.text += one.text;
        if (one.error == 0) continue;
        std::vector<size_t> added;
        for (size_t i = before; i < definitions_.size(); ++i)
          if (defined_[i]) added.push_back(i);
        static_cast<void>(remove_definitions(added));
        return ControlReply{one.error, fmt::format("'{}' is {}:\n{}", split.definition, text, all.text), one.error_log};
      }
      return all;
    }
  }
  probe::ParseOptions parse_options;
  parse_options.arch = definitions_arch_;
  auto parsed = probe::parse_definition(split.definition, parse_options);
  auto refused = [&](int error, const probe::ParseError& parse_error) {
    return ControlReply{error, parse_error.render(), parse_error.render_kernel_style(static_cast<double>(monotonic_ns()) / 1e9)};
  };
  if (!parsed) return refused(EINVAL, parsed.error());
  if (parsed->kind == probe::ProbeKind::Delete) return remove_live(parsed.value());
  // The kernel's rules against the live definitions (a probe point more for an event, or a refusal).
  probe::DefinitionList list;
  for (size_t i = 0; i < definitions_.size(); ++i)
    if (defined_[i]) (void)list.apply(definitions_[i]);
  if (auto clash = list.apply(parsed.value())) return refused(EEXIST, *clash);

  std::string messages;
  request_messages_ = &messages;
  request_failed_ = false;
  struct Restore {
    std::string*& messages;
    ~Restore() { messages = nullptr; }
  } restore{request_messages_};
  if (!check_named_binary(parsed.value())) return ControlReply{EINVAL, messages, {}};
  probe::ProbeDefinition definition = std::move(parsed.value());
  if (split.filter) {
    if (!definition.event.empty()) {
      if (auto bad = filters_.set(trace::describe_event(definition), *split.filter)) {
        std::string rendered = bad->render();
        return ControlReply{EINVAL, fmt::format("'{}': the filter is refused:\n{}", definition.command, rendered), {}};
      }
    }
    definition_filters_[definition.command] = *split.filter;
  }
  const size_t index = definitions_.size();
  definitions_.push_back(std::move(definition));
  defined_.push_back(true);
  starts_enabled_.push_back(false);  // as in tracefs: enabled when the user says so
  // In every process still traced that maps its object (or when it loads it).
  const size_t planted_before = planted_.size();
  bool waiting = false;
  for (auto& traced : processes_) {
    TracedProcess& p = *traced;
    if (p.ended) continue;
    p.pending.push_back(index);
    rebuild_modules(p);
    plant_pending(p, false);
    waiting = waiting || std::find(p.pending.begin(), p.pending.end(), index) != p.pending.end();
  }
  bool planted_some = false;
  for (size_t i = planted_before; i < planted_.size(); ++i) planted_some = planted_some || !planted_[i].removed;
  if (!planted_some && !waiting) {
    // Nothing of it went in: as if it had never been written.
    defined_[index] = false;
    for (size_t i = planted_before; i < planted_.size(); ++i) static_cast<void>(unplant_probe(planted_[i]));
    if (messages.empty()) messages = fmt::format("'{}': no probe point went in\n", definitions_[index].command);
    return ControlReply{EINVAL, messages, {}};
  }
  // A glob's points that went in stay; the others' reasons are said.
  if (waiting && !planted_some)
    messages += fmt::format("'{}': waits for '{}' to be loaded\n", definitions_[index].command, definitions_[index].place.binary);
  for (auto& traced : processes_) {
    if (traced->ended) continue;
    watch_dynamic_linker(*traced);
    watch_exec_calls(*traced);
    watch_seccomp_calls(*traced);
  }
  return ControlReply{0, messages, {}};
}

ControlReply TraceSession::remove_live(const probe::ProbeDefinition& deletion) {
  probe::DefinitionList list;
  for (size_t i = 0; i < definitions_.size(); ++i)
    if (defined_[i]) (void)list.apply(definitions_[i]);
  if (auto none = list.apply(deletion)) return ControlReply{ENOENT, none->render(), {}};
  std::vector<size_t> matched;
  for (size_t i = 0; i < definitions_.size(); ++i)
    if (defined_[i] && probe::deletion_matches(deletion, definitions_[i])) matched.push_back(i);
  return remove_definitions(matched);
}

ControlReply TraceSession::remove_definitions(const std::vector<size_t>& indices) {
  // As the kernel: an enabled event cannot be deleted (EBUSY); disable it first.
  const std::set<size_t> chosen(indices.begin(), indices.end());
  for (const PlantedProbe& planted : planted_) {
    if (planted.removed || !planted.enabled || !chosen.contains(planted.definition)) continue;
    return ControlReply{EBUSY, fmt::format("{} is enabled: disable it first\n", group_event_of(catalog_[planted.catalog_id])), {}};
  }
  for (size_t index : indices) {
    const probe::ProbeDefinition& definition = definitions_[index];
    if (definition.event.empty()) continue;
    auto known = event_enabled_.find(definition.group + "/" + definition.event);
    if (known != event_enabled_.end() && known->second)
      return ControlReply{EBUSY, fmt::format("{} is enabled: disable it first\n", known->first), {}};
  }
  drain_jump_engines();  // their last records, under their names
  std::string messages;
  for (PlantedProbe& planted : planted_) {
    if (planted.removed || !chosen.contains(planted.definition)) continue;
    const std::string name = group_event_of(catalog_[planted.catalog_id]);
    if (auto removed = unplant_probe(planted); !removed) messages += fmt::format("{}: {}\n", name, removed.error().message);
  }
  for (size_t index : indices) defined_[index] = false;
  for (auto& p : processes_) std::erase_if(p->pending, [&](size_t index) { return chosen.contains(index); });
  const std::set<std::string> remaining = live_events();
  std::erase_if(event_enabled_, [&](const auto& entry) { return !remaining.contains(entry.first); });
  return ControlReply{messages.empty() ? 0 : EIO, messages, {}};
}

ControlReply TraceSession::set_enabled_live(const std::string& target, bool enabled) {
  // "" every event, "GRP/" a group, "GRP/EVENT", or "EVENT" in whichever group has it.
  auto named = [&](const std::string& group_event) {
    if (target.empty()) return true;
    const size_t slash = target.find('/');
    if (slash == std::string::npos) return group_event.substr(group_event.find('/') + 1) == target;
    if (slash + 1 == target.size()) return group_event.starts_with(target);
    return group_event == target;
  };
  bool any = false;
  for (const std::string& group_event : live_events()) {
    if (!named(group_event)) continue;
    any = true;
    event_enabled_[group_event] = enabled;
  }
  if (!any) return ControlReply{ENOENT, fmt::format("no event {}\n", target.empty() ? "is defined" : target), {}};
  std::string messages;
  for (PlantedProbe& planted : planted_) {
    const std::string group_event = group_event_of(catalog_[planted.catalog_id]);
    if (planted.removed || !named(group_event)) continue;
    if (auto switched = switch_probe(planted, enabled); !switched)
      messages += fmt::format("{}: {}\n", group_event, switched.error().message);
  }
  return ControlReply{messages.empty() ? 0 : EIO, messages, {}};
}

std::string TraceSession::list_live() const {
  const unsigned word_size = probe::probe_abi(definitions_arch_).word_size;
  std::string out;
  for (size_t i = 0; i < definitions_.size(); ++i)
    if (defined_[i]) out += probe::to_uprobe_events_line(definitions_[i], word_size) + "\n";
  return out;
}

std::string TraceSession::profile_live() {
  drain_jump_engines();  // counts as of now
  // One line a probe point, whichever processes have it; a process that ended keeps its
  // lines while their definition lives (an exec's old image, a `-:` removal do not).
  std::string out;
  std::set<uint32_t> listed;
  for (const PlantedProbe& planted : planted_) {
    const bool shown = !planted.removed || (planted.process->ended && defined_[planted.definition]);
    if (shown && listed.insert(planted.catalog_id).second)
      out += trace::format_profile_line(catalog_, statistics_, planted.catalog_id);
  }
  return out;
}

std::string TraceSession::events_live() const {
  std::string out;
  for (const std::string& group_event : live_events()) {
    auto known = event_enabled_.find(group_event);
    out += fmt::format("{} {}\n", group_event, known != event_enabled_.end() && known->second ? 1 : 0);
  }
  return out;
}

bool TraceSession::open_control_surfaces() {
  live_events_buffer_ = std::make_unique<EventBuffer>(size_t{options_.buffer_size_kb} * 1024);
  target::prepare_wake();  // before any request can come
  if (options_.control_socket) {
    auto opened = ControlSocket::open(control_, *live_events_buffer_);
    if (!opened) {
      error(fmt::format("--ctl: {}", opened.error().message));
      close_control_surfaces();
      return false;
    }
    control_socket_ = std::move(*opened);
    report(Severity::Note, fmt::format("control socket {} (xprobe ctl --session {})", control_socket_->path(), getpid()));
  }
  if (!options_.control_mount.empty()) {
    auto mounted = TracefsMount::mount(options_.control_mount, control_, *live_events_buffer_, options_.irq_info,
                                       static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN)));
    if (!mounted) {
      error(mounted.error().message);
      close_control_surfaces();
      return false;
    }
    control_mount_ = std::move(*mounted);
  }
  return true;
}

void TraceSession::close_control_surfaces() {
  if (!live_events_buffer_) return;
  control_.shut_down();  // requests waiting, and every later one, are refused
  live_events_buffer_->close();
  statistics_.add_overwritten(live_events_buffer_->overwritten());
  control_mount_.reset();
  control_socket_.reset();
  live_events_buffer_.reset();
}

const trace::EventDescription* TraceSession::live_event(const std::string& group_event) {
  for (const PlantedProbe& planted : planted_)
    if (!planted.removed && group_event_of(catalog_[planted.catalog_id]) == group_event) return &catalog_[planted.catalog_id];
  for (size_t i = 0; i < definitions_.size(); ++i) {
    if (!defined_[i] || definitions_[i].event.empty() || definitions_[i].group + "/" + definitions_[i].event != group_event)
      continue;
    described_ = trace::describe_event(definitions_[i]);
    return &*described_;
  }
  return nullptr;
}

ControlReply TraceSession::format_live(const std::string& group_event) {
  const trace::EventDescription* event = live_event(group_event);
  if (event == nullptr) return ControlReply{ENOENT, fmt::format("no event {}\n", group_event), {}};
  // The ID: a number of the event's own, stable while it lives (the kernel's event type).
  const auto live = live_events();
  const auto position = static_cast<unsigned>(std::distance(live.begin(), live.find(group_event)));
  return ControlReply{0, trace::kernel_event_format(*event, 1000 + position, probe::probe_abi(definitions_arch_).word_size), {}};
}

ControlReply TraceSession::set_filter_live(const std::string& request) {
  const size_t space = request.find(' ');
  const std::string group_event = request.substr(0, space);
  const std::string text = space == std::string::npos ? std::string() : request.substr(space + 1);
  const trace::EventDescription* event = live_event(group_event);
  if (event == nullptr) return ControlReply{ENOENT, fmt::format("no event {}\n", group_event), {}};
  // What was recorded before is judged by the filter it was recorded under.
  drain_jump_engines();
  const trace::EventDescription described = *event;
  if (auto refused = filters_.write_file(described, text))
    return ControlReply{EINVAL, refused->render(), refused->error_log_entry(static_cast<double>(monotonic_ns()) / 1e9)};
  return ControlReply{0, {}, {}};
}

ControlReply TraceSession::trigger_live(const std::string& group_event, bool hist) {
  if (live_event(group_event) == nullptr) return ControlReply{ENOENT, fmt::format("no event {}\n", group_event), {}};
  if (hist) {
    drain_jump_engines();
    collect_agent_aggregations();
  }
  std::string out;
  const trace::HistTable::Symbolize symbolize = hist_symbolizer();
  for (const Aggregation& aggregation : aggregations_) {
    if (aggregation.removed || !aggregation.hist || aggregation.group_event != group_event) continue;
    if (hist) out += (out.empty() ? "" : "\n") + aggregation.hist->format(symbolize);
    else out += aggregation.hist->spec().describe() + "\n";
  }
  // An event without triggers: the kernel's trigger file lists the commands it takes.
  if (!hist && out.empty())
    out = "# Available triggers:\n# traceon traceoff snapshot stacktrace enable_event disable_event enable_hist disable_hist hist\n";
  return ControlReply{0, out, {}};
}

ControlReply TraceSession::set_trigger_live(const std::string& request) {
  const size_t space = request.find(' ');
  const std::string group_event = request.substr(0, space);
  std::string text = space == std::string::npos ? std::string() : request.substr(space + 1);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  const trace::EventDescription* event = live_event(group_event);
  if (event == nullptr) return ControlReply{ENOENT, fmt::format("no event {}\n", group_event), {}};
  const bool removal = text.starts_with('!');
  if (removal) text.erase(0, 1);
  if (!text.starts_with("hist")) return ControlReply{EINVAL, fmt::format("'{}': only hist triggers are taken\n", text), {}};
  auto spec = trace::parse_hist_trigger(text, *event);
  if (!spec) return ControlReply{EINVAL, spec.error().message + "\n", {}};
  Aggregation* existing = nullptr;
  for (Aggregation& other : aggregations_)
    if (!other.removed && other.hist && other.group_event == group_event && other.hist->spec().same_trigger(*spec))
      existing = &other;
  using Command = trace::HistSpec::Command;
  if (removal || (existing != nullptr && spec->command != Command::None)) {
    if (existing == nullptr) return ControlReply{ENOENT, fmt::format("'{}': no such hist trigger\n", text), {}};
    drain_jump_engines();
    collect_agent_aggregations();
    if (removal) {
      existing->removed = true;  // its index stays: the other aggregations' do not move
      const auto index = static_cast<size_t>(existing - aggregations_.data());
      for (PlantedProbe& planted : planted_)
        if (std::erase(planted.aggregations, index) != 0) replant_agent_work(planted);
    } else if (spec->command == Command::Clear) {
      existing->hist->clear();
    } else {
      existing->hist->set_paused(spec->command == Command::Pause);
    }
    return ControlReply{};
  }
  if (existing != nullptr) return ControlReply{EEXIST, fmt::format("'{}': Hist trigger already exists\n", text), {}};
  if (spec->command == Command::Cont || spec->command == Command::Clear)
    return ControlReply{ENOENT, fmt::format("'{}': Can't clear or continue a nonexistent hist trigger\n", text), {}};
  Aggregation aggregation;
  aggregation.group_event = group_event;
  aggregation.hist.emplace(std::move(*spec), *event);
  const bool stack = aggregation.hist->needs_stack();
  for (const PlantedProbe& planted : planted_)
    if (stack && planted.jumped && !planted.removed && group_event_of(catalog_[planted.catalog_id]) == group_event)
      return ControlReply{EINVAL, fmt::format("'{}': a jump-optimized probe cannot key on common_stacktrace (its agent does not walk stacks)\n", text), {}};
  drain_jump_engines();  // what was recorded before is not the trigger's
  aggregations_.push_back(std::move(aggregation));
  const size_t index = aggregations_.size() - 1;
  // The event's jump-optimized probes are planted again with the new trigger's table too (or,
  // when the agent cannot compute all of them, with none: the tracer aggregates their records).
  for (PlantedProbe& planted : planted_)
    if (!planted.removed && group_event_of(catalog_[planted.catalog_id]) == group_event) {
      planted.aggregations.push_back(index);
      planted.needs_stack = planted.needs_stack || stack;
      replant_agent_work(planted);
    }
  return ControlReply{};
}

void TraceSession::set_agent_work(const PlantedProbe& planted, probe::engine::JumpProbeSpec& jump) {
  jump.agent_filter.clear();
  if (planted.filter) jump.agent_filter = probe::filter::compile_agent_filter(*planted.filter, planted.plan, planted.address);
  jump.agent_aggregations.clear();
  jump.on_aggregated = nullptr;
  jump.on_aggregated_hits = nullptr;
  jump.on_aggregation_failed = nullptr;
  auto in_agent = agent_aggregations_of(planted);
  if (!in_agent) return;
  jump.agent_aggregations = std::move(*in_agent);
  // The tables' order is the aggregations' as they are now: a trigger added or removed later
  // plants the probe again with tables of its own, while these are still read to the end.
  jump.on_aggregated = [this, targets = planted.aggregations](size_t a, const probe::AggregationUpdate& update) {
    if (a >= targets.size()) return;
    Aggregation& aggregation = aggregations_[targets[a]];
    if (aggregation.hist) aggregation.hist->add_aggregated(update);
    if (aggregation.summary) aggregation.summary->add_aggregated(update);
  };
  jump.on_aggregated_hits = [this, &planted](uint64_t count) {
    trace::ProbeCounters& counters = statistics_.counters(planted.catalog_id);
    for (uint64_t n = 0; n < count; ++n) counters.hit();
  };
  jump.on_aggregation_failed = [this, &planted](const std::string& why) {
    warning(fmt::format("{}: {}; xprobe aggregates its hits from now on", group_event_of(catalog_[planted.catalog_id]), why));
  };
}

void TraceSession::replant_agent_work(PlantedProbe& planted) {
  TracedProcess& p = *planted.process;
  if (planted.removed || !planted.jumped || !p.jump_engine) return;
  planted.jump_index = p.jump_engine->replace_agent_work(
      planted.jump_index, [&](probe::engine::JumpProbeSpec& jump) { set_agent_work(planted, jump); });
}

probe::engine::ProbeSpec TraceSession::breakpoint_spec(PlantedProbe& planted) {
  probe::engine::ProbeSpec spec;
  spec.address = planted.address;
  spec.is_return = planted.is_return;
  spec.max_active = planted.max_active;
  if (spec.is_return) {
    spec.save_at_entry = [this, &planted](const probe::engine::HitContext& c) { return save_at_entry(planted, c); };
    spec.on_return = [this, &planted](const probe::engine::ReturnContext& c) { on_return(planted, c); };
  } else {
    spec.on_hit = [this, &planted](const probe::engine::HitContext& c) { on_hit(planted, c); };
  }
  return spec;
}

void TraceSession::demote_jumps(TracedProcess& p) {
  if (!p.jump_engine || p.jumps_demoted || p.jump_engine->probe_count() == 0) return;
  p.jumps_demoted = true;
  p.jump_unusable = "the process put itself under seccomp";
  warning(fmt::format("process {} installs a seccomp filter: its jump-optimized probes become breakpoints", p.process->pid()));
  supervisor::AllThreadsStopped stopped(*p.process, p.supervisor->handling_tid());
  p.jump_engine->drain();
  (void)p.jump_engine->restore_in(*p.process);
  p.jump_engine->finish();
  p.jump_engine->forget_all();
  for (PlantedProbe& planted : planted_) {
    if (!planted.jumped || planted.process != &p) continue;
    planted.jumped = false;
    if (planted.removed || !planted.enabled) continue;
    auto id = p.engine->add_probe(breakpoint_spec(planted));
    if (id) {
      planted.engine_id = *id;
      planted.trap_ids.push_back(*id);
      planted.trap_in = true;
    } else error(fmt::format("{}/{}: {}", catalog_[planted.catalog_id].group, catalog_[planted.catalog_id].event, id.error().message));
  }
}

void TraceSession::watch_seccomp_calls(TracedProcess& p) {
  if (p.jumps_demoted) return;
  // The jump engine runs in processes of the host's architecture only, whose system-call
  // numbers <sys/syscall.h> has.
  constexpr uint64_t kPrSetSeccomp = 22, kPrSetNoNewPrivs = 38, kSysSeccomp = SYS_seccomp;
  auto first_argument = [this, &p](const probe::engine::HitContext& c) {
    const arch::RegisterAbi& abi = arch::register_abi(p.engine->arch());
    return abi.argument_registers.empty() ? 0 : PtraceRegisterView(c.registers, p.engine->arch()).read(abi.argument_registers[0]);
  };
  watch_functions(p, {"prctl"}, p.seccomp_watches, [this, &p, first_argument](const probe::engine::HitContext& c) {
    const uint64_t option = first_argument(c);
    if (option == kPrSetSeccomp || option == kPrSetNoNewPrivs) demote_jumps(p);
  });
  watch_functions(p, {"syscall"}, p.seccomp_watches, [this, &p, first_argument](const probe::engine::HitContext& c) {
    if (first_argument(c) == kSysSeccomp) demote_jumps(p);
  });
}

void TraceSession::watch_functions(TracedProcess& p, std::initializer_list<const char*> names, std::set<uint64_t>& watched,
                                   const std::function<void(const probe::engine::HitContext&)>& callback) {
  if (!p.jump_engine || p.jump_engine->probe_count() == 0) return;
  for (const probe::LoadedModule& module : p.modules.modules()) {
    for (const char* name : names) {
      for (const elf::Symbol* symbol : module.elf->symbols_named(name)) {
        if (symbol->kind != elf::SymbolKind::Function) continue;
        const uint64_t address = symbol->address + module.bias;
        if (watched.insert(address).second) (void)p.engine->add_internal_breakpoint(address, callback);
      }
    }
  }
}

TraceSession::IfuncOutcome TraceSession::move_to_ifunc_choice(TracedProcess& p, const probe::ProbeDefinition& definition,
                                                               probe::ResolvedPoint& point) {
  const probe::LoadedModule* module = p.modules.find(point.module_path);
  if (module == nullptr) return IfuncOutcome::Resolver;
  ProcessMemoryReader memory(*p.process);
  const auto chosen = probe::chosen_implementation(*module, *point.ifunc, p.modules, memory);
  if (!chosen) {
    if (!p.relocated) return IfuncOutcome::NotYet;
    warning(fmt::format("'{}': {} is an IFUNC and no GOT slot of the process holds the implementation chosen for it: "
                        "its resolver is probed (it runs only while the dynamic linker relocates)",
                        definition.command, point.ifunc->name));
    point.ifunc.reset();
    return IfuncOutcome::Resolver;
  }
  const std::string choice = probe::describe_ifunc_choice(*point.ifunc, *chosen);
  point.function = choice;
  point.function_proof = chosen->range.proof_text();
  point.function_address = chosen->address;
  point.address = chosen->address;
  point.file_offset = module->elf->address_to_file_offset(chosen->link_address).value_or(0);
  point.check = arch::check_probe_point(module->elf->arch(), module->elf->function_bytes(chosen->range.function),
                                        chosen->address, chosen->address);
  report(Severity::Note, fmt::format("'{}': {} is an IFUNC: probing the implementation the dynamic linker chose, {} "
                                     "(read from its GOT slot at {:#x}; delimited by its {})",
                                     definition.command, point.ifunc->name, choice, chosen->slot, point.function_proof));
  return IfuncOutcome::Moved;
}

// A program started here (or just exec'd) has its startup objects relocated by the time it
// reaches its entry point: IFUNC choices can be read from then on.
void TraceSession::watch_program_entry(TracedProcess& p) {
  if (p.relocated || p.entry_watch) return;
  const probe::LoadedModule* main = p.modules.main_executable();
  if (main == nullptr || main->elf->entry() == 0) {
    p.relocated = true;
    return;
  }
  auto id = p.engine->add_internal_breakpoint(main->elf->entry() + main->bias, [this, &p](const probe::engine::HitContext&) {
    if (p.relocated) return;
    p.relocated = true;
    if (p.pending.empty()) return;
    rebuild_modules(p);
    plant_pending(p, false);
  });
  if (id) p.entry_watch = *id;
  else p.relocated = true;  // no way to wait for it: read what is there
}

void TraceSession::watch_dynamic_linker(TracedProcess& p) {
  // The dynamic linker calls _dl_debug_state (r_debug.r_brk) before and after it changes the
  // list of loaded objects: debuggers stop there, and so does xprobe, to plant the probes of
  // libraries that were not loaded yet.
  for (const probe::LoadedModule& module : p.modules.modules()) {
    for (const elf::Symbol* symbol : module.elf->symbols_named("_dl_debug_state")) {
      const uint64_t address = symbol->address + module.bias;
      if (p.rendezvous && p.rendezvous_address == address) return;
      auto id = p.engine->add_internal_breakpoint(address, [this, &p](const probe::engine::HitContext&) {
        const bool exec_unwatched =
            p.jump_engine && p.jump_engine->probe_count() != 0 && (p.exec_watches.empty() || p.seccomp_watches.empty());
        if (p.pending.empty() && !exec_unwatched) return;
        rebuild_modules(p);
        if (!p.pending.empty()) plant_pending(p, false);
        watch_exec_calls(p);
        watch_seccomp_calls(p);
      });
      if (id) {
        p.rendezvous = *id;
        p.rendezvous_address = address;
      }
      return;
    }
  }
}

void TraceSession::watch_exec_calls(TracedProcess& p) {
  watch_functions(p, {"execve", "execveat", "fexecve", "execv", "execvp", "execvpe", "execl", "execlp", "execle"},
                  p.exec_watches, [this, &p](const probe::engine::HitContext&) {
                    p.jump_engine->drain();
                    p.jump_engine->collect_aggregations(true);  // the tables go with the image
                  });
}

trace::EventRecord TraceSession::fetch_event(const PlantedProbe& probe, const probe::engine::HitContext& hit,
                                             std::optional<uint64_t> return_address,
                                             std::span<const uint64_t> saved_arguments) {
  TracedProcess& p = *probe.process;
  statistics_.counters(probe.catalog_id).hit();
  PtraceRegisterView registers(hit.registers, p.engine->arch());
  ProcessMemoryReader process_memory(hit.memory);
  // The stack words the programs read come in one batched read.
  probe::PrefetchedMemory memory(process_memory);
  if (probe.plan.stack_words_read != 0) {
    std::vector<uint8_t> window(probe.plan.stack_words_read * size_t{probe::probe_abi(p.engine->arch()).word_size});
    window.resize(process_memory.read_up_to(hit.registers.sp(), window));
    memory.add_block(hit.registers.sp(), std::move(window));
  }
  probe::FetchEnvironment environment{registers, memory, comms_->comm(hit.tid), return_address, saved_arguments};
  trace::EventRecord record;
  record.probe_id = probe.catalog_id;
  record.tid = hit.tid;
  record.comm = environment.comm;
  record.cpu = cpus_->cpu(hit.tid);
  record.timestamp_ns = monotonic_ns();
  record.address = hit.address;
  record.values = probe::run_all(probe.plan, environment);
  if (probe.needs_stack) {
    if (auto arch = arch::probe_arch(p.engine->arch())) {
      const bool at_entry = !return_address && !probe.is_return && probe.at_function_entry;
      record.user_stack = probe::walk_user_stack(**arch, hit.registers.raw, at_entry, [&](uint64_t address, std::span<uint8_t> into) {
        return hit.memory.read(address, into).ok();
      });
    }
  }
  return record;
}

void TraceSession::on_hit(const PlantedProbe& probe, const probe::engine::HitContext& context) {
  TracedProcess& p = *probe.process;
  earlier_jump_events_first(p);
  trace::EventRecord record = fetch_event(probe, context, std::nullopt, {});
  if (passes_filter(probe, record) && !aggregate(probe, record, 0)) emit(p, std::move(record));
}

void TraceSession::on_record(const PlantedProbe& probe, const probe::AgentRecord& agent_record, uint64_t timestamp_ns) {
  TracedProcess& p = *probe.process;
  statistics_.counters(probe.catalog_id).hit();
  const auto tid = static_cast<pid_t>(agent_record.tid);
  trace::EventRecord record;
  record.probe_id = probe.catalog_id;
  record.tid = tid;
  record.comm = comms_->comm(tid);
  record.cpu = agent_record.cpu;
  record.timestamp_ns = timestamp_ns;
  record.address = probe.address;
  if (probe.is_return) {
    record.address = agent_record.return_address;
    record.function_address = probe.address;
  }
  record.values = probe::replay_agent_record(probe.plan, agent_record, record.comm);
  if (!passes_filter(probe, record)) return;
  uint64_t latency_ns = 0;
  if (probe.entry_clock_slot && *probe.entry_clock_slot < agent_record.saved.size() && p.jump_engine->ticks_per_ns() > 0) {
    const uint64_t ticks = agent_record.tsc - agent_record.saved[*probe.entry_clock_slot];
    latency_ns = static_cast<uint64_t>(static_cast<double>(ticks) / p.jump_engine->ticks_per_ns());
  }
  if (!aggregate(probe, record, latency_ns)) emit_in_time(p, std::move(record));
}

void TraceSession::on_missed(const PlantedProbe& probe, uint64_t count) {
  trace::ProbeCounters& counters = statistics_.counters(probe.catalog_id);
  for (uint64_t i = 0; i < count; ++i) {
    counters.hit();
    counters.miss();
  }
}

void TraceSession::on_lost(const PlantedProbe& probe, uint64_t count) {
  on_missed(probe, count);
  statistics_.add_dropped(count);
}

void TraceSession::start_jump_engine(TracedProcess& p) {
  if (options_.engine == EngineChoice::Trap) {
    p.jump_unusable = "--engine trap";
    return;
  }
  if (options_.follow_fork) {
    p.jump_unusable = "--follow-fork traces children with breakpoints only";
    return;
  }
  auto jump_arch = arch::jump_arch(p.engine->arch());
  if (!jump_arch) {
    p.jump_unusable = fmt::format("the process is {} ({})", insn::arch_name(p.engine->arch()), jump_arch.error().message);
    return;
  }
  if (auto usable = probe::engine::JumpEngine::usable(p.process->pid()); !usable) {
    p.jump_unusable = usable.error().message;
    return;
  }
  p.jump_engine = std::make_unique<probe::engine::JumpEngine>(*p.supervisor, **jump_arch);
  p.jump_engine->set_return_site_host(&p);
}

void TraceSession::return_site_not_patched(uint64_t address, const std::string& why) {
  if (options_.engine == EngineChoice::Jump)
    warning(fmt::format("return site {:#x} cannot be jump-optimized ({}): returns there are missed (--engine jump)", address, why));
}

Status TraceSession::watch_return_site(TracedProcess& p, uint64_t address) {
  if (options_.engine == EngineChoice::Jump) return make_error("--engine jump: no breakpoints");
  auto id = p.engine->add_internal_breakpoint(address, [this, &p](const probe::engine::HitContext& c) {
    if (p.jump_engine) p.jump_engine->return_trapped(c);
  });
  if (!id) return id.error();
  return {};
}

std::vector<uint64_t> TraceSession::save_at_entry(const PlantedProbe& probe, const probe::engine::HitContext& context) {
  TracedProcess& p = *probe.process;
  PtraceRegisterView registers(context.registers, p.engine->arch());
  ProcessMemoryReader memory(context.memory);
  std::vector<uint64_t> saved = probe::capture_entry_arguments(probe.plan, registers, memory);
  if (probe.entry_clock_slot) {
    saved.resize(*probe.entry_clock_slot + 1, 0);
    saved[*probe.entry_clock_slot] = monotonic_ns();
  }
  return saved;
}

void TraceSession::on_return(const PlantedProbe& probe, const probe::engine::ReturnContext& context) {
  emit_return(probe, context.hit, context.function, context.return_address, context.saved);
}

void TraceSession::emit_return(const PlantedProbe& probe, const probe::engine::HitContext& at_return, uint64_t function,
                               uint64_t return_address, std::span<const uint64_t> saved) {
  TracedProcess& p = *probe.process;
  earlier_jump_events_first(p);
  trace::EventRecord record = fetch_event(probe, at_return, return_address, saved);
  record.address = return_address;
  record.function_address = function;
  if (!passes_filter(probe, record)) return;
  uint64_t latency_ns = 0;
  if (probe.entry_clock_slot && *probe.entry_clock_slot < saved.size()) {
    const uint64_t entry = saved[*probe.entry_clock_slot];
    // A jump-optimized probe's entry saved the agent's clock; a breakpoint's, CLOCK_MONOTONIC.
    if (probe.jumped && p.jump_engine && p.jump_engine->ticks_per_ns() > 0)
      latency_ns = static_cast<uint64_t>(static_cast<double>(p.jump_engine->clock_now() - entry) / p.jump_engine->ticks_per_ns());
    else
      latency_ns = record.timestamp_ns > entry ? record.timestamp_ns - entry : 0;
  }
  if (!aggregate(probe, record, latency_ns)) emit(p, std::move(record));
}

void TraceSession::emit(TracedProcess& p, trace::EventRecord&& record) {
  line_.clear();
  symbolizing_in_ = &p;
  writer_->write(record, line_);
  symbolizing_in_ = nullptr;
  output_->write_event(record.probe_id, line_, record.timestamp_ns);
  if (live_events_buffer_) live_events_buffer_->push(line_);
}

void TraceSession::emit_in_time(TracedProcess& p, trace::EventRecord&& record) {
  if (processes_.size() < 2) return emit(p, std::move(record));
  in_time_.push_back({&p, std::move(record)});
}

void TraceSession::flush_in_time() {
  if (processes_.size() < 2) return;
  drain_jump_engines();  // what the other rings hold may be older
  if (in_time_.empty()) return;
  std::vector<TimedEvent> due = std::move(in_time_);
  in_time_.clear();
  std::stable_sort(due.begin(), due.end(),
                   [](const TimedEvent& a, const TimedEvent& b) { return a.record.timestamp_ns < b.record.timestamp_ns; });
  for (TimedEvent& event : due) emit(*event.process, std::move(event.record));
}

void TraceSession::earlier_jump_events_first(TracedProcess& p) {
  if (processes_.size() > 1) flush_in_time();
  else if (p.jump_engine) p.jump_engine->drain();
}

void TraceSession::end_output() {
  flush_in_time();
  // The aggregations' final state (also after Ctrl-C: tracing ends the same way).
  if (!aggregations_.empty()) write_aggregations(monotonic_ns(), false);
  if (const std::string trailer = writer_->end(); !trailer.empty()) output_->write_text(trailer);
  output_->flush();
  if (const std::string failed = writer_->failure(); !failed.empty()) error(failed);
  diagnostics_.tracing_ended(catalog_, statistics_);
}

// A program xprobe started is still its child after the detach: it runs on untraced and
// xprobe ends with its status, as it would have without the interruption. A second SIGINT
// or SIGTERM leaves it running and returns at once.
int TraceSession::wait_for_detached_program() {
  if (processes_.size() != 1 || !processes_.front()->process->launched()) return 0;
  const pid_t pid = processes_.front()->process->pid();
  report(Severity::Note, fmt::format("detached; process {} runs on untraced, waiting for it (interrupt again to leave it)", pid));
  target::clear_stop_request();
  for (;;) {
    int status = 0;
    const pid_t got = waitpid(pid, &status, 0);
    if (got == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (got < 0 && errno == EINTR && !target::stop_requested()) continue;
    return 0;
  }
}

// Nothing of the session may stay in any of its processes: one started here is killed, the
// attached ones are let go as they were.
void TraceSession::fail_before_tracing() {
  for (auto& p : processes_) {
    if (!p->process || p->ended) continue;
    p->ended = true;
    if (p->process->launched()) {
      (void)p->process->kill();
    } else {
      if (p->supervisor) (void)p->supervisor->detach();
      else (void)p->process->detach();
    }
  }
}

void TraceSession::on_exec(TracedProcess& p) {
  if (p.supervisor->detached()) return;  // nothing is planted again while leaving
  p.main_executable = read_link(fmt::format("/proc/{}/exe", p.process->pid()));
  comms_->forget_all();
  cpus_->forget_all();
  p.rendezvous.reset();
  p.relocated = false;
  p.entry_watch.reset();
  p.exec_watches.clear();
  p.seccomp_watches.clear();
  p.semaphores.forget_all();
  // The probes of the old image are gone with it (the engines forgot them): their counts stay.
  for (PlantedProbe& planted : planted_)
    if (planted.process == &p) planted.removed = true;
  p.pending.clear();
  for (size_t i = 0; i < definitions_.size(); ++i)
    if (defined_[i]) p.pending.push_back(i);
  rebuild_modules(p);
  publish_readable_ranges(p);
  follow_goroutines_if_go(p);
  watch_program_entry(p);
  plant_pending(p, false);
  watch_dynamic_linker(p);
  watch_exec_calls(p);
  watch_seccomp_calls(p);
}

void TracedProcess::on_exec() { session.on_exec(*this); }
void TracedProcess::on_thread_exited(pid_t tid) { session.on_thread_exited(tid); }
void TracedProcess::return_site_not_patched(uint64_t address, const std::string& why) {
  session.return_site_not_patched(address, why);
}
Status TracedProcess::watch_return_site(uint64_t address) { return session.watch_return_site(*this, address); }

void TraceSession::on_thread_exited(pid_t tid) {
  comms_->forget(tid);
  cpus_->forget(tid);
}

int TraceSession::run() {
  // From the first moment: a SIGINT/SIGTERM must end tracing cleanly, never kill xprobe.
  target::StopSignals stop_signals;
  // Interrupted while parsing: nothing was started or attached, the signal's status.
  if (!parse_definitions()) return target::stop_requested() ? 128 + target::stop_signal() : 2;
  if (options_.pids.empty() && options_.command.empty()) {
    report(Severity::Usage, "give a program to start (-- COMMAND [ARGS]) or a process to attach to (-p PID)");
    return 2;
  }
  if (!options_.pids.empty() && !options_.command.empty()) {
    // Said rather than one of them left out without a word.
    report(Severity::Usage, fmt::format("give a program to start (-- {}) or processes to attach to (-p {}), not both",
                                        options_.command.front(), options_.pids.front()));
    return 2;
  }
  if (!open_output()) return 2;
  // Interrupted before the program started (it was killed unstarted): the signal's status.
  if (!start_process()) return target::stop_requested() ? 128 + target::stop_signal() : 1;
  // A reader that goes away (| head) must not kill xprobe while the program sits stopped at a
  // breakpoint: the write fails, its events are counted as dropped. (Set after the launch: an
  // ignored signal would be inherited by the program across exec.)
  signal(SIGPIPE, SIG_IGN);
  supervisor::SupervisorOptions supervision;
  supervision.follow_fork = options_.follow_fork;
  supervisor::SupervisorGroup group;
  for (auto& traced : processes_) {
    TracedProcess& p = *traced;
    p.supervisor = std::make_unique<supervisor::Supervisor>(*p.process, supervision);
    // In this order, so that both engines have forgotten the old image when an exec is seen here.
    p.engine = std::make_unique<probe::engine::TrapEngine>(*p.supervisor);
    start_jump_engine(p);
    p.supervisor->join(p);
    group.add(*p.supervisor);
  }
  group.join_loop(*this);
  for (auto& traced : processes_) {
    TracedProcess& p = *traced;
    for (size_t i = 0; i < definitions_.size(); ++i) p.pending.push_back(i);
    rebuild_modules(p);
    publish_readable_ranges(p);
    follow_goroutines_if_go(p);
    p.relocated = !p.process->launched();
    watch_program_entry(p);
    if (!plant_pending(p, true)) {
      // Killed from outside while its probes went in: its end, reported by the loop, is the story.
      if (!target::process_is_ending(p.process->pid())) {
        fail_before_tracing();
        return 1;
      }
    }
    watch_dynamic_linker(p);
    watch_exec_calls(p);
    watch_seccomp_calls(p);
  }
  if (const std::string header = writer_->begin(); !header.empty()) output_->write_text(header);
  if ((options_.control_socket || !options_.control_mount.empty()) && !open_control_surfaces()) {
    fail_before_tracing();
    return 1;
  }

  group.run([this](supervisor::Supervisor& ended, const Result<supervisor::RunResult>& how) {
    for (auto& p : processes_)
      if (p->supervisor.get() == &ended) process_ended(*p, how);
  });
  close_control_surfaces();
  if (ring_used_) statistics_.set_ring_records(ring_records_);
  end_output();
  report_unmatched();
  if (process_failed_ || !first_end_) return 1;
  switch (first_end_->end) {
    case supervisor::RunEnd::Exited: return first_end_->exit_status;
    case supervisor::RunEnd::Killed: return 128 + first_end_->signal;
    case supervisor::RunEnd::Detached: return wait_for_detached_program();
  }
  return 0;
}

}  // namespace

int run_trace_session(const SessionConfig& config, Diagnostics& diagnostics) {
  TraceSession session(config, diagnostics);
  return session.run();
}

}  // namespace xprobe::session
