// loopguardd's offline commands that move swarms between stopped daemons' databases
// (docs/scaling.md, "Moving a swarm"; docs/operations.md, "Flags"). Each opens --db, does one
// thing, prints what it did on stdout and exits: 0 done, 1 refused or failed (the message on
// stderr names the file and what is wrong; a refused database or export file is not modified),
// 2 a usage error.
#pragma once

#include <string>

#include "server/daemon_config.hpp"

namespace loopguard::daemon {

struct move_command {
  std::string export_swarm;  // --export-swarm ID (with out)
  std::string out;           // --out FILE
  std::string import_file;   // --import-swarm FILE
  std::string remove_file;   // --remove-exported FILE
  std::string export_moved;  // --export-moved DIR (with the cluster flags)
  bool any() const {
    return !export_swarm.empty() || !out.empty() || !import_file.empty() || !remove_file.empty() ||
           !export_moved.empty();
  }
};

// Runs the one command `m` asks for against c.db, with c's rules; the exit code.
int run_move_command(const daemon_config& c, const move_command& m);

}  // namespace loopguard::daemon
