#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "odbatch/store/store_token.hpp"
#include "store_test_support.hpp"

namespace odbatch {
namespace {

using namespace std::chrono_literals;
using test::Bytes;
using test::client_options;
using test::kGenerousBound;
using test::loopback_server_options;
using test::RawBody;
using test::RawConnection;
using test::seconds_since;
using Clock = std::chrono::steady_clock;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The StoreError a call throws; fails the test when it throws nothing.
template <typename Call>
StoreError store_error_of(Call call) {
  try {
    call();
  } catch (const StoreError& e) {
    return e;
  }
  FAIL("expected a StoreError");
  throw std::logic_error("unreachable");
}

TEST_CASE("every op on one connection") {
  TcpStoreServer server(loopback_server_options());
  TcpStoreClient client(client_options(server.port()));
  CHECK(client.address() == "127.0.0.1:" + std::to_string(server.port()));
  CHECK(server.address() == client.address());

  client.set("a", store_bytes("one"));
  CHECK(store_text(client.get("a", 0ms)) == "one");
  client.set("a", store_bytes("uno"));
  CHECK(store_text(client.get("a", 0ms)) == "uno");
  client.set("empty", {});
  CHECK(client.get("empty", 0ms).empty());

  CHECK(client.add("n", 5) == 5);
  CHECK(client.add("n", -7) == -2);
  CHECK(store_text(client.get("n", 0ms)) == "-2");

  CHECK(client.check({"a", "n"}));
  CHECK_FALSE(client.check({"a", "missing"}));
  client.wait({"a", "n"}, 0ms);

  const auto absent_swap = client.compare_and_set("c", std::nullopt, store_bytes("first"));
  CHECK(absent_swap.swapped);
  CHECK(store_text(*absent_swap.current) == "first");
  const auto refused = client.compare_and_set("c", std::nullopt, store_bytes("second"));
  CHECK_FALSE(refused.swapped);
  CHECK(store_text(*refused.current) == "first");
  const auto matched = client.compare_and_set("c", store_bytes("first"), store_bytes("third"));
  CHECK(matched.swapped);
  CHECK(store_text(client.get("c", 0ms)) == "third");
  const auto mismatched = client.compare_and_set("d", store_bytes("x"), store_bytes("y"));
  CHECK_FALSE(mismatched.swapped);
  CHECK_FALSE(mismatched.current.has_value());
  CHECK_FALSE(client.check({"d"}));

  CHECK(client.erase("a"));
  CHECK_FALSE(client.erase("a"));
  CHECK_FALSE(client.check({"a"}));

  for (const char* key : {"round/1/x", "round/1/y", "round/10/x", "round/2/x"})
    client.set(key, store_bytes("v"));
  CHECK(client.erase_prefix("round/1/") == 2);
  CHECK(client.check({"round/10/x", "round/2/x"}));
  CHECK_FALSE(client.check({"round/1/x"}));
  CHECK(client.erase_prefix("round/1/") == 0);
}

TEST_CASE("values keep every byte") {
  TcpStoreServer server(loopback_server_options());
  TcpStoreClient client(client_options(server.port()));
  Bytes value(70000);
  for (std::size_t i = 0; i < value.size(); ++i) value[i] = static_cast<std::byte>(i * 7);
  client.set("blob", value);
  CHECK(client.get("blob", 0ms) == value);
}

TEST_CASE("get and wait return once another client sets the keys") {
  TcpStoreServer server(loopback_server_options());
  TcpStoreClient waiter(client_options(server.port()));
  std::thread setter([port = server.port()] {
    TcpStoreClient client(client_options(port));
    std::this_thread::sleep_for(50ms);
    client.set("addr/0", store_bytes("10.0.0.1:5000"));
    client.add("ready", 1);
    client.compare_and_set("abort", std::nullopt, store_bytes("rank 1 failed"));
  });
  CHECK(store_text(waiter.get("addr/0", 30s)) == "10.0.0.1:5000");
  waiter.wait({"addr/0", "ready", "abort"}, 30s);
  setter.join();
  CHECK(store_text(waiter.get("abort", 0ms)) == "rank 1 failed");
}

TEST_CASE("set_and_wait: ranks meet in one call each, and each gets the others' values") {
  TcpStoreServer server(loopback_server_options());
  TcpStoreClient first(client_options(server.port()));
  std::vector<std::vector<std::byte>> second_got;
  std::thread second([&, port = server.port()] {
    TcpStoreClient client(client_options(port));
    second_got = client.set_and_wait("ready/1", store_bytes("bb"), {"ready/0", "ready/2"}, 30s);
  });
  first.set("ready/2", store_bytes(""));
  const auto first_got = first.set_and_wait("ready/0", store_bytes("a"), {"ready/1"}, 30s);
  second.join();
  REQUIRE(first_got.size() == 1);
  CHECK(store_text(first_got[0]) == "bb");
  REQUIRE(second_got.size() == 2);
  CHECK(store_text(second_got[0]) == "a");
  CHECK(second_got[1].empty());
  CHECK(store_text(first.get("ready/0", 0ms)) == "a");
}

TEST_CASE("set_and_wait that times out has set its key and names the keys still missing") {
  TcpStoreServer server(loopback_server_options());
  TcpStoreClient client(client_options(server.port()));
  client.set("present", {});
  const StoreError waited = store_error_of([&] {
    client.set_and_wait("mine", store_bytes("1"), {"present", "absent"}, 100ms);
  });
  CHECK(waited.kind() == StoreError::Kind::timeout);
  CHECK(waited.operation() == "set_and_wait");
  CHECK(contains(waited.what(), "still missing 'absent'"));
  CHECK(store_text(client.get("mine", 0ms)) == "1");
  CHECK_THROWS_AS(client.set_and_wait("mine", {}, {"k"}, -1ms), std::invalid_argument);
}

TEST_CASE("many waiters on one key are all woken by one set") {
  TcpStoreServer server(loopback_server_options());
  constexpr int kWaiters = 8;
  std::atomic<int> woken{0};
  std::vector<std::thread> waiters;
  for (int w = 0; w < kWaiters; ++w)
    waiters.emplace_back([&, port = server.port()] {
      TcpStoreClient client(client_options(port));
      client.wait({"go"}, 30s);
      ++woken;
    });
  TcpStoreClient setter(client_options(server.port()));
  setter.set("go", {});
  for (auto& t : waiters) t.join();
  CHECK(woken == kWaiters);
}

TEST_CASE("get and wait time out, naming the missing keys, and the connection stays usable") {
  TcpStoreServer server(loopback_server_options());
  TcpStoreClient client(client_options(server.port()));
  client.set("present", {});

  const auto start = Clock::now();
  const StoreError waited = store_error_of([&] { client.wait({"present", "k1", "k2"}, 200ms); });
  CHECK(seconds_since(start) < 5.0);
  CHECK(waited.kind() == StoreError::Kind::timeout);
  CHECK(waited.operation() == "wait");
  CHECK(waited.address() == server.address());
  CHECK(contains(waited.what(), "still missing 'k1', 'k2'"));
  CHECK(contains(waited.what(), server.address()));

  const StoreError got = store_error_of([&] { client.get("late", 0ms); });
  CHECK(got.kind() == StoreError::Kind::timeout);
  CHECK(got.key() == "'late'");
  CHECK(std::string(got.what()) ==
        "store get 'late' at " + server.address() + ": timed out after 0 ms, still missing 'late'");

  CHECK(client.check({"present"}));  // a timeout is an answer, not a broken connection
  CHECK_THROWS_AS(client.wait({"k"}, -1ms), std::invalid_argument);
}

TEST_CASE("compare_and_set: the first of several concurrent writers wins") {
  TcpStoreServer server(loopback_server_options());
  constexpr int kRanks = 8;
  std::vector<std::unique_ptr<TcpStoreClient>> clients;
  for (int r = 0; r < kRanks; ++r)
    clients.push_back(std::make_unique<TcpStoreClient>(client_options(server.port())));
  std::atomic<int> winners{0};
  std::vector<std::string> seen(kRanks);
  std::atomic<bool> go{false};
  std::vector<std::thread> ranks;
  for (int r = 0; r < kRanks; ++r)
    ranks.emplace_back([&, r] {
      while (!go) std::this_thread::yield();
      const auto result = clients[r]->compare_and_set(
          "abort", std::nullopt, store_bytes("rank " + std::to_string(r) + " failed"));
      if (result.swapped) ++winners;
      seen[r] = store_text(*result.current);
    });
  go = true;
  for (auto& t : ranks) t.join();
  CHECK(winners == 1);
  const std::string stored = store_text(clients[0]->get("abort", 0ms));
  for (const std::string& reason : seen) CHECK(reason == stored);
}

TEST_CASE("16 clients adding 200 times each leave consistent counters") {
  TcpStoreServer server(loopback_server_options());
  constexpr int kClients = 16, kAdds = 200;
  std::atomic<int> duplicates{0};
  std::vector<std::vector<std::int64_t>> results(kClients);
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c)
    threads.emplace_back([&, c, port = server.port()] {
      TcpStoreClient client(client_options(port));
      for (int i = 0; i < kAdds; ++i) {
        results[c].push_back(client.add("tickets", 1));
        client.add("client/" + std::to_string(c), 2);
      }
    });
  for (auto& t : threads) t.join();
  TcpStoreClient reader(client_options(server.port()));
  CHECK(reader.add("tickets", 0) == kClients * kAdds);
  // Each increment returned a distinct value: no two adds saw the same count.
  std::set<std::int64_t> tickets;
  for (const auto& r : results)
    for (std::int64_t t : r)
      if (!tickets.insert(t).second) ++duplicates;
  CHECK(duplicates == 0);
  CHECK(*tickets.begin() == 1);
  CHECK(*tickets.rbegin() == kClients * kAdds);
  for (int c = 0; c < kClients; ++c)
    CHECK(reader.add("client/" + std::to_string(c), 0) == 2 * kAdds);
}

TEST_CASE("one client shared by several threads serialises their calls") {
  TcpStoreServer server(loopback_server_options());
  TcpStoreClient client(client_options(server.port()));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) client.add("shared", 1);
    });
  for (auto& t : threads) t.join();
  CHECK(client.add("shared", 0) == 400);
}

