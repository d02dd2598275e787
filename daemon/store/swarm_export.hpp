// One swarm's whole state as a file, to move it between daemons' databases (docs/storage.md,
// "Swarm export files"; docs/scaling.md, "Moving a swarm"). Pure: bytes in, values out.
//
//   LOOPGUARD-SWARM-EXPORT 1\n            magic and format version
//   {"swarm": ..., "bytes": N, ...}\n      header: one JSON object (what the file holds)
//   N bytes of payload                      little-endian rows (the format in docs/storage.md)
//   xxh3 0123456789abcdef\n                 XXH3-64 of every byte before this line
//
// A decoder trusts nothing: a wrong magic or version, a truncated file, a checksum that does not
// match, a malformed payload, counts that disagree with the header, names that are not
// identifiers, worker ids out of range, numbers that are not finite, or a digest that differs
// from the rows' are each refused with a message saying what is wrong.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "loopguard/status.hpp"
#include "state/idle_tracker.hpp"
#include "state/sequence_ledger.hpp"
#include "state/state_rows.hpp"

namespace loopguard::daemon {

// Everything a daemon holds of one swarm. Rows carry the swarm's name; `sequences` and
// `expired` are its worker incarnations (sequence numbers, so that resent events still count
// once; and the incarnations retention expired).
struct swarm_export {
  swarm_row swarm;
  std::vector<worker_row> workers;            // by id, 0..n-1
  std::vector<fingerprint_row> fingerprints;  // by key
  std::vector<sequence_row> sequences;        // by identity, with their `seen`
  std::vector<expired_row> expired;           // by identity
  double seen = 0;                            // the swarm's last activity (wall clock); 0: unknown
  std::uint64_t digest = 0;                   // shared_economics_state::digest of the swarm's rows
};

// Informational header fields (not read back as state).
struct export_origin {
  std::string db;           // the database it was exported from
  std::string exported_at;  // UTC, ISO 8601
};

inline constexpr std::string_view kSwarmExportMagic = "LOOPGUARD-SWARM-EXPORT";
// The version written. 2: fingerprint blobs in the compact format of schema 8 (docs/storage.md);
// a version-1 file (blobs of the fixed format) is read as well.
inline constexpr int kSwarmExportVersion = 2;
inline constexpr int kSwarmExportOldestVersion = 1;

// The whole file. `e` is written in the order the struct documents (sort it first:
// sorted_export).
std::string encode_swarm_export(const swarm_export& e, const export_origin& origin);
// The payload alone, for comparing two exports of the same swarm.
std::string encode_swarm_payload(const swarm_export& e);
// Sorts every vector of `e` as swarm_export documents, and computes its digest.
void normalize(swarm_export& e);

// Decodes and checks a whole file; an error says what is wrong (without the file's name, which
// the caller adds).
result<swarm_export> decode_swarm_export(std::string_view file);

// Reads `path` and decodes it; errors start with the path.
result<swarm_export> read_swarm_export(const std::string& path);
// Writes `bytes` to `path` whole or not at all (a temporary file renamed over it); refuses to
// replace an existing file.
status write_swarm_export(const std::string& path, std::string_view bytes);

}  // namespace loopguard::daemon
