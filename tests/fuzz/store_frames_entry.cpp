// A client's bytes on a store connection, frame by frame as the server's session reads them.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "fuzz_contract.hpp"
#include "fuzz_entries.hpp"
#include "odbatch/store/store_wire.hpp"
#include "odbatch/store/tcp_store_server.hpp"

namespace odbatch::fuzz {
namespace {

constexpr std::string_view kTarget = "store_frames";

bool is_request(StoreOp op) {
  return op != StoreOp::ok && op != StoreOp::timed_out && op != StoreOp::failed;
}

}  // namespace

Outcome store_frames(Input input) {
  std::span stream(reinterpret_cast<const std::byte*>(input.data()), input.size());
  // The limits of a server with default options (odbatch store, rank 0's store): a hello's alone
  // until the connection has said hello.
  const StoreWireLimits hello_limits = store_hello_limits();
  const StoreWireLimits server_limits = TcpStoreServerOptions{}.limits;
  bool said_hello = false;
  Outcome outcome = Outcome::rejected;
  std::vector<std::byte> encoded;
  while (stream.size() >= kStoreLengthPrefixBytes) {
    const StoreWireLimits& limits = said_hello ? server_limits : hello_limits;
    const auto prefix = stream.first<kStoreLengthPrefixBytes>();
    std::uint32_t body_bytes = 0;
    if (const auto error = decode_store_frame_length(prefix, body_bytes, limits)) {
      expect(!error->message.empty(), kTarget, "a length error says what is wrong");
      return outcome;
    }
    expect(body_bytes >= kStoreBodyHeaderBytes && body_bytes <= limits.max_frame_bytes, kTarget,
           "an accepted frame length holds a body header and is within the limit");
    if (stream.size() - kStoreLengthPrefixBytes < body_bytes) return outcome;  // the server waits
    const auto frame = stream.first(kStoreLengthPrefixBytes + body_bytes);
    stream = stream.subspan(frame.size());

    StoreMessage message;
    if (const auto error =
            decode_store_body(frame.subspan(kStoreLengthPrefixBytes), message, limits)) {
      expect(!error->message.empty(), kTarget, "a body error says what is wrong");
      return outcome;
    }
    expect(!encode_store_frame(message, encoded, limits) && std::ranges::equal(encoded, frame),
           kTarget, "only a message's one encoding decodes (the re-encoding differs)");
    outcome = Outcome::accepted;
    // The server closes the connection on a first frame that is not a hello, and on a reply or a
    // second hello after it.
    if (said_hello ? !is_request(message.op) || message.op == StoreOp::hello
                   : message.op != StoreOp::hello)
      return outcome;
    said_hello = true;
  }
  return outcome;
}

}  // namespace odbatch::fuzz