TEST_CASE("add rejects values that are not counters and sums that overflow") {
  TcpStoreServer server(loopback_server_options());
  TcpStoreClient client(client_options(server.port()));
  client.set("text", store_bytes("12a"));
  const StoreError not_counter = store_error_of([&] { client.add("text", 1); });
  CHECK(not_counter.kind() == StoreError::Kind::rejected);
  CHECK(contains(not_counter.what(), "not a decimal counter"));
  client.add("big", std::numeric_limits<std::int64_t>::max());
  const StoreError overflow = store_error_of([&] { client.add("big", 1); });
  CHECK(contains(overflow.what(), "overflows a signed 64-bit counter"));
  CHECK(client.add("big", 0) == std::numeric_limits<std::int64_t>::max());
}

TEST_CASE("a request beyond the client's limits is refused before it is sent") {
  TcpStoreServer server(loopback_server_options());
  auto options = client_options(server.port());
  options.limits.max_value_bytes = 8;
  TcpStoreClient client(options);
  const StoreError error = store_error_of([&] { client.set("k", Bytes(9)); });
  CHECK(error.kind() == StoreError::Kind::rejected);
  CHECK(contains(error.what(), "value of 9 bytes exceeds the limit of 8"));
  const StoreError empty_key = store_error_of([&] { client.erase(""); });
  CHECK(contains(empty_key.what(), "empty key"));
  client.set("k", Bytes(8));  // the connection was never touched
}

