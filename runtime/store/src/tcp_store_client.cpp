#include "odbatch/store/tcp_store_client.hpp"

#include <algorithm>
#include <array>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

#include <boost/asio.hpp>

#include "odbatch/store/store_token.hpp"

namespace odbatch {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kFirstConnectBackoff{10};
constexpr milliseconds kMaxConnectBackoff{1'000};
// Keys listed in an error message; the rest are counted.
constexpr std::size_t kKeysNamed = 8;

std::string host_port(const std::string& host, std::uint16_t port) {
  const bool ipv6 = host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string quoted_keys(const std::vector<std::string>& keys) {
  std::string text;
  for (std::size_t i = 0; i < std::min(keys.size(), kKeysNamed); ++i)
    text += (i ? ", '" : "'") + keys[i] + "'";
  if (keys.size() > kKeysNamed)
    text += " and " + std::to_string(keys.size() - kKeysNamed) + " more";
  return text;
}

std::string milliseconds_text(milliseconds duration) {
  return std::to_string(duration.count()) + " ms";
}

void check_timeout(milliseconds timeout, const std::string& operation) {
  if (timeout.count() < 0 || timeout.count() > kMaxStoreTimeoutMs)
    throw std::invalid_argument("store " + operation + ": timeout of " +
                                milliseconds_text(timeout) + " is outside 0 to " +
                                std::to_string(kMaxStoreTimeoutMs) + " ms");
}

// Why an exchange with the server did not produce a reply.
struct Failure {
  StoreError::Kind kind;
  std::string problem;
};

}  // namespace

class TcpStoreClient::Impl {
 public:
  explicit Impl(TcpStoreClientOptions options)
      : options_(std::move(options)), address_(host_port(options_.host, options_.port)) {
    check_store_token_length(options_.token);
    connect();
  }

  const std::string& address() const { return address_; }

  // Sends `request` and returns the server's ok reply; `waiting` is how long the server may
  // legitimately hold the reply back (a get's or wait's timeout). `keys` names the keys in errors.
  StoreMessage call(const StoreMessage& request, const std::string& keys, milliseconds waiting) {
    const std::string operation = store_op_name(request.op);
    std::lock_guard lock(mutex_);
    if (broken_)
      throw StoreError(StoreError::Kind::connection, operation, keys, address_,
                       "the connection is unusable after an earlier failure: " + *broken_);
    StoreMessage reply;
    if (auto failure = exchange(request, reply, Clock::now() + options_.call_timeout + waiting)) {
      if (failure->kind != StoreError::Kind::rejected) break_connection(failure->problem);
      throw StoreError(failure->kind, operation, keys, address_, failure->problem);
    }
    switch (reply.op) {
      case StoreOp::ok:
        return reply;
      case StoreOp::timed_out:
        throw StoreError(StoreError::Kind::timeout, operation, keys, address_,
                         "timed out after " + milliseconds_text(waiting) + ", still missing " +
                             quoted_keys(reply.keys));
      case StoreOp::failed:
        if (reply.number == 1) {  // the server closes the connection: it cannot serve us further
          break_connection(store_text(reply.values.front()));
          throw StoreError(StoreError::Kind::connection, operation, keys, address_, *broken_);
        }
        throw StoreError(StoreError::Kind::rejected, operation, keys, address_,
                         store_text(reply.values.front()));
      default:
        break_connection("the server answered with " + store_op_name(reply.op));
        throw StoreError(StoreError::Kind::connection, operation, keys, address_, *broken_);
    }
  }

 private:
  // Connects and says hello, retrying refused or dropped attempts with backoff until the
  // connect timeout: the server may not be listening yet.
  void connect() {
    const auto deadline = Clock::now() + options_.connect_timeout;
    milliseconds backoff = kFirstConnectBackoff;
    std::string problem;
    for (;;) {
      if (auto failure = open_connection(deadline)) {
        problem = failure->problem;
      } else {
        StoreMessage reply;
        const StoreMessage hello{StoreOp::hello, 0, {}, {store_bytes(options_.token)}};
        const auto failure_in_hello = exchange(hello, reply, Clock::now() + options_.call_timeout);
        if (!failure_in_hello && reply.op == StoreOp::ok) return;
        if (!failure_in_hello && reply.op == StoreOp::failed) {
          const std::string why = store_text(reply.values.front());
          fail_connect(why.starts_with(kStoreAuthenticationFailed)
                           ? StoreError::Kind::authentication
                           : StoreError::Kind::rejected,
                       "the server refused the connection: " + why);
        }
        if (!failure_in_hello)
          fail_connect(StoreError::Kind::connection,
                       "the server answered the hello with " + store_op_name(reply.op));
        if (failure_in_hello->kind != StoreError::Kind::connection)
          fail_connect(failure_in_hello->kind, "hello: " + failure_in_hello->problem);
        problem = "hello: " + failure_in_hello->problem;
      }
      error_code ignored;
      socket_.close(ignored);
      if (Clock::now() + backoff >= deadline)
        fail_connect(StoreError::Kind::connection, "no store answered within " +
                                                       milliseconds_text(options_.connect_timeout) +
                                                       " (last attempt: " + problem + ")");
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, kMaxConnectBackoff);
    }
  }

  [[noreturn]] void fail_connect(StoreError::Kind kind, const std::string& problem) {
    error_code ignored;
    socket_.close(ignored);
    throw StoreError(kind, "connect", "", address_, problem);
  }

  std::optional<Failure> open_connection(Clock::time_point deadline) {
    tcp::resolver resolver(io_);
    error_code error;
    tcp::resolver::results_type endpoints;
    bool finished = false;
    resolver.async_resolve(options_.host, std::to_string(options_.port),
                           [&](const error_code& e, tcp::resolver::results_type results) {
                             error = e;
                             endpoints = std::move(results);
                             finished = true;
                           });
    if (!await(finished, deadline, [&] { resolver.cancel(); }))
      return Failure{StoreError::Kind::connection, "resolving the host timed out"};
    if (error) return Failure{StoreError::Kind::connection, "cannot resolve: " + error.message()};

    finished = false;
    asio::async_connect(socket_, endpoints, [&](const error_code& e, const tcp::endpoint&) {
      error = e;
      finished = true;
    });
    if (!await(finished, deadline, [&] { close_socket(); }))
      return Failure{StoreError::Kind::connection, "connecting timed out"};
    if (error) return Failure{StoreError::Kind::connection, error.message()};
    // Frames are small requests and replies: send each at once.
    socket_.set_option(tcp::no_delay(true), error);
    return std::nullopt;
  }

  // Writes one frame and reads one back, by `deadline`.
  std::optional<Failure> exchange(const StoreMessage& request, StoreMessage& reply,
                                  Clock::time_point deadline) {
    if (auto wrong = encode_store_frame(request, frame_, options_.limits))
      return Failure{StoreError::Kind::rejected, wrong->message};
    if (auto failure = transfer(
            deadline, [&](auto done) { asio::async_write(socket_, asio::buffer(frame_), done); }))
      return failure;
    std::array<std::byte, kStoreLengthPrefixBytes> prefix{};
    if (auto failure = transfer(
            deadline, [&](auto done) { asio::async_read(socket_, asio::buffer(prefix), done); }))
      return failure;
    std::uint32_t body_bytes = 0;
    if (auto wrong = decode_store_frame_length(prefix, body_bytes, options_.limits))
      return Failure{StoreError::Kind::connection, "malformed reply: " + wrong->message};
    frame_.resize(body_bytes);
    if (auto failure = transfer(
            deadline, [&](auto done) { asio::async_read(socket_, asio::buffer(frame_), done); }))
      return failure;
    if (auto wrong = decode_store_body(frame_, reply, options_.limits))
      return Failure{StoreError::Kind::connection, "malformed reply: " + wrong->message};
    return std::nullopt;
  }

  // Runs one socket operation, started by `start` with a completion handler, to its end or the
  // deadline.
  template <typename Start>
  std::optional<Failure> transfer(Clock::time_point deadline, Start start) {
    error_code error;
    bool finished = false;
    start([&](const error_code& e, std::size_t) {
      error = e;
      finished = true;
    });
    if (!await(finished, deadline, [&] { close_socket(); }))
      return Failure{StoreError::Kind::timeout, "no reply by the deadline (the server may hang)"};
    if (error == asio::error::eof)
      return Failure{StoreError::Kind::connection, "the server closed the connection"};
    if (error) return Failure{StoreError::Kind::connection, "connection lost: " + error.message()};
    return std::nullopt;
  }

  // Runs the io context until `finished` or the deadline. At the deadline `cancel` aborts the
  // operation, whose handler then runs before this returns false.
  template <typename Cancel>
  bool await(const bool& finished, Clock::time_point deadline, Cancel cancel) {
    io_.restart();
    io_.run_until(deadline);  // returns early once the operation completed: no work is left
    if (finished) return true;
    cancel();
    io_.restart();
    io_.run();
    return false;
  }

  void close_socket() {
    error_code ignored;
    socket_.close(ignored);
  }

  void break_connection(const std::string& problem) {
    broken_ = problem;
    close_socket();
  }

  asio::io_context io_;  // first member: destroyed after the socket that uses it
  TcpStoreClientOptions options_;
  std::string address_;
  tcp::socket socket_{io_};
  std::vector<std::byte> frame_;
  std::mutex mutex_;
  std::optional<std::string> broken_;  // why the connection cannot be used any more
};

TcpStoreClientOptions TcpStoreClientOptions::at(std::string host, std::uint16_t port,
                                                std::string token) {
  if (host.empty() || port == 0)
    throw std::invalid_argument("the store's address needs MASTER_ADDR and a non-zero MASTER_PORT");
  TcpStoreClientOptions options;
  options.host = std::move(host);
  options.port = port;
  options.token = std::move(token);
  return options;
}

TcpStoreClient::TcpStoreClient(TcpStoreClientOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

TcpStoreClient::~TcpStoreClient() = default;

const std::string& TcpStoreClient::address() const {
  return impl_->address();
}

void TcpStoreClient::set(const std::string& key, std::span<const std::byte> value) {
  StoreMessage request{StoreOp::set, 0, {key}, {{value.begin(), value.end()}}};
  impl_->call(request, quoted_keys(request.keys), milliseconds{0});
}

std::vector<std::byte> TcpStoreClient::get(const std::string& key, milliseconds timeout) {
  check_timeout(timeout, "get");
  StoreMessage request{StoreOp::get, timeout.count(), {key}, {}};
  StoreMessage reply = impl_->call(request, quoted_keys(request.keys), timeout);
  if (reply.values.empty())
    throw StoreError(StoreError::Kind::connection, "get", quoted_keys(request.keys),
                     impl_->address(), "the server's reply carries no value");
  return std::move(reply.values.front());
}

std::int64_t TcpStoreClient::add(const std::string& key, std::int64_t delta) {
  const StoreMessage request{StoreOp::add, delta, {key}, {}};
  return impl_->call(request, quoted_keys(request.keys), milliseconds{0}).number;
}

CompareSetResult TcpStoreClient::compare_and_set(
    const std::string& key, const std::optional<std::vector<std::byte>>& expected,
    std::span<const std::byte> desired) {
  StoreMessage request{StoreOp::compare_and_set, 0, {key}, {}};
  if (expected) request.values.push_back(*expected);
  request.values.emplace_back(desired.begin(), desired.end());
  StoreMessage reply = impl_->call(request, quoted_keys(request.keys), milliseconds{0});
  CompareSetResult result;
  result.swapped = reply.number == 1;
  // A swap's reply leaves out the value the client just sent.
  if (result.swapped)
    result.current = std::move(request.values.back());
  else if (!reply.values.empty())
    result.current = std::move(reply.values.front());
  return result;
}

bool TcpStoreClient::check(const std::vector<std::string>& keys) {
  const StoreMessage request{StoreOp::check, 0, keys, {}};
  return impl_->call(request, quoted_keys(keys), milliseconds{0}).number == 1;
}

void TcpStoreClient::wait(const std::vector<std::string>& keys, milliseconds timeout) {
  check_timeout(timeout, "wait");
  const StoreMessage request{StoreOp::wait, timeout.count(), keys, {}};
  impl_->call(request, quoted_keys(keys), timeout);
}

std::vector<std::vector<std::byte>> TcpStoreClient::set_and_wait(
    const std::string& key, std::span<const std::byte> value, const std::vector<std::string>& keys,
    milliseconds timeout) {
  check_timeout(timeout, "set_and_wait");
  StoreMessage request{
      StoreOp::set_and_wait, timeout.count(), {key}, {{value.begin(), value.end()}}};
  request.keys.insert(request.keys.end(), keys.begin(), keys.end());
  StoreMessage reply = impl_->call(request, quoted_keys(request.keys), timeout);
  if (reply.values.size() != keys.size())
    throw StoreError(StoreError::Kind::connection, "set_and_wait", quoted_keys(request.keys),
                     impl_->address(),
                     "the server's reply carries " + std::to_string(reply.values.size()) +
                         " values for " + std::to_string(keys.size()) + " keys");
  return std::move(reply.values);
}

bool TcpStoreClient::erase(const std::string& key) {
  const StoreMessage request{StoreOp::erase, 0, {key}, {}};
  return impl_->call(request, quoted_keys(request.keys), milliseconds{0}).number == 1;
}

std::uint64_t TcpStoreClient::erase_prefix(const std::string& prefix) {
  const StoreMessage request{StoreOp::erase_prefix, 0, {prefix}, {}};
  return static_cast<std::uint64_t>(
      impl_->call(request, quoted_keys(request.keys), milliseconds{0}).number);
}

}  // namespace odbatch
