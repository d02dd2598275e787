#include "progress_line.hpp"

namespace loopguard::cli {
namespace {

// Carriage return, then erase to the end of the line (ECMA-48 EL).
constexpr const char* kErase = "\r\x1b[K";

}  // namespace

std::string progress_line::update(std::size_t files_done, std::uint64_t detections,
                                  clock::time_point now) {
  if (!on_ || (drawn_ && now - last_ < kInterval)) return {};
  drawn_ = true;
  last_ = now;
  text_ = "replay: " + std::to_string(files_done) + "/" + std::to_string(total_) + " files, " +
          std::to_string(detections) + " detections";
  shown_ = true;
  return kErase + text_;
}

std::string progress_line::clear() {
  if (!shown_) return {};
  shown_ = false;
  return kErase;
}

std::string progress_line::restore() {
  if (!on_ || shown_ || text_.empty()) return {};
  shown_ = true;
  return text_;
}

}  // namespace loopguard::cli
