#include "odbatch/store/tcp_store_server.hpp"

#include <array>
#include <charconv>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <boost/asio.hpp>

#include "odbatch/store/store.hpp"
#include "odbatch/store/store_token.hpp"

namespace odbatch {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

std::string endpoint_text(const tcp::endpoint& endpoint) {
  const auto address = endpoint.address();
  const std::string host = address.is_v6() ? "[" + address.to_string() + "]" : address.to_string();
  return host + ":" + std::to_string(endpoint.port());
}

// Counters are decimal text: optional minus sign, digits, nothing else.
std::optional<std::int64_t> parse_counter(const std::vector<std::byte>& value) {
  const std::string text = store_text(value);
  std::int64_t counter = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), counter);
  if (error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return counter;
}

StoreMessage ok_reply(std::int64_t number = 0) {
  return StoreMessage{StoreOp::ok, number, {}, {}};
}

// `closing`: the server closes the connection once the reply is written.
StoreMessage failed_reply(const std::string& why, bool closing = false) {
  return StoreMessage{StoreOp::failed, closing ? 1 : 0, {}, {store_bytes(why)}};
}

class ServerCore;

// One client connection. It reads requests one at a time (a client waits for each reply before it
// sends the next) and keeps reading while a get or wait is pending, so that a client that goes
// away is noticed at once and its wait dropped.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(ServerCore& core, tcp::socket socket);

  void start();
  // Answers with `why` and closes once the answer is written.
  void refuse(const std::string& why);
  void close();

  bool waiting() const { return pending_.has_value(); }
  // A key this session waits for has been written.
  void key_arrived(const std::string& key);

 private:
  struct PendingWait {
    StoreMessage request;  // a get or a wait
    std::set<std::string> missing;
  };

  // Before the hello only a hello fits (store_hello_limits()): a client that has not
  // authenticated cannot make the server allocate a large frame.
  const StoreWireLimits& frame_limits() const;
  void read_length();
  void read_body(std::uint32_t body_bytes);
  void handle(std::span<const std::byte> frame);
  void handle_hello(const StoreMessage& hello);
  void begin_wait(StoreMessage request, std::set<std::string> missing);
  void end_wait();
  void wait_timed_out(std::uint64_t generation);
  void send(const StoreMessage& reply);
  void write_next();

  ServerCore& core_;
  tcp::socket socket_;
  std::array<std::byte, kStoreLengthPrefixBytes> length_prefix_{};
  std::vector<std::byte> body_;
  std::deque<std::vector<std::byte>> outbox_;
  asio::steady_timer hello_timer_;
  asio::steady_timer wait_timer_;
  std::optional<PendingWait> pending_;
  std::uint64_t wait_generation_ = 0;  // tells a stale timer expiry from the current wait's
  bool authenticated_ = false;
  bool close_after_write_ = false;
  bool closed_ = false;
};

// The keys, the connections and the waits, all touched only on the io thread.
class ServerCore {
 public:
  explicit ServerCore(TcpStoreServerOptions options) : options_(std::move(options)) {
    check_store_token_length(options_.token);
    bind();
  }

  const StoreWireLimits& hello_limits() const { return hello_limits_; }

  const TcpStoreServerOptions& options() const { return options_; }
  const std::string& address() const { return address_; }
  std::uint16_t port() const { return port_; }
  asio::io_context& io() { return io_; }

  void start() {
    accept_next();
    thread_ = std::thread([this] { io_.run(); });
  }

  void stop() {
    std::lock_guard lock(stop_mutex_);
    if (!thread_.joinable()) return;
    asio::post(io_, [this] { shut_down(); });
    thread_.join();
    waiting_on_.clear();
    sessions_.clear();
  }

  // The requests that never wait.
  StoreMessage set(const std::string& key, const std::vector<std::byte>& value) {
    data_[key] = value;
    key_written(key);
    return ok_reply();
  }

  StoreMessage add(const std::string& key, std::int64_t delta) {
    std::int64_t counter = 0;
    if (const auto found = data_.find(key); found != data_.end()) {
      const auto parsed = parse_counter(found->second);
      if (!parsed) return failed_reply("the value of '" + key + "' is not a decimal counter");
      counter = *parsed;
    }
    std::int64_t sum = 0;
    if (__builtin_add_overflow(counter, delta, &sum))
      return failed_reply("adding " + std::to_string(delta) + " to '" + key + "' (" +
                          std::to_string(counter) + ") overflows a signed 64-bit counter");
    data_[key] = store_bytes(std::to_string(sum));
    key_written(key);
    return ok_reply(sum);
  }

