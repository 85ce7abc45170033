#pragma once
// A plain POSIX client for the metrics endpoint's tests: connects to 127.0.0.1, sends bytes,
// reads until the server closes. Every read has a deadline (SO_RCVTIMEO), so a test fails rather
// than hangs.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace odbatch::test {

class HttpTestClient {
 public:
  explicit HttpTestClient(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    if (fd_ < 0) throw std::runtime_error("socket() failed");
    timeval timeout{};
    timeout.tv_sec = 30;
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      ::close(fd_);
      throw std::runtime_error("cannot connect to 127.0.0.1:" + std::to_string(port));
    }
  }
  ~HttpTestClient() { ::close(fd_); }
  HttpTestClient(const HttpTestClient&) = delete;
  HttpTestClient& operator=(const HttpTestClient&) = delete;

  void send_text(const std::string& text) {
    std::size_t sent = 0;
    while (sent < text.size()) {
      const auto n = ::send(fd_, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;  // the server may close early on purpose (e.g. an oversized request)
      sent += static_cast<std::size_t>(n);
    }
  }

  // Everything until the server closes the connection (or resets it); throws after the deadline.
  std::string read_all() {
    std::string received;
    char chunk[4096];
    for (;;) {
      const auto n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n > 0) {
        received.append(chunk, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        throw std::runtime_error("the server neither answered nor closed within 30 s");
      return received;
    }
  }

 private:
  int fd_;
};

// An HTTP/1.1 answer taken apart.
struct HttpAnswer {
  int status = 0;
  std::string head;  // the status line and the header fields
  std::string body;
};

inline HttpAnswer parse_answer(const std::string& raw) {
  HttpAnswer answer;
  const auto end_of_head = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.1 ", 0) != 0 || end_of_head == std::string::npos) return answer;
  answer.status = std::stoi(raw.substr(9, 3));
  answer.head = raw.substr(0, end_of_head);
  answer.body = raw.substr(end_of_head + 4);
  return answer;
}

inline HttpAnswer http_get(std::uint16_t port, const std::string& target) {
  HttpTestClient client(port);
  client.send_text("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  return parse_answer(client.read_all());
}

}  // namespace odbatch::test
