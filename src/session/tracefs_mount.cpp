#define FUSE_USE_VERSION 31
#include "session/tracefs_mount.h"

#include <fuse.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "trace/ftrace/ftrace_formatter.h"

namespace xprobe::session {

struct TracefsMount::Internals {
  ControlCore& core;
  EventBuffer& events;
  bool irq_info;
  unsigned cpus;
  std::atomic<bool> stopping{false};
  std::mutex log_mutex;
  std::string error_log;
};

namespace {

using Internals = TracefsMount::Internals;
using Verb = ControlRequest::Verb;

Internals& internals() { return *static_cast<Internals*>(fuse_get_context()->private_data); }

enum class Node {
  None,
  Root,
  EventsDir,
  GroupDir,
  EventDir,
  UprobeEvents,
  ErrorLog,
  Trace,
  TracePipe,
  Profile,
  TracingOn,
  BufferSize,
  AllEnable,
  GroupEnable,
  EventEnable,
  Format,
  Filter,
  Trigger,
  Hist,
};

struct Where {
  Node node = Node::None;
  std::string group, event;
};

// GRP -> EVENT -> enabled, from the session.
using EventTree = std::map<std::string, std::map<std::string, bool>>;

EventTree event_tree(Internals& in) {
  EventTree tree;
  const ControlReply reply = in.core.call({Verb::Events, {}});
  std::istringstream lines(reply.text);
  std::string name;
  int enabled = 0;
  while (lines >> name >> enabled) {
    const size_t slash = name.find('/');
    if (slash != std::string::npos) tree[name.substr(0, slash)][name.substr(slash + 1)] = enabled != 0;
  }
  return tree;
}

std::vector<std::string> split_path(const char* path) {
  std::vector<std::string> parts;
  std::string part;
  for (const char* p = path; *p != '\0'; ++p) {
    if (*p == '/') {
      if (!part.empty()) parts.push_back(std::move(part));
      part.clear();
    } else {
      part += *p;
    }
  }
  if (!part.empty()) parts.push_back(std::move(part));
  return parts;
}

const std::map<std::string, Node>& top_files() {
  static const std::map<std::string, Node> files = {
      {"uprobe_events", Node::UprobeEvents}, {"error_log", Node::ErrorLog},     {"trace", Node::Trace},
      {"trace_pipe", Node::TracePipe},       {"uprobe_profile", Node::Profile}, {"tracing_on", Node::TracingOn},
      {"buffer_size_kb", Node::BufferSize},
  };
  return files;
}

Where classify(const char* path, const EventTree* tree) {
  const std::vector<std::string> parts = split_path(path);
  Where where;
  if (parts.empty()) return {Node::Root, {}, {}};
  if (parts.size() == 1) {
    if (parts[0] == "events") return {Node::EventsDir, {}, {}};
    auto file = top_files().find(parts[0]);
    return {file != top_files().end() ? file->second : Node::None, {}, {}};
  }
  if (parts[0] != "events" || tree == nullptr) return where;
  if (parts.size() == 2 && parts[1] == "enable") return {Node::AllEnable, {}, {}};
  auto group = tree->find(parts[1]);
  if (group == tree->end()) return where;
  if (parts.size() == 2) return {Node::GroupDir, parts[1], {}};
  if (parts.size() == 3 && parts[2] == "enable") return {Node::GroupEnable, parts[1], {}};
  if (!group->second.contains(parts[2])) return where;
  if (parts.size() == 3) return {Node::EventDir, parts[1], parts[2]};
  if (parts.size() != 4) return where;
  if (parts[3] == "enable") return {Node::EventEnable, parts[1], parts[2]};
  if (parts[3] == "format") return {Node::Format, parts[1], parts[2]};
  if (parts[3] == "filter") return {Node::Filter, parts[1], parts[2]};
  if (parts[3] == "trigger") return {Node::Trigger, parts[1], parts[2]};
  if (parts[3] == "hist") return {Node::Hist, parts[1], parts[2]};
  return where;
}

bool needs_tree(const char* path) { return std::strncmp(path, "/events/", 8) == 0; }

Where locate(const char* path) {
  if (!needs_tree(path)) return classify(path, nullptr);
  const EventTree tree = event_tree(internals());
  return classify(path, &tree);
}

// "0", "1", or "X" for a mix (the kernel's events/.../enable).
std::string enable_text(const EventTree& tree, const std::string& group, const std::string& event) {
  bool any_on = false, any_off = false;
  for (const auto& [g, events] : tree) {
    if (!group.empty() && g != group) continue;
    for (const auto& [e, on] : events) {
      if (!event.empty() && e != event) continue;
      (on ? any_on : any_off) = true;
    }
  }
  return any_on && any_off ? "X\n" : any_on ? "1\n" : "0\n";
}

// What an open file reads: made at open, so that a reader sees one consistent state.
struct OpenFile {
  Where where;
  std::string content;
  std::string unread;  // trace_pipe: consumed from the buffer, not yet read
};

int file_content(Internals& in, const Where& where, std::string& out) {
  switch (where.node) {
    case Node::UprobeEvents: out = in.core.call({Verb::List, {}}).text; return 0;
    case Node::Profile: out = in.core.call({Verb::Stats, {}}).text; return 0;
    case Node::ErrorLog: {
      std::lock_guard lock(in.log_mutex);
      out = in.error_log;
      return 0;
    }
    case Node::Trace: {
      (void)in.core.call({Verb::Drain, {}});  // what the agents recorded until now is in the buffer
      const EventBuffer::Snapshot snapshot = in.events.snapshot_with_counts();
      trace::FtraceOptions options;
      options.irq_info = in.irq_info;
      out = trace::ftrace_header(snapshot.entries, snapshot.written, in.cpus, options) + snapshot.text;
      return 0;
    }
    case Node::TracingOn: out = in.events.recording() ? "1\n" : "0\n"; return 0;
    case Node::BufferSize: out = fmt::format("{}\n", in.events.capacity() / 1024); return 0;
    case Node::AllEnable:
    case Node::GroupEnable:
    case Node::EventEnable: out = enable_text(event_tree(in), where.group, where.event); return 0;
    case Node::Format:
    case Node::Filter:
    case Node::Trigger:
    case Node::Hist: {
      const Verb verb = where.node == Node::Format    ? Verb::Format
                        : where.node == Node::Filter  ? Verb::Filter
                        : where.node == Node::Trigger ? Verb::Trigger
                                                      : Verb::Hist;
      const ControlReply reply = in.core.call({verb, where.group + "/" + where.event});
      if (reply.error != 0) return -reply.error;
      out = reply.text;
      return 0;
    }
    default: return 0;
  }
}

int on_getattr(const char* path, struct stat* st, struct fuse_file_info*) {
  std::memset(st, 0, sizeof *st);
  const Where where = locate(path);
  st->st_uid = ::getuid();
  st->st_gid = ::getgid();
  st->st_nlink = 1;
  switch (where.node) {
    case Node::None: return -ENOENT;
    case Node::Root:
    case Node::EventsDir:
    case Node::GroupDir:
    case Node::EventDir:
      st->st_mode = S_IFDIR | 0755;
      st->st_nlink = 2;
      return 0;
    case Node::TracePipe:
    case Node::Profile:
    case Node::Format:
    case Node::Hist: st->st_mode = S_IFREG | 0444; return 0;
    default: st->st_mode = S_IFREG | 0644; return 0;
  }
}

int on_readdir(const char* path, void* buffer, fuse_fill_dir_t fill, off_t, struct fuse_file_info*,
               enum fuse_readdir_flags) {
  const EventTree tree = event_tree(internals());
  const Where where = classify(path, &tree);
  auto add = [&](const std::string& name) { fill(buffer, name.c_str(), nullptr, 0, static_cast<fuse_fill_dir_flags>(0)); };
  add(".");
  add("..");
  switch (where.node) {
    case Node::Root:
      add("events");
      for (const auto& [name, node] : top_files()) add(name);
      return 0;
    case Node::EventsDir:
      add("enable");
      for (const auto& [group, events] : tree) add(group);
      return 0;
    case Node::GroupDir:
      add("enable");
      for (const auto& [event, on] : tree.at(where.group)) add(event);
      return 0;
    case Node::EventDir:
      for (const char* name : {"enable", "format", "filter", "hist", "trigger"}) add(name);
      return 0;
    default: return -ENOTDIR;
  }
}

// `> FILE`: the kernel's truncation of uprobe_events removes every event, of trace clears it.
int truncate_file(Internals& in, Node node) {
  switch (node) {
    case Node::UprobeEvents: return -in.core.call({Verb::Clear, {}}).error;
    case Node::Trace: in.events.clear(); return 0;
    case Node::ErrorLog: {
      std::lock_guard lock(in.log_mutex);
      in.error_log.clear();
      return 0;
    }
    case Node::None: return -ENOENT;
    default: return 0;
  }
}

int on_open(const char* path, struct fuse_file_info* fi) {
  Internals& in = internals();
  auto file = std::make_unique<OpenFile>();
  file->where = locate(path);
  if (file->where.node == Node::None) return -ENOENT;
  const bool reads = (fi->flags & O_ACCMODE) != O_WRONLY;
  const bool writes = (fi->flags & O_ACCMODE) != O_RDONLY;
  const Node node = file->where.node;
  if (writes && (node == Node::TracePipe || node == Node::Profile || node == Node::Format || node == Node::Hist))
    return -EACCES;
  // `> FILE` (libfuse passes O_TRUNC to open: atomic_o_trunc): the truncation's meaning first.
  if ((fi->flags & O_TRUNC) != 0) {
    if (int failed = truncate_file(in, file->where.node); failed != 0) return failed;
  }
  if (reads && node != Node::TracePipe) {
    if (int failed = file_content(in, file->where, file->content); failed != 0) return failed;
  }
  fi->direct_io = 1;  // no page cache: every read asks, as tracefs's files are generated
  // trace_pipe ignores the position; a seek (head puts back what it read too much) is harmless.
  fi->fh = reinterpret_cast<uint64_t>(file.release());
  return 0;
}

int on_release(const char*, struct fuse_file_info* fi) {
  delete reinterpret_cast<OpenFile*>(fi->fh);
  return 0;
}

int on_read(const char*, char* out, size_t size, off_t offset, struct fuse_file_info* fi) {
  Internals& in = internals();
  OpenFile& file = *reinterpret_cast<OpenFile*>(fi->fh);
  if (file.where.node == Node::TracePipe) {
    if (file.unread.empty()) {
      if (in.events.empty()) (void)in.core.call({Verb::Drain, {}});
      // A reader interrupted (Ctrl-C, killed) or a session ending stops waiting.
      file.unread = in.events.take([&] { return in.stopping.load() || fuse_interrupted() != 0; });
      if (file.unread.empty()) return in.stopping ? 0 : -EINTR;
    }
    const size_t n = std::min(size, file.unread.size());
    std::memcpy(out, file.unread.data(), n);
    file.unread.erase(0, n);
    return static_cast<int>(n);
  }
  if (offset < 0 || static_cast<size_t>(offset) >= file.content.size()) return 0;
  const size_t n = std::min(size, file.content.size() - static_cast<size_t>(offset));
  std::memcpy(out, file.content.data() + offset, n);
  return static_cast<int>(n);
}

std::string trimmed(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  return std::string(text);
}

int write_enable(Internals& in, const Where& where, const std::string& value) {
  if (value != "0" && value != "1") return -EINVAL;
  std::string target;
  if (where.node == Node::GroupEnable) target = where.group + "/";
  if (where.node == Node::EventEnable) target = where.group + "/" + where.event;
  const ControlReply reply = in.core.call({value == "1" ? Verb::Enable : Verb::Disable, target});
  return -reply.error;
}

int on_write(const char*, const char* data, size_t size, off_t, struct fuse_file_info* fi) {
  Internals& in = internals();
  OpenFile& file = *reinterpret_cast<OpenFile*>(fi->fh);
  const std::string_view text(data, size);
  const std::string value = trimmed(text);
  int failed = 0;
  switch (file.where.node) {
    case Node::UprobeEvents: {
      // Line by line, as the kernel: the first refused line fails the write.
      std::istringstream lines{std::string(text)};
      for (std::string line; std::getline(lines, line);) {
        line = trimmed(line.substr(0, line.find('#')));
        if (line.empty()) continue;
        const ControlReply reply = in.core.call({Verb::Add, line});
        if (reply.error == 0) continue;
        if (!reply.error_log.empty()) {
          std::lock_guard lock(in.log_mutex);
          in.error_log += reply.error_log;
        }
        return -reply.error;
      }
      break;
    }
    case Node::AllEnable:
    case Node::GroupEnable:
    case Node::EventEnable: failed = write_enable(in, file.where, value); break;
    case Node::Filter: {
      const ControlReply reply = in.core.call({Verb::SetFilter, file.where.group + "/" + file.where.event + " " + value});
      if (!reply.error_log.empty()) {
        std::lock_guard lock(in.log_mutex);
        in.error_log += reply.error_log;
      }
      failed = -reply.error;
      break;
    }
    case Node::Trigger: {
      const ControlReply reply = in.core.call({Verb::SetTrigger, file.where.group + "/" + file.where.event + " " + value});
      if (reply.error != 0 && !reply.text.empty()) {
        std::lock_guard lock(in.log_mutex);
        in.error_log += reply.text;
      }
      failed = -reply.error;
      break;
    }
    case Node::Trace: in.events.clear(); break;
    case Node::ErrorLog:
      if (!value.empty()) return -EINVAL;
      break;
    case Node::TracingOn:
      if (value != "0" && value != "1") return -EINVAL;
      in.events.set_recording(value == "1");
      break;
    case Node::BufferSize: {
      char* end = nullptr;
      const unsigned long kb = std::strtoul(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || kb == 0 || kb > (1ul << 22)) return -EINVAL;
      in.events.set_capacity(kb * 1024);
      break;
    }
    default: return -EACCES;
  }
  return failed != 0 ? failed : static_cast<int>(size);
}

int on_truncate(const char* path, off_t, struct fuse_file_info*) { return truncate_file(internals(), locate(path).node); }

void* on_init(struct fuse_conn_info*, struct fuse_config* config) {
  config->direct_io = 1;
  config->intr = 1;  // a blocked trace_pipe read ends when its reader is interrupted
  config->entry_timeout = 0;
  config->attr_timeout = 0;
  config->negative_timeout = 0;
  return fuse_get_context()->private_data;
}

struct fuse_operations operations() {
  struct fuse_operations ops {};
  ops.getattr = on_getattr;
  ops.readdir = on_readdir;
  ops.open = on_open;
  ops.release = on_release;
  ops.read = on_read;
  ops.write = on_write;
  ops.truncate = on_truncate;
  ops.init = on_init;
  return ops;
}

}  // namespace

Result<std::unique_ptr<TracefsMount>> TracefsMount::mount(const std::string& directory, ControlCore& core,
                                                          EventBuffer& events, bool irq_info, unsigned cpus) {
  struct stat info {};
  if (::stat(directory.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    return make_error(fmt::format("--control {}: not a directory", directory));
  std::unique_ptr<TracefsMount> mounted(new TracefsMount);
  mounted->internals_.reset(new Internals{core, events, irq_info, cpus, {}, {}, {}});
  struct fuse_args args = FUSE_ARGS_INIT(0, nullptr);
  // auto_unmount: fusermount3 takes the mount away when xprobe's connection closes, even
  // after SIGKILL; default_permissions: the kernel checks the modes getattr shows.
  for (const char* arg : {"xprobe", "-o", "auto_unmount,default_permissions,fsname=xprobe,subtype=tracefs"})
    fuse_opt_add_arg(&args, arg);
  const struct fuse_operations ops = operations();
  mounted->fuse_ = fuse_new(&args, &ops, sizeof ops, mounted->internals_.get());
  fuse_opt_free_args(&args);
  if (mounted->fuse_ == nullptr) return make_error("--control: libfuse refused its options");
  if (fuse_mount(mounted->fuse_, directory.c_str()) != 0) {
    fuse_destroy(mounted->fuse_);
    mounted->fuse_ = nullptr;
    return make_error(fmt::format("--control {}: cannot mount (is /dev/fuse there, and fusermount3?)", directory));
  }
  struct fuse* fuse = mounted->fuse_;
  // libfuse's worker threads inherit this mask: every signal blocked (they are the tracer's).
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  mounted->loop_ = std::thread([fuse] { fuse_loop_mt(fuse, 0); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return mounted;
}

TracefsMount::~TracefsMount() {
  if (fuse_ == nullptr) return;
  internals_->stopping = true;
  fuse_exit(fuse_);
  // Lazily if still in use (a shell inside it): the mount goes now, its users see it gone.
  fuse_unmount(fuse_);
  if (loop_.joinable()) loop_.join();
  fuse_destroy(fuse_);
}

}  // namespace xprobe::session
