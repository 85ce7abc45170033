#pragma once
// One HTTP GET of a byte range with libcurl, on a connection kept from earlier requests: what
// HttpByteSource retries. libcurl stays inside http_request.cpp.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace odbatch {

struct HttpRequest {
  std::string url;
  std::uint64_t first_byte = 0;
  // The last byte wanted; none: to the end of the file.
  std::optional<std::uint64_t> last_byte;
  std::chrono::milliseconds connect_timeout{0};
  // The whole request, connecting included; zero: unbounded (a sequential pass).
  std::chrono::milliseconds total_timeout{0};
  // A transfer that receives fewer than `stall_bytes` in any `stall_timeout` (waiting for the
  // headers included) has stalled and fails; zero: no such check.
  std::chrono::milliseconds stall_timeout{0};
  std::uint64_t stall_bytes = 1;
  // The file's size as opened: a response naming another total is of a changed file.
  std::optional<std::uint64_t> total_size;
  // The header whose value the response must carry unchanged ("ETag", "Last-Modified"), if any.
  std::string validator_header;
  std::string validator;
  // PEM certificates for HTTPS instead of the system's; empty: the system's.
  std::string ca_file;
};

struct HttpResponse {
  enum class Outcome {
    complete,   // 206 with the range asked for, and its whole body delivered
    stopped,    // the body consumer returned false
    transient,  // worth another attempt: connection failures, stalls, 5xx, 429, short bodies
    permanent,  // another attempt gives the same: 4xx, no range support, a changed file, a bad URL
  };
  Outcome outcome = Outcome::permanent;
  // Why it failed, as messages show it: "HTTP 500", "Couldn't connect to server (curl 7)".
  std::string failure;
  long status = 0;
  // The file's size from Content-Range ("bytes 0-0/SIZE", or "bytes */SIZE" on a 416).
  std::optional<std::uint64_t> total_size;
  // Content-Length, when the server sent one.
  std::optional<std::uint64_t> content_length;
  // Where the response came from: "address:port" of the server and the URL after redirects.
  std::string server_address;
  std::string effective_url;
  std::string etag;
  std::string last_modified;
  // Body bytes received (delivered to the consumer only with a 206).
  std::uint64_t body_bytes = 0;
};

// Sends the request and hands the body of a 206 response to `consume` as it arrives; what
// `consume` throws is thrown from here. Thread-safe.
HttpResponse perform_http_request(const HttpRequest& request,
                                  const std::function<bool(std::string_view)>& consume);

}  // namespace odbatch
