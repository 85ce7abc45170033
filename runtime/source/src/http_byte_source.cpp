#include "odbatch/source/http_byte_source.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <thread>

#include "http_request.hpp"
#include "odbatch/core/stable_hash.hpp"
#include "odbatch/log/logger.hpp"
#include "odbatch/source/dataset_error.hpp"
#include "remote_block_cache.hpp"

namespace odbatch {
namespace {

std::string bytes_text(std::uint64_t first, std::uint64_t last) {
  return "bytes " + std::to_string(first) + "-" + std::to_string(last);
}

std::string attempts_text(std::uint64_t attempts) {
  return std::to_string(attempts) + (attempts == 1 ? " attempt" : " attempts");
}

// 128 bits of URL, version and block size name a file's blocks in the cache: equal names, equal
// bytes.
std::string cache_key(const std::string& url, const std::string& version,
                      std::uint64_t block_bytes) {
  std::string key;
  for (std::uint64_t domain : {0x6f64626174636831ULL, 0x6f64626174636832ULL}) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx",
                  static_cast<unsigned long long>(
                      StableHasher(domain).add(url).add(version).add(block_bytes).digest()));
    key += hex;
  }
  return key;
}

// Cuts a sequential pass into the cache's aligned blocks, so that reads after it (a tar shard's
// members, after the pass that indexed it) find them.
class BlockCollector {
 public:
  BlockCollector(RemoteBlockCache* cache, const std::string& key, std::uint64_t block_bytes,
                 std::uint64_t file_size, std::uint64_t offset)
      : cache_(cache),
        key_(key),
        block_bytes_(block_bytes),
        file_size_(file_size),
        first_whole_block_start_((offset + block_bytes - 1) / block_bytes * block_bytes) {}

  // Takes the pass's bytes at `position`, in order.
  void take(std::string_view chunk, std::uint64_t position) {
    if (cache_ == nullptr) return;
    if (position < first_whole_block_start_) {
      const auto skipped =
          std::min<std::uint64_t>(chunk.size(), first_whole_block_start_ - position);
      chunk.remove_prefix(static_cast<std::size_t>(skipped));
      position += skipped;
    }
    while (!chunk.empty()) {
      const std::uint64_t block = position / block_bytes_;
      const std::uint64_t block_size = std::min(block_bytes_, file_size_ - block * block_bytes_);
      const auto taken = std::min<std::uint64_t>(chunk.size(), block_size - assembled_.size());
      assembled_.append(chunk.substr(0, static_cast<std::size_t>(taken)));
      chunk.remove_prefix(static_cast<std::size_t>(taken));
      position += taken;
      if (assembled_.size() == block_size) {
        cache_->insert(key_ + "-" + std::to_string(block), std::move(assembled_));
        assembled_.clear();
      }
    }
  }

 private:
  RemoteBlockCache* cache_;
  const std::string& key_;
  const std::uint64_t block_bytes_;
  const std::uint64_t file_size_;
  const std::uint64_t first_whole_block_start_;
  std::string assembled_;
};

// The scheme, the address the server was reached at and the path and query after redirects, so
// that "localhost" and "127.0.0.1", or a host's name in another case, name one server.
std::string url_identity(const HttpResponse& response, const std::string& url) {
  const std::string& reached = response.effective_url.empty() ? url : response.effective_url;
  const auto scheme_end = reached.find("://");
  if (scheme_end == std::string::npos || response.server_address.empty()) return reached;
  std::string scheme = reached.substr(0, scheme_end);
  std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto path = reached.find('/', scheme_end + 3);
  std::string rest = path == std::string::npos ? "/" : reached.substr(path);
  rest = rest.substr(0, rest.find('#'));
  return scheme + "://" + response.server_address + rest;
}

void check_options(const std::string& url, const RemoteSourceOptions& options) {
  const auto fail = [&](const std::string& why) {
    throw DatasetError(url + ": remote source options: " + why);
  };
  if (options.attempts < 1) fail("attempts must be at least 1");
  if (options.block_bytes < 1) fail("block_bytes must be at least 1");
  if (options.request_timeout.count() <= 0) fail("request_timeout must be positive");
  if (options.backoff.count() < 0) fail("backoff must not be negative");
}

}  // namespace

