// The metrics endpoint's HTTP behaviour, with a fixed text in place of a pipeline's counters:
// GET /metrics answers 200 with Prometheus's content type, HEAD the same headers without a body,
// other paths 404, other methods 405;
// a port of 0 picks a free one; a client that sends nothing or too much is dropped; a silent
// client does not hold up destruction.
#include <doctest/doctest.h>

#include <atomic>
#include <optional>
#include <stdexcept>
#include <string>

#include "metrics_http_client.hpp"
#include "odbatch/metrics/metrics_server.hpp"

using namespace odbatch;
using test::http_get;
using test::HttpTestClient;
using test::parse_answer;

namespace {

constexpr std::string_view kBody = "odbatch_batches_total 7\n";

MetricsServerOptions loopback(std::chrono::milliseconds read_timeout = std::chrono::seconds(5)) {
  MetricsServerOptions options;
  options.read_timeout = read_timeout;
  return options;
}

}  // namespace

TEST_CASE("GET /metrics answers 200 with the rendered text and Prometheus's content type") {
  std::atomic<int> renders{0};
  MetricsServer server(loopback(), [&] {
    ++renders;
    return std::string(kBody);
  });
  REQUIRE(server.port() != 0);
  const auto answer = http_get(server.port(), "/metrics");
  CHECK(answer.status == 200);
  CHECK(answer.head.find("\r\nContent-Type: text/plain; version=0.0.4") != std::string::npos);
  CHECK(answer.head.find("\r\nContent-Length: " + std::to_string(answer.body.size())) !=
        std::string::npos);
  CHECK(answer.body.starts_with(kBody));
  CHECK(answer.body.find("\nprocess_open_fds ") != std::string::npos);
  CHECK(http_get(server.port(), "/metrics?x=1").status == 200);
  CHECK(renders == 2);
}

TEST_CASE("other paths answer 404 and other methods 405, without rendering") {
  std::atomic<int> renders{0};
  MetricsServer server(loopback(), [&] {
    ++renders;
    return std::string(kBody);
  });
  CHECK(http_get(server.port(), "/").status == 404);
  CHECK(http_get(server.port(), "/metricsx").status == 404);
  CHECK(http_get(server.port(), "/metrics/").status == 404);
  HttpTestClient client(server.port());
  client.send_text("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi");
  const auto post = parse_answer(client.read_all());
  CHECK(post.status == 405);
  CHECK(post.head.find("\r\nAllow: GET, HEAD") != std::string::npos);
  CHECK(renders == 0);
}

TEST_CASE("HEAD /metrics answers GET's headers, its Content-Length included, and no body") {
  MetricsServer server(loopback(), [] { return std::string(kBody); });
  HttpTestClient client(server.port());
  client.send_text("HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  const auto head = parse_answer(client.read_all());
  CHECK(head.status == 200);
  CHECK(head.head.find("\r\nContent-Type: text/plain; version=0.0.4") != std::string::npos);
  // The length of the body GET would get: the rendered text and the process's metrics after it.
  const auto length_at = head.head.find("\r\nContent-Length: ");
  REQUIRE(length_at != std::string::npos);
  CHECK(std::stoul(head.head.substr(length_at + 18)) > kBody.size());
  CHECK(head.body.empty());
}

TEST_CASE("a render that throws answers 500 with the reason") {
  MetricsServer server(loopback(), []() -> std::string { throw std::runtime_error("no stats"); });
  const auto answer = http_get(server.port(), "/metrics");
  CHECK(answer.status == 500);
  CHECK(answer.body == "no stats\n");
}

TEST_CASE("a client that sends nothing is dropped at the read deadline, and others are served") {
  MetricsServer server(loopback(std::chrono::milliseconds(100)), [] { return std::string(kBody); });
  HttpTestClient silent(server.port());
  CHECK(http_get(server.port(), "/metrics").status == 200);
  CHECK(silent.read_all().empty());  // closed without an answer
}

TEST_CASE("an oversized request is dropped without an answer") {
  auto options = loopback();
  options.max_request_bytes = 1024;
  MetricsServer server(options, [] { return std::string(kBody); });
  HttpTestClient client(server.port());
  client.send_text("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Padding: " + std::string(4096, 'a') +
                   "\r\n\r\n");
  CHECK(parse_answer(client.read_all()).status == 0);
  CHECK(http_get(server.port(), "/metrics").status == 200);
}

TEST_CASE("destroying the server does not wait for a silent client") {
  std::optional<HttpTestClient> silent;
  {
    MetricsServer server(loopback(std::chrono::hours(1)), [] { return std::string(kBody); });
    silent.emplace(server.port());
    CHECK(http_get(server.port(), "/metrics").status == 200);
  }
  CHECK(silent->read_all().empty());
}

TEST_CASE("an address that cannot be bound is an error naming it") {
  MetricsServer first(loopback(), [] { return std::string(kBody); });
  auto options = loopback();
  options.port = first.port();
  std::string error;
  try {
    MetricsServer second(options, [] { return std::string(kBody); });
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  CHECK(error.find("127.0.0.1:" + std::to_string(first.port())) != std::string::npos);
}
