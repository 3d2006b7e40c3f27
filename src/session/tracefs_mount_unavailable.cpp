// A build without libfuse3: --control is refused with the reason, the control socket remains.
#include "session/tracefs_mount.h"

namespace xprobe::session {

struct TracefsMount::Internals {};

Result<std::unique_ptr<TracefsMount>> TracefsMount::mount(const std::string& directory, ControlCore&, EventBuffer&,
                                                          bool, unsigned) {
  return make_error("--control " + directory + ": this xprobe was built without libfuse3 (use --ctl and xprobe ctl)");
}

TracefsMount::~TracefsMount() = default;

}  // namespace xprobe::session
