#include "trace/ctf/ctf_writer.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <string_view>
#include <vector>

#include "trace/ctf/ctf_packet.h"
#include "trace/ctf/tsdl_metadata.h"

namespace xprobe::trace {
namespace {

constexpr std::string_view kStreamPrefix = "stream_";

bool is_trace_file(std::string_view name) {
  if (name == "metadata") return true;
  if (name.substr(0, kStreamPrefix.size()) != kStreamPrefix || name.size() == kStreamPrefix.size()) return false;
  for (char c : name.substr(kStreamPrefix.size()))
    if (c < '0' || c > '9') return false;
  return true;
}

// Writes all of `bytes`; false with errno set when the file took less.
bool write_all(int fd, const uint8_t* bytes, size_t size) {
  while (size != 0) {
    const ssize_t n = ::write(fd, bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return false;
    }
    bytes += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

TraceUuid random_uuid() {
  TraceUuid uuid{};
  size_t got = 0;
  while (got < uuid.size()) {
    const ssize_t n = getrandom(uuid.data() + got, uuid.size() - got, 0);
    if (n <= 0 && errno != EINTR) break;
    if (n > 0) got += static_cast<size_t>(n);
  }
  uuid[6] = static_cast<uint8_t>((uuid[6] & 0x0f) | 0x40);  // version 4 (random)
  uuid[8] = static_cast<uint8_t>((uuid[8] & 0x3f) | 0x80);  // the RFC 4122 variant
  return uuid;
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

class CtfWriter final : public EventWriter {
 public:
  explicit CtfWriter(const FormatContext& context)
      : context_(context), uuid_(random_uuid()), hostname_(host_name()) {}
  ~CtfWriter() override {
    for (auto& [cpu, stream] : streams_)
      if (stream.fd >= 0) close(stream.fd);
  }

  std::string begin() override {
    write_metadata();  // what is known now; rewritten when probes come later
    return {};
  }

  void write(const EventRecord& record, std::string&) override {
    if (record.probe_id >= context_.catalog.size()) return;  // no class to declare it with
    Stream& stream = streams_[record.cpu];
    stream.packet.append(record.probe_id, context_.catalog[record.probe_id], record, pid_of(record));
    if (stream.packet.size() >= kCtfPacketBytes) write_packet(record.cpu, stream);
  }

  std::string end() override {
    for (auto& [cpu, stream] : streams_)
      if (!stream.packet.empty()) write_packet(cpu, stream);
    write_metadata();
    return {};
  }

  std::string failure() const override { return failure_; }

 private:
  struct Stream {
    int fd = -1;
    CtfPacket packet;
  };

  int32_t pid_of(const EventRecord& record) {
    auto [at, is_new] = pids_.try_emplace(record.tid, record.tid);
    if (is_new && context_.process_of)
      if (const auto process = context_.process_of(record.tid)) at->second = process->pid;
    return at->second;
  }

  std::string path(std::string_view name) const { return context_.directory + "/" + std::string(name); }

  void fail(std::string message) {
    if (failure_.empty()) failure_ = std::move(message);
  }

  void write_packet(uint32_t cpu, Stream& stream) {
    if (declared_ < context_.catalog.size()) write_metadata();
    if (stream.fd < 0) {
      const std::string file = path(fmt::format("{}{}", kStreamPrefix, cpu));
      stream.fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (stream.fd < 0) {
        fail(fmt::format("{}: cannot create: {}", file, std::strerror(errno)));
        (void)stream.packet.take(uuid_, cpu);
        return;
      }
    }
    const std::vector<uint8_t> bytes = stream.packet.take(uuid_, cpu);
    if (!write_all(stream.fd, bytes.data(), bytes.size()))
      fail(fmt::format("{}{}: a packet was not written: {}", kStreamPrefix, cpu, std::strerror(errno)));
  }

  void write_metadata() {
    const std::string text = tsdl_metadata(context_.catalog, uuid_, hostname_);
    const std::string file = path("metadata"), temporary = path("metadata.new");
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    bool written = fd >= 0 && write_all(fd, reinterpret_cast<const uint8_t*>(text.data()), text.size());
    const int error = errno;
    if (fd >= 0) close(fd);
    written = written && std::rename(temporary.c_str(), file.c_str()) == 0;
    if (!written) {
      fail(fmt::format("{}: cannot write the trace's metadata: {}", file, std::strerror(fd < 0 ? error : errno)));
      return;
    }
    declared_ = context_.catalog.size();
  }

  FormatContext context_;
  TraceUuid uuid_;
  std::string hostname_;
  std::map<uint32_t, Stream> streams_;  // by CPU
  std::map<int32_t, int32_t> pids_;     // tid -> its process
  size_t declared_ = 0;                 // event classes the metadata on disk declares
  std::string failure_;
};

}  // namespace

Status prepare_ctf_directory(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return make_error(fmt::format("-o {}: {}", path, std::strerror(errno)));
    if (::mkdir(path.c_str(), 0755) != 0)
      return make_error(fmt::format("-o {}: cannot create the trace directory: {}", path, std::strerror(errno)));
    return {};
  }
  if (!S_ISDIR(st.st_mode))
    return make_error(fmt::format("-o {}: exists and is not a directory (a CTF trace is a directory: name a new one)", path));
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return make_error(fmt::format("-o {}: cannot read the directory: {}", path, std::strerror(errno)));
  std::vector<std::string> earlier;
  std::string foreign;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (is_trace_file(name) || name == "metadata.new") earlier.emplace_back(name);
    else if (foreign.empty()) foreign = name;
  }
  ::closedir(dir);
  if (!foreign.empty())
    return make_error(fmt::format("-o {}: the directory holds other files ({}): a CTF trace directory must hold only the "
                                  "trace (name a new or empty directory)",
                                  path, foreign));
  for (const std::string& name : earlier)  // an earlier trace written here: replaced
    if (::unlink((path + "/" + name).c_str()) != 0)
      return make_error(fmt::format("-o {}: cannot remove the earlier trace's {}: {}", path, name, std::strerror(errno)));
  return {};
}

std::unique_ptr<EventWriter> make_ctf_writer(const FormatContext& context) { return std::make_unique<CtfWriter>(context); }

}  // namespace xprobe::trace
