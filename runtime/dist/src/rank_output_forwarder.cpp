#include "rank_output_forwarder.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace odbatch {
namespace {

std::int64_t to_ns(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// Writes all of `text`, retrying short writes; output that cannot be written is dropped, as a
// closed terminal drops it.
void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

RankOutputForwarder::RankOutputForwarder(std::uint32_t ranks) {
  for (std::uint32_t rank = 0; rank < ranks; ++rank)
    for (const int target : {STDOUT_FILENO, STDERR_FILENO}) {
      int fds[2];
      if (::pipe2(fds, O_CLOEXEC) != 0) {
        const std::string why = std::strerror(errno);
        for (const Stream& s : streams_) ::close(s.read_fd), ::close(s.write_fd);
        throw std::runtime_error("cannot make the ranks' output pipes: " + why);
      }
      streams_.push_back({rank, fds[0], fds[1], target, {}});
    }
}

RankOutputForwarder::~RankOutputForwarder() {
  if (thread_.joinable()) finish(std::chrono::steady_clock::now());
  for (const Stream& s : streams_) {
    if (s.read_fd >= 0) ::close(s.read_fd);
    if (s.write_fd >= 0) ::close(s.write_fd);
  }
}

void RankOutputForwarder::redirect(std::uint32_t rank, posix_spawn_file_actions_t& actions) const {
  // dup2 clears close-on-exec on the copy: the rank keeps exactly its own two write ends.
  for (const Stream& s : streams_)
    if (s.rank == rank) posix_spawn_file_actions_adddup2(&actions, s.write_fd, s.target_fd);
}

void RankOutputForwarder::start() {
  for (Stream& s : streams_) {
    ::close(s.write_fd);
    s.write_fd = -1;
  }
  thread_ = std::thread([this] { copy(); });
}

void RankOutputForwarder::finish(std::chrono::steady_clock::time_point deadline) {
  deadline_ns_ = to_ns(deadline);
  if (thread_.joinable()) thread_.join();
}

void RankOutputForwarder::write_lines(Stream& stream, bool flush_partial) {
  const std::string prefix = "[rank " + std::to_string(stream.rank) + "]: ";
  std::size_t from = 0;
  std::string out;
  for (std::size_t end = stream.pending.find('\n'); end != std::string::npos;
       end = stream.pending.find('\n', from)) {
    out += prefix;
    out.append(stream.pending, from, end + 1 - from);
    from = end + 1;
  }
  stream.pending.erase(0, from);
  // A line without end (a progress bar redrawn with '\r') is cut rather than held forever.
  constexpr std::size_t kLongestLine = 1 << 16;
  if ((flush_partial || stream.pending.size() > kLongestLine) && !stream.pending.empty()) {
    out += prefix + stream.pending + '\n';
    stream.pending.clear();
  }
  if (!out.empty()) write_all(stream.target_fd, out);
}

void RankOutputForwarder::copy() {
  std::vector<pollfd> polled;
  std::vector<Stream*> open;
  for (Stream& s : streams_) open.push_back(&s);
  char buffer[1 << 16];
  while (!open.empty() && to_ns(std::chrono::steady_clock::now()) < deadline_ns_) {
    polled.clear();
    for (const Stream* s : open) polled.push_back({s->read_fd, POLLIN, 0});
    if (::poll(polled.data(), polled.size(), 100) < 0 && errno != EINTR) break;
    for (std::size_t i = polled.size(); i-- > 0;) {
      if (!(polled[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Stream& s = *open[i];
      const ssize_t n = ::read(s.read_fd, buffer, sizeof buffer);
      if (n > 0) {
        s.pending.append(buffer, static_cast<std::size_t>(n));
        write_lines(s, false);
      } else if (n == 0 || errno != EINTR) {
        write_lines(s, true);
        open.erase(open.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
  }
  for (Stream* s : open) write_lines(*s, true);
}

}  // namespace odbatch
