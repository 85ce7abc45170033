#include "http_request.hpp"

#include <curl/curl.h>

#include <charconv>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace odbatch {
namespace {

// Easy handles keep their connections open after a request, so handing them from request to
// request reuses connections (and TLS sessions) to the same server.
class CurlHandlePool {
 public:
  static CurlHandlePool& instance() {
    static CurlHandlePool pool;
    return pool;
  }

  CURL* acquire() {
    {
      std::lock_guard lock(mutex_);
      if (!idle_.empty()) {
        CURL* handle = idle_.back();
        idle_.pop_back();
        return handle;
      }
    }
    CURL* handle = curl_easy_init();
    if (handle == nullptr) throw std::runtime_error("curl_easy_init failed");
    return handle;
  }

  void release(CURL* handle) {
    {
      std::lock_guard lock(mutex_);
      if (idle_.size() < kMaxIdleHandles) {
        idle_.push_back(handle);
        return;
      }
    }
    curl_easy_cleanup(handle);
  }

 private:
  static constexpr std::size_t kMaxIdleHandles = 64;

  CurlHandlePool() {
    // Thread-safe since curl 7.84 but still done once, before any handle exists.
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      throw std::runtime_error("curl_global_init failed");
    }
  }
  ~CurlHandlePool() {
    for (CURL* handle : idle_) curl_easy_cleanup(handle);
    curl_global_cleanup();
  }

  std::mutex mutex_;
  std::vector<CURL*> idle_;
};

struct HandleLease {
  CURL* handle = CurlHandlePool::instance().acquire();
  HandleLease() = default;
  HandleLease(const HandleLease&) = delete;
  HandleLease& operator=(const HandleLease&) = delete;
  ~HandleLease() {
    // Drops the options, which point into the finished request (its error buffer, its
    // callbacks' state); the connections stay.
    curl_easy_reset(handle);
    CurlHandlePool::instance().release(handle);
  }
};

using Clock = std::chrono::steady_clock;

constexpr long kReceiveBufferBytes = 256 * 1024;

// The state one transfer's callbacks share.
struct Transfer {
  CURL* handle = nullptr;
  const HttpRequest* request = nullptr;
  const std::function<bool(std::string_view)>* consume = nullptr;
  HttpResponse response;
  bool headers_examined = false;
  bool deliver_body = false;
  bool consumer_stopped = false;
  std::exception_ptr consumer_error;
  // Set when the headers show the response cannot be used (outcome and failure already set).
  bool rejected = false;
  bool stalled = false;
  // The stall detector's window: when it began and the bytes received by then.
  Clock::time_point window_start = Clock::now();
  curl_off_t window_start_bytes = 0;
};

std::string header_value(CURL* handle, const char* name) {
  curl_header* header = nullptr;
  if (curl_easy_header(handle, name, 0, CURLH_HEADER, -1, &header) != CURLHE_OK) return {};
  return header->value;
}

std::optional<std::uint64_t> parse_number(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// "bytes FIRST-LAST/TOTAL" or "bytes */TOTAL"; TOTAL may be "*" (unknown).
struct ContentRange {
  std::optional<std::uint64_t> first;
  std::optional<std::uint64_t> total;
};

ContentRange parse_content_range(std::string_view text) {
  ContentRange range;
  if (!text.starts_with("bytes ")) return range;
  text.remove_prefix(6);
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) return range;
  range.total = parse_number(text.substr(slash + 1));
  const auto dash = text.find('-');
  if (dash != std::string_view::npos && dash < slash)
    range.first = parse_number(text.substr(0, dash));
  return range;
}

void reject(Transfer& transfer, HttpResponse::Outcome outcome, std::string failure) {
  transfer.rejected = true;
  transfer.response.outcome = outcome;
  transfer.response.failure = std::move(failure);
}

bool is_transient_status(long status) {
  return status >= 500 || status == 429 || status == 408;
}

// Reads the status and headers once they are complete: whether the body is the range asked for,
// of the file as it was opened.
void examine_headers(Transfer& transfer) {
  if (transfer.headers_examined) return;
  transfer.headers_examined = true;
  HttpResponse& response = transfer.response;
  const HttpRequest& request = *transfer.request;
  curl_easy_getinfo(transfer.handle, CURLINFO_RESPONSE_CODE, &response.status);
  const char* address = nullptr;
  long port = 0;
  const char* effective_url = nullptr;
  curl_easy_getinfo(transfer.handle, CURLINFO_PRIMARY_IP, &address);
  curl_easy_getinfo(transfer.handle, CURLINFO_PRIMARY_PORT, &port);
  curl_easy_getinfo(transfer.handle, CURLINFO_EFFECTIVE_URL, &effective_url);
  if (address != nullptr) {
    const std::string ip = address;
    response.server_address =
        (ip.find(':') != std::string::npos ? "[" + ip + "]" : ip) + ":" + std::to_string(port);
  }
  if (effective_url != nullptr) response.effective_url = effective_url;
  response.etag = header_value(transfer.handle, "ETag");
  response.last_modified = header_value(transfer.handle, "Last-Modified");
  const ContentRange range = parse_content_range(header_value(transfer.handle, "Content-Range"));
  response.total_size = range.total;
  curl_off_t content_length = -1;
  curl_easy_getinfo(transfer.handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &content_length);
  if (content_length >= 0) response.content_length = static_cast<std::uint64_t>(content_length);
  using Outcome = HttpResponse::Outcome;
  if (response.status == 206) {
    if (range.first != request.first_byte) {
      reject(transfer, Outcome::permanent,
             "the server sent another range (Content-Range '" +
                 header_value(transfer.handle, "Content-Range") + "')");
      return;
    }
    if (request.total_size && range.total != request.total_size) {
      reject(transfer, Outcome::permanent,
             "the file changed on the server since it was opened (Content-Range '" +
                 header_value(transfer.handle, "Content-Range") + "', size was " +
                 std::to_string(*request.total_size) + ")");
      return;
    }
    if (!request.validator_header.empty()) {
      const std::string now = header_value(transfer.handle, request.validator_header.c_str());
      if (now != request.validator) {
        reject(transfer, Outcome::permanent,
               "the file changed on the server since it was opened (" + request.validator_header +
                   " was " + request.validator + ", now " + (now.empty() ? "none" : now) + ")");
        return;
      }
    }
    transfer.deliver_body = true;
    return;
  }
  if (response.status == 200) {
    reject(transfer, Outcome::permanent,
           "the server does not honour byte ranges (HTTP 200 instead of 206)");
    return;
  }
  reject(transfer, is_transient_status(response.status) ? Outcome::transient : Outcome::permanent,
         "HTTP " + std::to_string(response.status));
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto& transfer = *static_cast<Transfer*>(user);
  const std::size_t bytes = size * count;
  examine_headers(transfer);
  // An error response's body is not wanted: returning short aborts the transfer.
  if (!transfer.deliver_body) return 0;
  transfer.response.body_bytes += bytes;
  // An exception must not unwind through libcurl's C frames: it is kept and thrown afterwards.
  try {
    if (!(*transfer.consume)(std::string_view(data, bytes))) {
      transfer.consumer_stopped = true;
      return 0;
    }
  } catch (...) {
    transfer.consumer_error = std::current_exception();
    return 0;
  }
  return bytes;
}

