// protocol::parse on arbitrary text frames. Contract checked (protocol.hpp): parse never throws;
// an error's code and message are valid UTF-8; a parsed message serializes to valid UTF-8 JSON
// that parses back to the same type and serializes identically; an events message survives
// the binary form unchanged.
#include <cstddef>
#include <cstdint>
#include <variant>

#include "fuzz_support.hpp"
#include "loopguard/protocol.hpp"

namespace {

namespace protocol = loopguard::protocol;
namespace fuzz = loopguard::fuzz;

enum { inputs, parsed, refused, reparsed, binary_roundtrip, kCounters };
fuzz::counters<kCounters> counters("protocol_json",
                                   {"inputs", "parsed", "refused", "reparsed", "binary_roundtrip"});

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  counters.add(inputs);
  const std::string_view text = fuzz::as_view(data, size);
  const auto result = protocol::parse(text);
  if (!result) {
    counters.add(refused);
    const loopguard::status& err = result.error();
    LG_FUZZ_CHECK(!err.code().empty(), "a refusal carries no code");
    LG_FUZZ_CHECK(fuzz::valid_utf8(err.code()), "error code is not valid UTF-8");
    LG_FUZZ_CHECK(fuzz::valid_utf8(err.message()), "error message is not valid UTF-8");
    // The refusal itself goes on the wire as an error message.
    const std::string wire =
        protocol::serialize(protocol::message{protocol::error{err.code(), err.message()}});
    LG_FUZZ_CHECK(fuzz::valid_utf8(wire), "serialized error is not valid UTF-8");
    return 0;
  }
  counters.add(parsed);
  const protocol::message& msg = *result;

  const std::string out = protocol::serialize(msg);
  LG_FUZZ_CHECK(fuzz::valid_utf8(out), "serialize() output is not valid UTF-8");
  LG_FUZZ_CHECK(fuzz::parses_as_json(out), "serialize() output is not JSON");

  const auto again = protocol::parse(out);
  LG_FUZZ_CHECK(again.has_value(), "serialize() output does not parse again");
  LG_FUZZ_CHECK(again->index() == msg.index(), "re-parsed message has another type");
  LG_FUZZ_CHECK(protocol::serialize(*again) == out, "serialize(parse(serialize(m))) differs");
  counters.add(reparsed);

  if (const auto* batch = std::get_if<protocol::events>(&msg)) {
    const auto decoded = protocol::decode_binary(protocol::encode_binary(*batch));
    LG_FUZZ_CHECK(decoded.has_value(), "encode_binary() output of a parsed batch is refused");
    LG_FUZZ_CHECK(decoded->items == batch->items, "binary form changes a parsed batch");
    counters.add(binary_roundtrip);
  }
  return 0;
}
