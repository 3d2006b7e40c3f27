#include "trace_runner.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "kernel_tracefs.h"
#include "test_support.h"

namespace xprobe::testing {
namespace {

std::string temp_path(const std::string& name) {
  static int counter = 0;
  return fmt::format("{}/xprobe-e2e-{}-{}-{}", ::testing::TempDir(), getpid(), ++counter, name);
}

int spawn_and_wait(const std::vector<std::string>& argv, const std::string& out, const std::string& err) {
  const pid_t child = fork();
  if (child == 0) {
    const int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    std::vector<char*> raw;
    for (const auto& a : argv) raw.push_back(const_cast<char*>(a.c_str()));
    raw.push_back(nullptr);
    execv(raw[0], raw.data());
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

std::string read_text_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<TraceEvent> events_named(const std::vector<TraceEvent>& events, const std::string& name) {
  std::vector<TraceEvent> out;
  for (const auto& e : events)
    if (e.event == name) out.push_back(e);
  return out;
}

size_t count(const std::vector<TraceEvent>& events, const std::string& name) { return events_named(events, name).size(); }

std::string TraceEvent::arg(const std::string& name) const {
  for (const auto& [key, value] : args)
    if (key == name) return value;
  return "<missing " + name + ">";
}

std::vector<TraceEvent> parse_trace(const std::string& text, std::vector<std::string>* bad) {
  std::vector<TraceEvent> events;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    TraceEvent event;
    // "<comm>-<tid> [<cpu>] <flags> <secs.usecs>: <event>: (<location>) <args>"
    const size_t bracket = line.find(" [");
    const size_t close = line.find("] ", bracket == std::string::npos ? 0 : bracket);
    const size_t colon = line.find(": ", close == std::string::npos ? 0 : close);
    const size_t event_end = line.find(": ", colon == std::string::npos ? 0 : colon + 2);
    const size_t paren = line.find('(', event_end == std::string::npos ? 0 : event_end);
    const size_t paren_close = line.find(')', paren == std::string::npos ? 0 : paren);
    if (bracket == std::string::npos || close == std::string::npos || colon == std::string::npos ||
        event_end == std::string::npos || paren == std::string::npos || paren_close == std::string::npos) {
      if (bad) bad->push_back(line);
      continue;
    }
    std::string task = line.substr(0, bracket);
    task.erase(0, task.find_first_not_of(' '));
    task.erase(task.find_last_not_of(' ') + 1);
    const size_t dash = task.rfind('-');
    if (dash == std::string::npos) {
      if (bad) bad->push_back(line);
      continue;
    }
    event.comm = task.substr(0, dash);
    event.tid = std::atoi(task.c_str() + dash + 1);
    event.cpu = static_cast<unsigned>(std::atoi(line.c_str() + bracket + 2));
    event.event = line.substr(colon + 2, event_end - colon - 2);
    event.location = line.substr(paren + 1, paren_close - paren - 1);
    // Arguments: name=value, values quoted when strings (quotes may hold spaces).
    size_t i = paren_close + 1;
    while (i < line.size()) {
      while (i < line.size() && line[i] == ' ') ++i;
      if (i >= line.size()) break;
      const size_t eq = line.find('=', i);
      if (eq == std::string::npos) break;
      std::string name = line.substr(i, eq - i);
      size_t end = eq + 1;
      if (end < line.size() && line[end] == '"') {
        end = line.find('"', end + 1);
        end = end == std::string::npos ? line.size() : end + 1;
      } else if (end < line.size() && line[end] == '{') {
        end = line.find('}', end);
        end = end == std::string::npos ? line.size() : end + 1;
      } else {
        end = line.find(' ', end);
        if (end == std::string::npos) end = line.size();
      }
      event.args.emplace_back(name, line.substr(eq + 1, end - eq - 1));
      i = end;
    }
    events.push_back(std::move(event));
  }
  return events;
}

TracedRun run_xprobe(const std::vector<std::string>& xprobe_args, const std::vector<std::string>& command,
                     bool only_event_lines) {
  const std::string events = temp_path("events");
  TracedRun run = run_xprobe_into(events, xprobe_args, command);
  run.trace_text = read_text_file(events);
  std::vector<std::string> bad;
  run.events = parse_trace(run.trace_text, &bad);
  if (only_event_lines) {
    EXPECT_TRUE(bad.empty()) << "unparseable trace lines, first: " << (bad.empty() ? "" : bad.front());
  }
  unlink(events.c_str());
  return run;
}

TracedRun run_xprobe_into(const std::string& output, const std::vector<std::string>& xprobe_args,
                          const std::vector<std::string>& command) {
  TracedRun run;
  const std::string out = temp_path("out"), err = temp_path("err");
  std::vector<std::string> argv{XPROBE_PATH, "trace", "-o", output};
  argv.insert(argv.end(), xprobe_args.begin(), xprobe_args.end());
  if (!command.empty()) {
    argv.push_back("--");
    argv.insert(argv.end(), command.begin(), command.end());
  }
  run.xprobe_status = spawn_and_wait(argv, out, err);
  run.program_output = read_text_file(out);
  run.diagnostics = read_text_file(err);
  unlink(out.c_str());
  unlink(err.c_str());
  return run;
}

uint64_t file_offset_of(const std::string& elf_path, const std::string& symbol) {
  const uint64_t value = symbol_value(elf_path, symbol);
  if (value == 0) return 0;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(("readelf -lW " + elf_path).c_str(), "r"), pclose);
  char line[1024];
  while (pipe && fgets(line, sizeof line, pipe.get())) {
    unsigned long long offset, vaddr, paddr, filesz, memsz;
    char type[32];
    if (sscanf(line, " %31s 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx", type, &offset, &vaddr, &paddr, &filesz, &memsz) == 6 &&
        std::strcmp(type, "LOAD") == 0 && value >= vaddr && value < vaddr + filesz)
      return value - vaddr + offset;
  }
  return 0;
}

KernelRun run_under_kernel_uprobes(const std::vector<std::string>& definitions, const std::vector<std::string>& command,
                                   const std::map<std::string, std::string>& filters) {
  KernelRun run;
  auto tracefs = KernelTracefs::open(&run.skip_reason);
  if (!tracefs) return run;
  // Each definition reads "p:xpt_oracle/NAME ...": a left-over of a crashed earlier run goes first.
  for (const std::string& definition : definitions) {
    const std::string name = defined_event(definition);
    if (!name.empty()) tracefs->undefine(name);
  }
  for (const std::string& definition : definitions) {
    if (!tracefs->define(definition)) {
      run.skip_reason = "the kernel refused: " + definition + "\n" + tracefs->error_log();
      return run;
    }
  }
  for (const auto& [event, filter] : filters) {
    std::string readback;
    if (!tracefs->set_filter(event, filter, &readback)) {
      run.skip_reason = "the kernel refused the filter of " + event + ":\n" + readback;
      return run;
    }
  }
  tracefs->set_buffer_size_kb(8192);
  tracefs->clear_trace();
  tracefs->enable_group("xpt_oracle");
  const std::string out = temp_path("kout"), err = temp_path("kerr");
  run.exit_status = spawn_and_wait(command, out, err);
  tracefs->enable_group("xpt_oracle", false);
  run.program_output = read_text_file(out);
  run.events = parse_trace(tracefs->trace());
  unlink(out.c_str());
  unlink(err.c_str());
  return run;
}

SummaryCounts summary_counts(const std::string& diagnostics, const std::string& event) {
  SummaryCounts counts;
  std::vector<std::string> columns;  // after EVENT, up to PROBE POINT
  std::istringstream lines(diagnostics);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("ring records read: ", 0) == 0) counts.ring_records = std::stoll(line.substr(19));
    if (line.rfind("EVENT ", 0) == 0) {
      columns.clear();
      std::istringstream words(line.substr(6));
      for (std::string word; words >> word && word != "PROBE";) columns.push_back(word);
      continue;
    }
    if (line.rfind(event + " ", 0) != 0) continue;
    if (counts.recorded < 0) counts.recorded = counts.missed = counts.filtered = counts.unwound = 0;
    std::istringstream words(line.substr(event.size()));
    for (const std::string& column : columns) {
      int64_t value = 0;
      words >> value;
      if (column == "RECORDED") counts.recorded += value;
      if (column == "MISSED") counts.missed += value;
      if (column == "FILTERED") counts.filtered += value;
      if (column == "UNWOUND") counts.unwound += value;
    }
  }
  return counts;
}

}  // namespace xprobe::testing