// Called often during the transfer (about once a second when nothing arrives): fails it when
// fewer than stall_bytes arrived within the last stall_timeout.
int on_progress(void* user, curl_off_t, curl_off_t received, curl_off_t, curl_off_t) {
  auto& transfer = *static_cast<Transfer*>(user);
  const auto limit = transfer.request->stall_timeout;
  const auto now = Clock::now();
  if (limit.count() <= 0 || now - transfer.window_start < limit) return 0;
  if (static_cast<std::uint64_t>(received - transfer.window_start_bytes) <
      transfer.request->stall_bytes) {
    transfer.stalled = true;
    return 1;
  }
  transfer.window_start = now;
  transfer.window_start_bytes = received;
  return 0;
}

bool is_transient_curl_error(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_HTTP2:
    case CURLE_PARTIAL_FILE:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

std::string range_header(const HttpRequest& request) {
  std::string range = std::to_string(request.first_byte) + "-";
  if (request.last_byte) range += std::to_string(*request.last_byte);
  return range;
}

void set_options(CURL* handle, const HttpRequest& request, const std::string& range,
                 Transfer& transfer, char* error_buffer) {
  curl_easy_setopt(handle, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(handle, CURLOPT_MAXREDIRS, 5L);
  curl_easy_setopt(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(handle, CURLOPT_RANGE, range.c_str());
  curl_easy_setopt(handle, CURLOPT_USERAGENT, "odbatch");
  // Fewer, larger body callbacks than curl's 16 KiB default: blocks are 1 MiB.
  curl_easy_setopt(handle, CURLOPT_BUFFERSIZE, kReceiveBufferBytes);
  // Worker threads: no signals for DNS timeouts.
  curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(handle, CURLOPT_XFERINFODATA, &transfer);
  if (!request.ca_file.empty()) curl_easy_setopt(handle, CURLOPT_CAINFO, request.ca_file.c_str());
  if (request.total_timeout.count() > 0) {
    curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, static_cast<long>(request.total_timeout.count()));
  }
  if (request.connect_timeout.count() > 0) {
    curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(request.connect_timeout.count()));
  }
}

}  // namespace

HttpResponse perform_http_request(const HttpRequest& request,
                                  const std::function<bool(std::string_view)>& consume) {
  HandleLease lease;
  Transfer transfer;
  transfer.handle = lease.handle;
  transfer.request = &request;
  transfer.consume = &consume;
  const std::string range = range_header(request);
  char error_buffer[CURL_ERROR_SIZE] = {};
  set_options(lease.handle, request, range, transfer, error_buffer);
  const CURLcode code = curl_easy_perform(lease.handle);
  using Outcome = HttpResponse::Outcome;
  HttpResponse& response = transfer.response;
  if (transfer.consumer_error) std::rethrow_exception(transfer.consumer_error);
  if (transfer.consumer_stopped) {
    response.outcome = Outcome::stopped;
    return response;
  }
  if (transfer.stalled) {
    response.outcome = Outcome::transient;
    response.failure = "stalled: fewer than " + std::to_string(request.stall_bytes) + " bytes in " +
                       std::to_string(request.stall_timeout.count()) + " ms";
    return response;
  }
  if (code == CURLE_OK || transfer.rejected) examine_headers(transfer);
  if (transfer.rejected) return response;
  if (code != CURLE_OK) {
    response.outcome = is_transient_curl_error(code) ? Outcome::transient : Outcome::permanent;
    response.failure =
        std::string(error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code)) + " (curl " +
        std::to_string(static_cast<int>(code)) + ")";
    return response;
  }
  const std::optional<std::uint64_t> expected =
      request.last_byte     ? std::optional(*request.last_byte - request.first_byte + 1)
      : response.total_size ? std::optional(*response.total_size - request.first_byte)
                            : std::nullopt;
  if (expected && response.body_bytes != *expected) {
    response.outcome = Outcome::transient;
    response.failure = "body of " + std::to_string(response.body_bytes) + " bytes instead of " +
                       std::to_string(*expected);
    return response;
  }
  response.outcome = Outcome::complete;
  return response;
}

}  // namespace odbatch