TEST_CASE("a server with a token admits only clients that present it") {
  TcpStoreServer server(loopback_server_options("s3cret"));
  TcpStoreClient admitted(client_options(server.port(), "s3cret"));
  admitted.set("k", store_bytes("v"));

  for (const std::string token : {"", "s3cre", "s3cret!", "S3cret"}) {
    CAPTURE(token);
    const StoreError error =
        store_error_of([&] { TcpStoreClient refused(client_options(server.port(), token)); });
    CHECK(error.kind() == StoreError::Kind::authentication);
    CHECK(error.operation() == "connect");
    CHECK(contains(error.what(), "authentication failed"));
    CHECK(contains(error.what(), server.address()));
  }
  // A raw connection that skips the hello gets nothing.
  RawConnection raw(server.port());
  raw.send(test::encoded(StoreMessage{StoreOp::get, 0, {"k"}, {}}));
  const auto reply = raw.receive();
  REQUIRE(reply);
  CHECK(reply->op == StoreOp::failed);
  CHECK(contains(store_text(reply->values[0]), "the first frame must be a hello"));
  CHECK(raw.closed_by_server());

  CHECK(store_text(admitted.get("k", 0ms)) == "v");
}

TEST_CASE("a server without a token admits every client") {
  TcpStoreServer server(loopback_server_options());
  TcpStoreClient client(client_options(server.port(), "anything"));
  client.set("k", {});
}