HttpByteSource::HttpByteSource(std::string url, RemoteSourceOptions options)
    : url_(std::move(url)), options_(std::move(options)) {
  check_options(url_, options_);
  // One byte: a 206 answer proves range support and names the size in Content-Range.
  HttpRequest probe;
  probe.url = url_;
  probe.first_byte = 0;
  probe.last_byte = 0;
  probe.connect_timeout = options_.request_timeout;
  probe.total_timeout = options_.request_timeout;
  probe.ca_file = options_.ca_file.string();
  HttpResponse opened;
  try {
    perform_with_retries(
        probe, "opening (bytes 0-0)", [] {}, [](std::string_view) { return true; }, &opened);
  } catch (const DatasetError&) {
    // An empty file has no byte 0: servers answer "416, Content-Range: bytes */0" or, as
    // nginx does, 200 with an empty body.
    const bool empty = (opened.status == 416 && opened.total_size == 0) ||
                       (opened.status == 200 && opened.content_length == 0);
    if (!empty) throw;
    opened.total_size = 0;
  }
  if (!opened.total_size) {
    throw DatasetError(url_ + ": the server names no size (Content-Range '*' total)");
  }
  size_ = *opened.total_size;
  if (!opened.etag.empty()) {
    validator_header_ = "ETag";
    validator_ = opened.etag;
    version_ = "http:" + std::to_string(size_) + ":etag:" + validator_;
  } else if (!opened.last_modified.empty()) {
    validator_header_ = "Last-Modified";
    validator_ = opened.last_modified;
    version_ = "http:" + std::to_string(size_) + ":last-modified:" + validator_;
  } else {
    version_ = "http:" + std::to_string(size_);
  }
  identity_ = url_identity(opened, url_) + " " + version_;
  if (options_.cache_bytes > 0) {
    // Without a validator another version of the same size could be served from disk.
    cache_ = RemoteBlockCache::shared(
        validator_.empty() ? std::filesystem::path() : options_.cache_dir, options_.cache_bytes);
    cache_key_ = cache_key(url_, version_, options_.block_bytes);
  }
}

HttpByteSource::~HttpByteSource() = default;

HttpTransferCounters HttpByteSource::counters() const {
  HttpTransferCounters counters;
  counters.requests = counters_.requests.load();
  counters.retries = counters_.retries.load();
  counters.bytes_fetched = counters_.bytes_fetched.load();
  counters.cache_hits = counters_.cache_hits.load();
  counters.cache_misses = counters_.cache_misses.load();
  counters.cached_bytes = cache_ ? cache_->cached_bytes() : 0;
  return counters;
}

void HttpByteSource::perform_with_retries(const HttpRequest& request, const std::string& what,
                                          const std::function<void()>& restart,
                                          const std::function<bool(std::string_view)>& consume,
                                          HttpResponse* last) const {
  using Outcome = HttpResponse::Outcome;
  for (std::uint32_t attempt = 1;; ++attempt) {
    restart();
    HttpResponse response = perform_http_request(request, consume);
    ++counters_.requests;
    counters_.bytes_fetched += response.body_bytes;
    if (last != nullptr) *last = response;
    if (response.outcome == Outcome::complete || response.outcome == Outcome::stopped) return;
    if (response.outcome == Outcome::permanent || attempt >= options_.attempts) {
      throw DatasetError(url_ + ": " + what + ": " + response.failure + " after " +
                         attempts_text(attempt));
    }
    ++counters_.retries;
    if (log_enabled(LogLevel::warn)) {
      Logger().warn(url_ + ": " + what + ": " + response.failure + "; retrying (attempt " +
                    std::to_string(attempt + 1) + " of " + std::to_string(options_.attempts) + ")");
    }
    std::this_thread::sleep_for(options_.backoff *
                                (std::uint64_t{1} << std::min(attempt - 1, 20u)));
  }
}

HttpRequest HttpByteSource::range_request(std::uint64_t first, std::uint64_t count) const {
  HttpRequest request;
  request.url = url_;
  request.first_byte = first;
  request.last_byte = first + count - 1;
  request.connect_timeout = options_.request_timeout;
  request.total_timeout = options_.request_timeout;
  request.total_size = size_;
  request.validator_header = validator_header_;
  request.validator = validator_;
  request.ca_file = options_.ca_file.string();
  return request;
}

