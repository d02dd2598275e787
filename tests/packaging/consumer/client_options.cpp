// The installed daemon client links: validate() accepts a good URL and names a bad one.
#include <cstdio>

#include <loopguard/daemon_client.hpp>

int main() {
  loopguard::client_options o;
  o.url = "ws://127.0.0.1:7070";
  o.swarm = "swarm";
  o.worker = "worker-1";
  const auto good = loopguard::validate(o);
  o.url = "http://nowhere";
  const auto bad = loopguard::validate(o);
  if (!good.ok() || bad.ok()) {
    std::fprintf(stderr, "validate: good url %s, bad url %s\n", good.ok() ? "ok" : "refused",
                 bad.ok() ? "accepted" : "refused");
    return 1;
  }
  std::printf("bad url: %s\n", bad.message().c_str());
  return 0;
}