  // Replies 1 when swapped, else 0 and the value that stands (none when the key is absent).
  StoreMessage compare_and_set(const StoreMessage& request) {
    const std::string& key = request.keys.front();
    const bool expects_absent = request.values.size() == 1;
    const auto found = data_.find(key);
    const bool matches = found == data_.end()
                             ? expects_absent
                             : !expects_absent && found->second == request.values[0];
    if (!matches) {
      if (found == data_.end()) return ok_reply(0);
      return StoreMessage{StoreOp::ok, 0, {}, {found->second}};
    }
    data_[key] = request.values.back();
    key_written(key);
    return ok_reply(1);
  }

  StoreMessage check(const std::vector<std::string>& keys) const {
    for (const std::string& key : keys)
      if (!data_.contains(key)) return ok_reply(0);
    return ok_reply(1);
  }

  StoreMessage erase(const std::string& key) {
    return ok_reply(static_cast<std::int64_t>(data_.erase(key)));
  }

  StoreMessage erase_prefix(const std::string& prefix) {
    auto first = data_.lower_bound(prefix);
    auto last = first;
    std::int64_t erased = 0;
    while (last != data_.end() && last->first.starts_with(prefix)) {
      ++last;
      ++erased;
    }
    data_.erase(first, last);
    return ok_reply(erased);
  }

  // The keys of a get or wait that are not there yet.
  std::set<std::string> missing_keys(const StoreMessage& request) const {
    std::set<std::string> missing;
    for (const std::string& key : request.keys)
      if (!data_.contains(key)) missing.insert(key);
    return missing;
  }

  // The reply to a get or wait whose keys are all there: checked just now, or the last of them
  // written just now.
  StoreMessage satisfied_reply(const StoreMessage& request) const {
    if (request.op == StoreOp::get)
      return StoreMessage{StoreOp::ok, 0, {}, {data_.at(request.keys.front())}};
    if (request.op == StoreOp::set_and_wait) {
      // The awaited keys' values, in order (empty for a key erased since it arrived).
      StoreMessage reply = ok_reply();
      for (const std::string& key : request.keys) {
        const auto found = data_.find(key);
        reply.values.push_back(found == data_.end() ? std::vector<std::byte>{} : found->second);
      }
      return reply;
    }
    return ok_reply();
  }

  void add_waiter(const std::string& key, std::shared_ptr<Session> session) {
    waiting_on_[key].push_back(std::move(session));
  }

  void remove_waiter(const std::string& key, const Session* session) {
    const auto found = waiting_on_.find(key);
    if (found == waiting_on_.end()) return;
    std::erase_if(found->second, [&](const auto& waiter) { return waiter.get() == session; });
    if (found->second.empty()) waiting_on_.erase(found);
  }

  void session_closed(const std::shared_ptr<Session>& session) {
    sessions_.erase(session);
    if (shutting_down_ && sessions_.empty()) grace_timer_.cancel();
  }

 private:
  void bind() {
    tcp::resolver resolver(io_);
    error_code error;
    const auto endpoints = resolver.resolve(options_.host, std::to_string(options_.port), error);
    const std::string requested = options_.host + ":" + std::to_string(options_.port);
    if (error || endpoints.empty())
      throw StoreError(StoreError::Kind::connection, "listen", "", requested,
                       "cannot resolve the host: " + error.message());
    const tcp::endpoint endpoint = endpoints.begin()->endpoint();
    acceptor_.open(endpoint.protocol(), error);
    // Lets a restarted server bind while connections of its predecessor linger in TIME_WAIT.
    if (!error) acceptor_.set_option(tcp::acceptor::reuse_address(true), error);
    if (!error) acceptor_.bind(endpoint, error);
    if (!error) acceptor_.listen(asio::socket_base::max_listen_connections, error);
    if (error)
      throw StoreError(StoreError::Kind::connection, "listen", "", endpoint_text(endpoint),
                       error.message());
    const tcp::endpoint bound = acceptor_.local_endpoint();
    address_ = endpoint_text(bound);
    port_ = bound.port();
  }

  void accept_next() {
    acceptor_.async_accept([this](const error_code& error, tcp::socket socket) {
      if (error == asio::error::operation_aborted || shutting_down_) return;
      if (error) {
        // Out of descriptors, say: try again shortly instead of spinning.
        accept_retry_timer_.expires_after(std::chrono::milliseconds(50));
        accept_retry_timer_.async_wait([this](const error_code& e) {
          if (!e && !shutting_down_) accept_next();
        });
        return;
      }
      auto session = std::make_shared<Session>(*this, std::move(socket));
      const bool over_limit = sessions_.size() >= options_.max_connections;
      sessions_.insert(session);
      if (over_limit)
        session->refuse("too many connections (limit " + std::to_string(options_.max_connections) +
                        ")");
      else
        session->start();
      accept_next();
    });
  }

