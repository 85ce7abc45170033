#pragma once
// A file served over HTTP(S) as a ByteSource: reads are ranged GETs through a bounded cache of
// aligned blocks (in memory, or files under RemoteSourceOptions::cache_dir that later runs find),
// on reused connections, with transient failures retried with backoff. The server must honour
// byte ranges (206 Partial Content); the file must not change while it is read (its ETag or
// Last-Modified is checked on every response). A sequential pass leaves the whole blocks it
// passed in the cache.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "odbatch/source/byte_source.hpp"
#include "odbatch/source/remote_source_options.hpp"

namespace odbatch {

class RemoteBlockCache;
struct HttpRequest;
struct HttpResponse;

// What one source has done so far; the numbers only grow, except cached_bytes.
struct HttpTransferCounters {
  std::uint64_t requests = 0;       // HTTP requests sent, retries and the opening one included
  std::uint64_t retries = 0;        // requests repeated after a transient failure
  std::uint64_t bytes_fetched = 0;  // response body bytes received
  std::uint64_t cache_hits = 0;     // blocks read from the cache (or from a concurrent fetch)
  std::uint64_t cache_misses = 0;   // blocks fetched from the server
  std::uint64_t cached_bytes = 0;   // bytes the cache this source uses holds now (all sources')
};

class HttpByteSource final : public ByteSource {
 public:
  // Learns size and version with one ranged GET. Throws DatasetError naming the URL when it
  // cannot be read, does not honour byte ranges, or the options are unusable.
  HttpByteSource(std::string url, RemoteSourceOptions options);
  ~HttpByteSource() override;

  const std::string& name() const override { return url_; }
  std::uint64_t size() const override { return size_; }
  // "http:<size>:etag:<ETag>", else "http:<size>:last-modified:<date>", else "http:<size>"
  // (then the server gives no way to tell versions of equal size apart, and no disk cache is used).
  std::string version() const override { return version_; }
  // "<scheme>://<server address>:<port><path>?<query> <version>", as first opened.
  std::string identity() const override { return identity_; }
  std::size_t read_at(char* data, std::size_t length, std::uint64_t offset) const override;
  void read_sequentially(std::uint64_t offset,
                         const std::function<bool(std::string_view)>& consume) const override;

  HttpTransferCounters counters() const;

 private:
  struct AtomicCounters {
    std::atomic<std::uint64_t> requests{0}, retries{0}, bytes_fetched{0}, cache_hits{0},
        cache_misses{0};
  };

  HttpRequest range_request(std::uint64_t first, std::uint64_t count) const;
  // Sends `request` until it completes, a permanent failure, or `attempts` transient ones
  // (`restart` runs before each attempt); throws DatasetError naming URL, `what` and the failure.
  // `last`, when given, receives the last response.
  void perform_with_retries(const HttpRequest& request, const std::string& what,
                            const std::function<void()>& restart,
                            const std::function<bool(std::string_view)>& consume,
                            HttpResponse* last = nullptr) const;
  void fetch_range_into(char* data, std::uint64_t first, std::uint64_t count) const;

  std::string url_;
  RemoteSourceOptions options_;
  std::uint64_t size_ = 0;
  std::string version_;
  std::string identity_;
  // The response header that must not change while the file is read: "ETag" or "Last-Modified".
  std::string validator_header_;
  std::string validator_;
  std::shared_ptr<RemoteBlockCache> cache_;
  std::string cache_key_;
  mutable AtomicCounters counters_;
};

}  // namespace odbatch
