#include "odbatch/metrics/metrics_server.hpp"

#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "odbatch/metrics/metrics_prometheus.hpp"

namespace odbatch {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

// How long accepting pauses after a failed accept (e.g. out of file descriptors).
constexpr std::chrono::milliseconds kAcceptRetry{100};

struct ServerState {
  MetricsServerOptions options;
  std::function<std::string()> render;
  std::uint32_t connections = 0;  // touched only on the server's thread
};

http::response<http::string_body> answer(const http::request<http::string_body>& request,
                                         const ServerState& state) {
  http::response<http::string_body> response;
  response.version(request.version());
  response.set(http::field::server, "odbatch");
  response.keep_alive(false);
  const auto target = request.target();
  const bool metrics_path = target == "/metrics" || target.starts_with("/metrics?");
  if (!metrics_path) {
    response.result(http::status::not_found);
    response.set(http::field::content_type, "text/plain; charset=utf-8");
    response.body() = "not found; metrics are at /metrics\n";
  } else if (request.method() != http::verb::get && request.method() != http::verb::head) {
    response.result(http::status::method_not_allowed);
    response.set(http::field::allow, "GET, HEAD");
    response.set(http::field::content_type, "text/plain; charset=utf-8");
    response.body() = "only GET and HEAD\n";
  } else {
    try {
      // The pipeline's metrics, then the serving process's own.
      response.body() = state.render() + process_prometheus_text();
      response.result(http::status::ok);
      response.set(http::field::content_type, beast::string_view(kPrometheusContentType.data(),
                                                                 kPrometheusContentType.size()));
    } catch (const std::exception& e) {
      response.result(http::status::internal_server_error);
      response.set(http::field::content_type, "text/plain; charset=utf-8");
      response.body() = std::string(e.what()) + '\n';
    }
  }
  response.prepare_payload();
  // HEAD gets the headers GET would, Content-Length included, and no body.
  if (request.method() == http::verb::head) {
    const auto length = response.body().size();
    response.body().clear();
    response.content_length(length);
  }
  return response;
}

// One client: one request read under the deadline and the size limit, one answer, then closed.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, ServerState& state)
      : stream_(std::move(socket)), state_(state), buffer_(state.options.max_request_bytes) {
    ++state_.connections;
  }
  ~Connection() { --state_.connections; }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void start() {
    parser_.header_limit(static_cast<std::uint32_t>(state_.options.max_request_bytes));
    parser_.body_limit(state_.options.max_request_bytes);
    stream_.expires_after(state_.options.read_timeout);
    http::async_read(stream_, buffer_, parser_,
                     [self = shared_from_this()](error_code error, std::size_t) {
                       // Timed out, too large, malformed or gone: nobody to answer.
                       if (!error) self->respond();
                     });
  }

 private:
  void respond() {
    response_ = answer(parser_.get(), state_);
    stream_.expires_after(state_.options.read_timeout);
    http::async_write(stream_, response_, [self = shared_from_this()](error_code, std::size_t) {
      error_code ignored;
      self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    });
  }

  beast::tcp_stream stream_;
  ServerState& state_;
  beast::flat_buffer buffer_;
  http::request_parser<http::string_body> parser_;
  http::response<http::string_body> response_;
};

}  // namespace

class MetricsServer::Impl {
 public:
  Impl(MetricsServerOptions options, std::function<std::string()> render)
      : state_{std::move(options), std::move(render)} {
    error_code error;
    const auto address = asio::ip::make_address(state_.options.address, error);
    const std::string where = state_.options.address + ":" + std::to_string(state_.options.port);
    if (error) throw std::runtime_error("metrics endpoint " + where + ": not an IP address");
    const tcp::endpoint endpoint(address, state_.options.port);
    acceptor_.open(endpoint.protocol(), error);
    if (!error) acceptor_.set_option(asio::socket_base::reuse_address(true), error);
    if (!error) acceptor_.bind(endpoint, error);
    if (!error) acceptor_.listen(asio::socket_base::max_listen_connections, error);
    if (error)
      throw std::runtime_error("metrics endpoint: cannot listen on " + where + ": " +
                               error.message());
    port_ = acceptor_.local_endpoint().port();
    accept();
    thread_ = std::thread([this] { io_.run(); });
  }

  ~Impl() {
    // Pending reads, writes and accepts are dropped with the io_context; none is waited for.
    io_.stop();
    thread_.join();
  }

  std::uint16_t port() const { return port_; }

 private:
  void accept() {
    acceptor_.async_accept([this](error_code error, tcp::socket socket) {
      if (error == asio::error::operation_aborted) return;
      if (error) {
        retry_.expires_after(kAcceptRetry);
        retry_.async_wait([this](error_code waited) {
          if (!waited) accept();
        });
        return;
      }
      if (state_.connections < state_.options.max_connections)
        std::make_shared<Connection>(std::move(socket), state_)->start();
      accept();
    });
  }

  // Declared before the io_context: connections still queued in it refer to the state while it
  // is destroyed.
  ServerState state_;
  asio::io_context io_{1};
  tcp::acceptor acceptor_{io_};
  asio::steady_timer retry_{io_};
  std::uint16_t port_ = 0;
  std::thread thread_;
};

MetricsServer::MetricsServer(MetricsServerOptions options, std::function<std::string()> render)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(render))) {}

MetricsServer::~MetricsServer() = default;

std::uint16_t MetricsServer::port() const {
  return impl_->port();
}

}  // namespace odbatch