  void shut_down() {
    shutting_down_ = true;
    error_code ignored;
    acceptor_.close(ignored);
    accept_retry_timer_.cancel();
    const auto sessions = sessions_;  // closing a session removes it from sessions_
    for (const auto& session : sessions) {
      if (session->waiting())
        session->refuse("the server at " + address_ + " is shutting down");
      else
        session->close();
    }
    if (sessions_.empty()) return;
    grace_timer_.expires_after(options_.shutdown_grace);
    grace_timer_.async_wait([this](const error_code& error) {
      if (error) return;
      const auto lingering = sessions_;
      for (const auto& session : lingering) session->close();
    });
  }

  void key_written(const std::string& key) {
    const auto found = waiting_on_.find(key);
    if (found == waiting_on_.end()) return;
    const auto waiters = std::move(found->second);
    waiting_on_.erase(found);
    for (const auto& session : waiters) session->key_arrived(key);
  }

  asio::io_context io_;  // first member: destroyed after everything that holds its objects
  TcpStoreServerOptions options_;
  StoreWireLimits hello_limits_ = store_hello_limits();
  tcp::acceptor acceptor_{io_};
  asio::steady_timer accept_retry_timer_{io_};
  asio::steady_timer grace_timer_{io_};
  std::string address_;
  std::uint16_t port_ = 0;
  std::map<std::string, std::vector<std::byte>, std::less<>> data_;  // ordered for erase_prefix
  std::unordered_map<std::string, std::vector<std::shared_ptr<Session>>> waiting_on_;
  std::unordered_set<std::shared_ptr<Session>> sessions_;
  bool shutting_down_ = false;
  std::mutex stop_mutex_;
  std::thread thread_;
};

Session::Session(ServerCore& core, tcp::socket socket)
    : core_(core), socket_(std::move(socket)), hello_timer_(core.io()), wait_timer_(core.io()) {}

void Session::start() {
  error_code ignored;
  socket_.set_option(tcp::no_delay(true), ignored);  // replies are small: send each at once
  hello_timer_.expires_after(core_.options().hello_timeout);
  hello_timer_.async_wait([self = shared_from_this()](const error_code& error) {
    if (!error && !self->authenticated_) self->close();
  });
  read_length();
}

void Session::refuse(const std::string& why) {
  if (pending_) end_wait();
  close_after_write_ = true;
  send(failed_reply(why, true));
}

void Session::close() {
  if (closed_) return;
  closed_ = true;
  if (pending_) end_wait();
  hello_timer_.cancel();
  wait_timer_.cancel();
  error_code ignored;
  socket_.close(ignored);
  core_.session_closed(shared_from_this());
}

const StoreWireLimits& Session::frame_limits() const {
  return authenticated_ ? core_.options().limits : core_.hello_limits();
}

void Session::read_length() {
  asio::async_read(socket_, asio::buffer(length_prefix_),
                   [self = shared_from_this()](const error_code& error, std::size_t) {
                     if (error) return self->close();
                     std::uint32_t body_bytes = 0;
                     if (auto wrong = decode_store_frame_length(self->length_prefix_, body_bytes,
                                                                self->frame_limits()))
                       return self->refuse(std::string("malformed frame") +
                                           (self->authenticated_ ? "" : " before the hello") +
                                           ": " + wrong->message);
                     self->read_body(body_bytes);
                   });
}

void Session::read_body(std::uint32_t body_bytes) {
  body_.resize(body_bytes);
  asio::async_read(socket_, asio::buffer(body_),
                   [self = shared_from_this()](const error_code& error, std::size_t) {
                     if (error) return self->close();
                     self->handle(self->body_);
                   });
}

