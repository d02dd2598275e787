#pragma once

#include <string_view>

namespace loopguard::daemon {

// The dashboard page (daemon/dashboard/index.html), byte for byte, embedded at build time by
// cmake/embed_file.cmake. Static storage: the view is valid for the life of the program.
std::string_view dashboard_html();

}  // namespace loopguard::daemon
