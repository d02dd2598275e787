// The embedded dashboard page: the bytes of daemon/dashboard/index.html, self-contained.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <string>

#include "server/dashboard_asset.hpp"

using loopguard::daemon::dashboard_html;

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string source_page() {
  const std::string path =
      std::string(LOOPGUARD_DAEMON_TEST_DIR) + "/../../daemon/dashboard/index.html";
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot open " << path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_SUITE("dashboard asset") {
  TEST_CASE("the embedded page is daemon/dashboard/index.html byte for byte") {
    CHECK(dashboard_html() == source_page());
  }

  TEST_CASE("it is an HTML document") {
    CHECK(lower(dashboard_html().substr(0, 15)) == "<!doctype html>");
  }

  TEST_CASE("it loads nothing from another host: no absolute or protocol-relative URL") {
    const std::string page = lower(dashboard_html());
    for (const char* needle :
         {"http://", "https://", "ws://", "wss://", "src=\"//", "href=\"//", "url(//", "@import"}) {
      CAPTURE(needle);
      CHECK(page.find(needle) == std::string::npos);
    }
  }

  TEST_CASE("it carries the hooks the browser test and the contract name") {
    const std::string_view page = dashboard_html();
    for (const char* id : {"id=\"status\"", "id=\"swarms\"", "id=\"top\"", "id=\"verdicts\"",
                           "id=\"workers\"", "data-fingerprint"}) {
      CAPTURE(id);
      CHECK(page.find(id) != std::string_view::npos);
    }
  }
}
