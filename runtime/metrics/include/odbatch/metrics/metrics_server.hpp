#pragma once
// A small HTTP server for Prometheus scrapes: answers GET /metrics (and HEAD, headers only) with
// the text a callback renders, on a thread of its own. Every connection gets one answer and is
// closed; a request must arrive whole, within a size limit, before a deadline, so a slow or silent
// client cannot hold it.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace odbatch {

struct MetricsServerOptions {
  std::string address = "127.0.0.1";              // numeric IPv4 or IPv6
  std::uint16_t port = 0;                         // 0: a free port, see MetricsServer::port()
  std::chrono::milliseconds read_timeout{5'000};  // to receive a request and to send the answer
  std::size_t max_request_bytes = 8192;           // the header, and again any body
  std::uint32_t max_connections = 16;             // beyond these, new connections are closed
};

class MetricsServer {
 public:
  // Binds and listens, then serves on its own thread. `render` builds the body of each 200 answer
  // on that thread; the process's standard metrics (process_prometheus_text) follow it. Throws
  // std::runtime_error naming the address when it cannot listen there.
  MetricsServer(MetricsServerOptions options, std::function<std::string()> render);
  ~MetricsServer();  // closes every connection and joins the thread; never waits for a client
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  std::uint16_t port() const;  // the bound port, also when a free one was asked for

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace odbatch