TEST_CASE("the token comparison looks at every byte") {
  CHECK(store_tokens_equal("abc", "abc"));
  CHECK(store_tokens_equal("", ""));
  CHECK_FALSE(store_tokens_equal("abc", "abd"));
  CHECK_FALSE(store_tokens_equal("abc", "abcd"));
  CHECK_FALSE(store_tokens_equal("", "a"));
  CHECK_FALSE(store_tokens_equal(std::string("a\0b", 3), std::string("a\0c", 3)));
}

TEST_CASE("malformed and oversized frames are refused without disturbing other clients") {
  auto options = loopback_server_options();
  options.limits.max_frame_bytes = 1024;
  TcpStoreServer server(options);
  TcpStoreClient bystander(client_options(server.port()));
  bystander.set("k", store_bytes("v"));

  struct Case {
    std::string name;
    Bytes bytes;
    std::string complaint;
  };
  RawBody wrong_version;
  wrong_version.version = 9;
  wrong_version.keys = {"k"};
  wrong_version.values = {"v"};
  RawBody unknown_op;
  unknown_op.op = 42;
  RawBody lying_count;
  lying_count.op = static_cast<std::uint8_t>(StoreOp::check);
  lying_count.keys = {"a", "b"};
  Bytes truncated_key = lying_count.frame();
  truncated_key[4 + 12] = std::byte{3};  // key count 3, but only two keys follow
  Bytes garbage(64);
  for (std::size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<std::byte>(i * 37 + 11);
  const Case cases[] = {
      {"oversized length",
       {std::byte{0xff}, std::byte{0xff}, std::byte{0xff}, std::byte{0x7f}},
       "exceeds the limit of 1024"},
      {"just over the limit",
       {std::byte{0x01}, std::byte{0x04}, std::byte{0}, std::byte{0}},
       "frame of 1025 bytes exceeds the limit of 1024"},
      {"short length",
       {std::byte{3}, std::byte{0}, std::byte{0}, std::byte{0}},
       "shorter than the 20-byte body header"},
      {"wrong version", wrong_version.frame(), "unsupported version 9"},
      {"unknown op", unknown_op.frame(), "unknown op 42"},
      {"lying key count", truncated_key, "frame truncated"},
      {"garbage", garbage, "malformed frame"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    RawConnection raw(server.port());
    raw.hello();
    raw.send(c.bytes);
    const auto reply = raw.receive();
    REQUIRE(reply);
    CHECK(reply->op == StoreOp::failed);
    CHECK(reply->number == 1);  // says that the server closes the connection
    const std::string why = store_text(reply->values[0]);
    CAPTURE(why);
    CHECK(contains(why, "malformed frame"));
    CHECK(contains(why, c.complaint));
    CHECK(raw.closed_by_server());
    CHECK(store_text(bystander.get("k", 0ms)) == "v");
  }

  // Replies and a second hello are not requests.
  for (const StoreMessage& not_request : {StoreMessage{StoreOp::ok, 0, {}, {}},
                                          StoreMessage{StoreOp::hello, 0, {}, {store_bytes("")}}}) {
    RawConnection raw(server.port());
    raw.hello();
    raw.send(test::encoded(not_request));
    const auto reply = raw.receive();
    REQUIRE(reply);
    CHECK(contains(store_text(reply->values[0]), "is not a request after the hello"));
    CHECK(raw.closed_by_server());
  }

  // A request sent before the reply to the previous one closes the connection.
  {
    RawConnection raw(server.port());
    raw.hello();
    const Bytes wait = test::encoded(StoreMessage{StoreOp::wait, 10'000, {"never"}, {}});
    raw.send(wait);
    raw.send(wait);
    CHECK_FALSE(raw.receive());
  }
  // A client that goes away in the middle of a frame or of a wait is forgotten.
  {
    RawConnection raw(server.port());
    raw.hello();
    raw.send(test::encoded(StoreMessage{StoreOp::wait, 10'000, {"later"}, {}}));
  }
  {
    RawConnection raw(server.port());
    raw.hello();
    const Bytes frame = test::encoded(StoreMessage{StoreOp::set, 0, {"half"}, {store_bytes("v")}});
    raw.send(std::span(frame).first(frame.size() / 2));
  }
  bystander.set("later", {});
  CHECK_FALSE(bystander.check({"half"}));
  TcpStoreClient newcomer(client_options(server.port()));
  CHECK(store_text(newcomer.get("k", 0ms)) == "v");
}

TEST_CASE("before the hello, a length above the hello's size is refused at once") {
  TcpStoreServer server(loopback_server_options("s3cret"));
  TcpStoreClient bystander(client_options(server.port(), "s3cret"));
  bystander.set("k", store_bytes("v"));
  // 16 MiB announced, within the limit for an authenticated client: the server must neither wait
  // for such a body nor allocate for it. The reply comes though no body byte was sent.
  for (const std::uint32_t announced : {kMaxStoreHelloBodyBytes + 1, 16u << 20}) {
    CAPTURE(announced);
    RawConnection raw(server.port());
    Bytes prefix;
    test::append_le(prefix, announced, 4);
    const auto start = Clock::now();
    raw.send(prefix);
    const auto reply = raw.receive();
    REQUIRE(reply);
    CHECK(seconds_since(start) < 2.0);
    CHECK(reply->op == StoreOp::failed);
    CHECK(reply->number == 1);
    const std::string why = store_text(reply->values[0]);
    CHECK_MESSAGE(
        contains(why, "malformed frame before the hello: frame of " + std::to_string(announced) +
                          " bytes exceeds the limit of " + std::to_string(kMaxStoreHelloBodyBytes)),
        why);
    CHECK(raw.closed_by_server());
  }
  // The longest token still fits in a hello, and then the full limits apply.
  const std::string longest(kMaxStoreTokenBytes, 't');
  TcpStoreServer long_token_server(loopback_server_options(longest));
  TcpStoreClient admitted(client_options(long_token_server.port(), longest));
  admitted.set("big", Bytes(1u << 20, std::byte{7}));
  CHECK(admitted.get("big", 0ms).size() == 1u << 20);
  CHECK(store_text(bystander.get("k", 0ms)) == "v");
}

TEST_CASE("a token longer than a hello may carry is refused by the server, the client and env") {
  const std::string too_long(kMaxStoreTokenBytes + 1, 't');
  CHECK_THROWS_WITH_AS(TcpStoreServer(loopback_server_options(too_long)),
                       doctest::Contains("ODBATCH_STORE_TOKEN: a token of 1025 bytes"),
                       std::invalid_argument);
  TcpStoreServer server(loopback_server_options());
  CHECK_THROWS_AS(TcpStoreClient(client_options(server.port(), too_long)), std::invalid_argument);
  ::setenv(kStoreTokenVariable, too_long.c_str(), 1);
  CHECK_THROWS_AS(store_token_from_env(), std::invalid_argument);
  ::unsetenv(kStoreTokenVariable);
}

TEST_CASE("a connection that never says hello is dropped") {
  auto options = loopback_server_options();
  options.hello_timeout = 100ms;
  TcpStoreServer server(options);
  RawConnection silent(server.port());
  const auto start = Clock::now();
  CHECK(silent.closed_by_server());
  CHECK(seconds_since(start) < 5.0);
}

TEST_CASE("connections beyond the limit are refused with the reason") {
  auto options = loopback_server_options();
  options.max_connections = 2;
  TcpStoreServer server(options);
  TcpStoreClient first(client_options(server.port()));
  TcpStoreClient second(client_options(server.port()));
  const StoreError error =
      store_error_of([&] { TcpStoreClient refused(client_options(server.port())); });
  CHECK(error.kind() == StoreError::Kind::rejected);
  CHECK(contains(error.what(), "too many connections (limit 2)"));
  first.set("k", {});
  CHECK(second.check({"k"}));
}

TEST_CASE("stopping the server fails a pending wait at once, naming the address") {
  auto server = std::make_unique<TcpStoreServer>(loopback_server_options());
  const std::string address = server->address();
  TcpStoreClient client(client_options(server->port()));
  std::optional<StoreError> error;
  Clock::time_point failed_at;
  std::thread waiter([&] {
    try {
      client.wait({"never"}, 60s);
    } catch (const StoreError& e) {
      error = e;
      failed_at = Clock::now();
    }
  });
  std::this_thread::sleep_for(100ms);  // lets the wait reach the server; not needed for success
  const auto stopped_at = Clock::now();
  server->stop();
  waiter.join();
  REQUIRE(error);
  CHECK(error->kind() == StoreError::Kind::connection);
  CHECK(std::chrono::duration<double>(failed_at - stopped_at).count() < 5.0);
  CHECK(contains(error->what(), "wait 'never' at " + address));
  // Either the shutdown notice arrived, or the connection closed before the wait reached it.
  CHECK((contains(error->what(), "is shutting down") || contains(error->what(), "closed")));
}

TEST_CASE("after the server is gone, calls fail fast naming the address and operation") {
  auto server = std::make_unique<TcpStoreServer>(loopback_server_options());
  const std::string address = server->address();
  auto options = client_options(server->port());
  options.call_timeout = 2s;
  TcpStoreClient client(options);
  client.set("k", {});
  server.reset();

  const auto start = Clock::now();
  const StoreError first = store_error_of([&] { client.get("k", 0ms); });
  CHECK(first.kind() == StoreError::Kind::connection);
  CHECK(contains(first.what(), "store get 'k' at " + address));
  const StoreError later = store_error_of([&] { client.set("k", {}); });
  CHECK(later.kind() == StoreError::Kind::connection);
  CHECK(contains(later.what(), "store set 'k' at " + address));
  CHECK(contains(later.what(), "unusable after an earlier failure"));
  CHECK(seconds_since(start) < 5.0);
}

TEST_CASE("without a server, connecting fails at the connect timeout naming the address") {
  test::ReservedPort nobody;
  auto options = client_options(nobody.port());
  options.connect_timeout = 300ms;
  const auto start = Clock::now();
  const StoreError error = store_error_of([&] { TcpStoreClient client(options); });
  CHECK(seconds_since(start) < 5.0);
  CHECK(error.kind() == StoreError::Kind::connection);
  CHECK(error.operation() == "connect");
  CHECK(contains(error.what(), "127.0.0.1:" + std::to_string(nobody.port())));
  CHECK(contains(error.what(), "no store answered within 300 ms"));
}

TEST_CASE("a client started before its server connects once the server listens") {
  std::optional<TcpStoreServer> server;
  std::string value;
  {
    test::ReservedPort reserved;
    std::thread early([&, port = reserved.port()] {
      auto options = client_options(port);
      options.connect_timeout = 30s;
      TcpStoreClient client(options);
      value = store_text(client.get("hello", 30s));
    });
    std::this_thread::sleep_for(200ms);  // the client's first attempts are refused
    auto options = loopback_server_options();
    options.port = reserved.port();
    server.emplace(options);
    TcpStoreClient setter(client_options(server->port()));
    setter.set("hello", store_bytes("world"));
    early.join();
  }
  CHECK(value == "world");
}

// A listener that accepts TCP connections (the kernel completes them) but answers nothing, or
// only the hello of its first connection: a server that hangs.
class HungServer {
 public:
  explicit HungServer(bool answers_hello) : listener_(::socket(AF_INET, SOCK_STREAM, 0)) {
    REQUIRE(listener_ >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listener_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(listener_, 4) == 0);
    socklen_t length = sizeof address;
    REQUIRE(::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    port_ = ntohs(address.sin_port);
    if (answers_hello) thread_ = std::thread([this] { answer_hello_then_hang(); });
  }
  ~HungServer() {
    if (thread_.joinable()) thread_.join();
    ::close(listener_);
  }
  HungServer(const HungServer&) = delete;
  HungServer& operator=(const HungServer&) = delete;

  std::uint16_t port() const { return port_; }

 private:
  void answer_hello_then_hang() {
    const int fd = ::accept(listener_, nullptr, nullptr);
    if (fd < 0) return;
    timeval bound{};
    bound.tv_sec = 10;  // gives up even if the client never closes
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
    std::byte prefix[kStoreLengthPrefixBytes];
    if (::recv(fd, prefix, sizeof prefix, MSG_WAITALL) == sizeof prefix) {
      std::uint32_t body_bytes = 0;
      if (!decode_store_frame_length(prefix, body_bytes, {})) {
        Bytes body(body_bytes);
        ::recv(fd, body.data(), body.size(), MSG_WAITALL);
        const Bytes ok = test::encoded(StoreMessage{StoreOp::ok, 0, {}, {}});
        ::send(fd, ok.data(), ok.size(), MSG_NOSIGNAL);
      }
    }
    std::byte ignored{};
    while (::recv(fd, &ignored, 1, 0) > 0) {
    }
    ::close(fd);
  }

  int listener_;
  std::uint16_t port_ = 0;
  std::thread thread_;
};

TEST_CASE("a server that stops answering fails calls at the client's deadline") {
  HungServer hung(true);
  const std::string address = "127.0.0.1:" + std::to_string(hung.port());
  auto options = client_options(hung.port());
  options.call_timeout = 200ms;
  TcpStoreClient client(options);
  const auto start = Clock::now();
  const StoreError error = store_error_of([&] { client.set("k", {}); });
  CHECK(seconds_since(start) < 5.0);
  CHECK(error.kind() == StoreError::Kind::timeout);
  CHECK(std::string(error.what()) ==
        "store set 'k' at " + address + ": no reply by the deadline (the server may hang)");
  const StoreError later = store_error_of([&] { client.add("n", 1); });
  CHECK(later.kind() == StoreError::Kind::connection);
  CHECK(contains(later.what(), "unusable after an earlier failure"));
}

TEST_CASE("a server that never answers the hello fails the connect at the call timeout") {
  HungServer hung(false);
  auto options = client_options(hung.port());
  options.call_timeout = 200ms;
  const auto start = Clock::now();
  const StoreError error = store_error_of([&] { TcpStoreClient client(options); });
  CHECK(seconds_since(start) < 5.0);
  CHECK(error.kind() == StoreError::Kind::timeout);
  CHECK(error.operation() == "connect");
  CHECK(contains(error.what(), "hello: no reply by the deadline"));
}

TEST_CASE("options at an address: host, port and token, the token from ODBATCH_STORE_TOKEN") {
  const auto client = TcpStoreClientOptions::at("10.1.2.3", 29500, "secret");
  const auto server = TcpStoreServerOptions::at("10.1.2.3", 29500, "secret");
  CHECK(client.host == "10.1.2.3");
  CHECK(client.port == 29500);
  CHECK(client.token == "secret");
  CHECK(server.host == "10.1.2.3");
  CHECK(server.port == 29500);
  CHECK(server.token == "secret");
  ::setenv(kStoreTokenVariable, "from-env", 1);
  CHECK(store_token_from_env() == "from-env");
  ::unsetenv(kStoreTokenVariable);
  CHECK(store_token_from_env().empty());
  CHECK_THROWS_AS(TcpStoreClientOptions::at("", 29500, ""), std::invalid_argument);
  CHECK_THROWS_AS(TcpStoreServerOptions::at("10.1.2.3", 0, ""), std::invalid_argument);
}

TEST_CASE("a server that cannot bind says where") {
  TcpStoreServer first(loopback_server_options());
  auto options = loopback_server_options();
  options.port = first.port();
  const StoreError error = store_error_of([&] { TcpStoreServer second(options); });
  CHECK(error.operation() == "listen");
  CHECK(contains(error.what(), first.address()));
}

}  // namespace
}  // namespace odbatch
