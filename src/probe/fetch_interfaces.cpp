#include "probe/fetch_interfaces.h"

#include <algorithm>

namespace xprobe::probe {

size_t MemoryReader::read_up_to(uint64_t address, std::span<uint8_t> out) {
  constexpr uint64_t kPage = 4096;
  size_t done = 0;
  while (done < out.size()) {
    const uint64_t here = address + done;
    const uint64_t to_page_end = kPage - (here % kPage);
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(to_page_end, out.size() - done));
    if (!read(here, out.subspan(done, chunk))) break;
    done += chunk;
  }
  return done;
}

}  // namespace xprobe::probe