void HttpByteSource::fetch_range_into(char* data, std::uint64_t first, std::uint64_t count) const {
  std::uint64_t filled = 0;
  perform_with_retries(
      range_request(first, count), bytes_text(first, first + count - 1), [&] { filled = 0; },
      [&](std::string_view chunk) {
        // A server sending more than asked is cut off at once, not read on.
        if (chunk.size() > count - filled) {
          throw DatasetError(url_ + ": " + bytes_text(first, first + count - 1) +
                             ": the server sent more than the " + std::to_string(count) +
                             " bytes asked for");
        }
        std::memcpy(data + filled, chunk.data(), chunk.size());
        filled += chunk.size();
        return true;
      });
}

std::size_t HttpByteSource::read_at(char* data, std::size_t length, std::uint64_t offset) const {
  if (offset >= size_ || length == 0) return 0;
  length = static_cast<std::size_t>(std::min<std::uint64_t>(length, size_ - offset));
  if (!cache_) {
    fetch_range_into(data, offset, length);
    return length;
  }
  const std::uint64_t block_bytes = options_.block_bytes;
  std::uint64_t position = offset;
  const std::uint64_t end = offset + length;
  while (position < end) {
    const std::uint64_t block = position / block_bytes;
    const std::uint64_t block_start = block * block_bytes;
    const std::uint64_t block_size = std::min(block_bytes, size_ - block_start);
    const std::uint64_t within = position - block_start;
    const std::uint64_t n = std::min(end - position, block_size - within);
    const bool hit = cache_->read(cache_key_ + "-" + std::to_string(block), block_size, within,
                                  static_cast<std::size_t>(n), data + (position - offset), [&] {
                                    std::string bytes(block_size, '\0');
                                    fetch_range_into(bytes.data(), block_start, block_size);
                                    return bytes;
                                  });
    ++(hit ? counters_.cache_hits : counters_.cache_misses);
    position += n;
  }
  return length;
}

void HttpByteSource::read_sequentially(std::uint64_t offset,
                                       const std::function<bool(std::string_view)>& consume) const {
  using Outcome = HttpResponse::Outcome;
  std::uint64_t position = offset;
  std::uint32_t failures_in_a_row = 0;
  std::uint64_t attempts = 0;
  BlockCollector collector(cache_.get(), cache_key_, options_.block_bytes, size_, offset);
  while (position < size_) {
    HttpRequest request = range_request(position, size_ - position);
    // One long GET, bounded not as a whole but by its pace: a block per request timeout.
    request.last_byte.reset();
    request.total_timeout = std::chrono::milliseconds(0);
    request.stall_timeout = options_.request_timeout;
    request.stall_bytes = options_.block_bytes;
    const std::uint64_t resumed_at = position;
    bool stopped = false;
    bool overran = false;
    const HttpResponse response = perform_http_request(request, [&](std::string_view chunk) {
      // A body longer than the file it declared is cut at the file's end, never read on.
      if (chunk.size() > size_ - position) {
        overran = true;
        chunk = chunk.substr(0, static_cast<std::size_t>(size_ - position));
      }
      const std::uint64_t chunk_start = position;
      position += chunk.size();
      if (!consume(chunk)) {
        stopped = true;
        return false;
      }
      collector.take(chunk, chunk_start);
      return !overran;
    });
    if (overran) {
      throw DatasetError(url_ + ": the server sent more than the " + std::to_string(size_) +
                         " bytes it declared for the file (sequential read from byte " +
                         std::to_string(resumed_at) + ")");
    }
    ++attempts;
    ++counters_.requests;
    counters_.bytes_fetched += response.body_bytes;
    if (response.outcome == Outcome::complete || stopped) return;
    // A failure after a block's progress starts the count of attempts again: a long pass over
    // a flaky connection resumes as often as it advances.
    failures_in_a_row = position - resumed_at >= options_.block_bytes ? 1 : failures_in_a_row + 1;
    if (response.outcome == Outcome::permanent || failures_in_a_row >= options_.attempts) {
      throw DatasetError(url_ + ": " + bytes_text(position, size_ - 1) + " (sequential read): " +
                         response.failure + " after " + attempts_text(attempts));
    }
    ++counters_.retries;
    if (log_enabled(LogLevel::warn)) {
      Logger().warn(url_ + ": " + bytes_text(position, size_ - 1) + " (sequential read): " +
                    response.failure + "; resuming (failure " + std::to_string(failures_in_a_row) +
                    " of " + std::to_string(options_.attempts) + " in a row)");
    }
    std::this_thread::sleep_for(options_.backoff *
                                (std::uint64_t{1} << std::min(failures_in_a_row - 1, 20u)));
  }
}

}  // namespace odbatch