void Session::handle(std::span<const std::byte> frame) {
  // A client sends its next request only after the reply to the previous one, so a frame that
  // arrives while its get or wait is pending breaks the protocol.
  if (pending_) return close();
  StoreMessage request;
  if (auto wrong = decode_store_body(frame, request, frame_limits()))
    return refuse(std::string("malformed frame") + (authenticated_ ? "" : " before the hello") +
                  ": " + wrong->message);
  if (!authenticated_) return handle_hello(request);

  switch (request.op) {
    case StoreOp::hello:
    case StoreOp::ok:
    case StoreOp::timed_out:
    case StoreOp::failed:
      return refuse(store_op_name(request.op) + " is not a request after the hello");
    case StoreOp::set_and_wait:
      core_.set(request.keys.front(), request.values.front());
      // From here on the request is the wait for the other keys, answered with their values.
      request = StoreMessage{StoreOp::set_and_wait,
                             request.number,
                             {request.keys.begin() + 1, request.keys.end()},
                             {}};
      [[fallthrough]];
    case StoreOp::get:
    case StoreOp::wait: {
      auto missing = core_.missing_keys(request);
      if (missing.empty())
        send(core_.satisfied_reply(request));
      else
        begin_wait(std::move(request), std::move(missing));
      break;
    }
    case StoreOp::set:
      send(core_.set(request.keys.front(), request.values.front()));
      break;
    case StoreOp::add:
      send(core_.add(request.keys.front(), request.number));
      break;
    case StoreOp::compare_and_set:
      send(core_.compare_and_set(request));
      break;
    case StoreOp::check:
      send(core_.check(request.keys));
      break;
    case StoreOp::erase:
      send(core_.erase(request.keys.front()));
      break;
    case StoreOp::erase_prefix:
      send(core_.erase_prefix(request.keys.front()));
      break;
  }
  read_length();
}

void Session::handle_hello(const StoreMessage& hello) {
  if (hello.op != StoreOp::hello)
    return refuse("the first frame must be a hello, got " + store_op_name(hello.op));
  const std::string& token = core_.options().token;
  if (!token.empty() && !store_tokens_equal(store_text(hello.values.front()), token))
    return refuse(std::string(kStoreAuthenticationFailed) + ": wrong or missing token (" +
                  kStoreTokenVariable + ")");
  authenticated_ = true;
  hello_timer_.cancel();
  send(ok_reply());
  read_length();
}

void Session::begin_wait(StoreMessage request, std::set<std::string> missing) {
  for (const std::string& key : missing) core_.add_waiter(key, shared_from_this());
  const auto timeout = std::chrono::milliseconds(request.number);
  pending_ = PendingWait{std::move(request), std::move(missing)};
  wait_timer_.expires_after(timeout);
  wait_timer_.async_wait(
      [self = shared_from_this(), generation = wait_generation_](const error_code& error) {
        if (!error) self->wait_timed_out(generation);
      });
}

void Session::end_wait() {
  for (const std::string& key : pending_->missing) core_.remove_waiter(key, this);
  pending_.reset();
  ++wait_generation_;
  wait_timer_.cancel();
}

void Session::key_arrived(const std::string& key) {
  if (!pending_) return;
  pending_->missing.erase(key);
  if (!pending_->missing.empty()) return;
  const StoreMessage reply = core_.satisfied_reply(pending_->request);
  end_wait();
  send(reply);
}

void Session::wait_timed_out(std::uint64_t generation) {
  if (!pending_ || generation != wait_generation_) return;
  StoreMessage reply{StoreOp::timed_out, 0, {}, {}};
  for (const std::string& key : pending_->request.keys)
    if (pending_->missing.contains(key)) reply.keys.push_back(key);
  end_wait();
  send(reply);
}

void Session::send(const StoreMessage& reply) {
  if (closed_) return;
  std::vector<std::byte> frame;
  if (auto wrong = encode_store_frame(reply, frame, core_.options().limits))
    encode_store_frame(failed_reply("cannot encode the reply: " + wrong->message), frame,
                       core_.options().limits);
  outbox_.push_back(std::move(frame));
  if (outbox_.size() == 1) write_next();
}

void Session::write_next() {
  asio::async_write(socket_, asio::buffer(outbox_.front()),
                    [self = shared_from_this()](const error_code& error, std::size_t) {
                      if (error) return self->close();
                      self->outbox_.pop_front();
                      if (!self->outbox_.empty())
                        self->write_next();
                      else if (self->close_after_write_)
                        self->close();
                    });
}

}  // namespace

class TcpStoreServer::Impl {
 public:
  explicit Impl(TcpStoreServerOptions options) : core(std::move(options)) {}
  ServerCore core;
};

TcpStoreServerOptions TcpStoreServerOptions::at(std::string host, std::uint16_t port,
                                                std::string token) {
  if (host.empty() || port == 0)
    throw std::invalid_argument("the store's address needs MASTER_ADDR and a non-zero MASTER_PORT");
  TcpStoreServerOptions options;
  options.host = std::move(host);
  options.port = port;
  options.token = std::move(token);
  return options;
}

TcpStoreServer::TcpStoreServer(TcpStoreServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {
  impl_->core.start();
}

TcpStoreServer::~TcpStoreServer() {
  stop();
}

std::uint16_t TcpStoreServer::port() const {
  return impl_->core.port();
}

const std::string& TcpStoreServer::address() const {
  return impl_->core.address();
}

void TcpStoreServer::stop() {
  impl_->core.stop();
}

}  // namespace odbatch
