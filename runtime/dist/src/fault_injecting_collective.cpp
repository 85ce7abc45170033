#include "odbatch/dist/fault_injecting_collective.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "odbatch/dist/process_group_collective.hpp"
#include "odbatch/proto_msgs/proposal_codec.hpp"

namespace odbatch {
namespace {

void write_stderr(const std::string& line) {
  // One write: the line must be out before a SIGKILL or SIGSTOP this thread sends itself.
  const ssize_t written = ::write(STDERR_FILENO, line.data(), line.size());
  static_cast<void>(written);  // nowhere left to report a failed write to stderr
}

long long unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// SIGSTOP for `duration`: a child process stops this one, sleeps and resumes it (both signals
// from the child, so that the SIGCONT cannot come before the SIGSTOP); this thread waits for it.
void stop_for(std::chrono::milliseconds duration) {
  const pid_t parent = ::getpid();
  const pid_t resumer = ::fork();
  if (resumer == 0) {
    // Only async-signal-safe calls in the child of a threaded process.
    ::kill(parent, SIGSTOP);
    timespec remaining{static_cast<time_t>(duration.count() / 1000),
                       static_cast<long>(duration.count() % 1000) * 1'000'000};
    while (::nanosleep(&remaining, &remaining) != 0 && errno == EINTR) {
    }
    ::kill(parent, SIGCONT);
    ::_exit(0);
  }
  if (resumer < 0) throw CollectiveError("fault injection: cannot fork the resumer of a stop");
  int status = 0;
  while (::waitpid(resumer, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

std::optional<FaultSpec> fault_for_rank(std::string_view specs, std::uint32_t rank) {
  std::optional<FaultSpec> mine;
  while (!specs.empty()) {
    const auto semicolon = specs.find(';');
    const std::string_view text = specs.substr(0, semicolon);
    specs = semicolon == std::string_view::npos ? std::string_view{} : specs.substr(semicolon + 1);
    if (text.empty()) continue;
    const FaultSpec spec = parse_fault_spec(text);
    if (spec.rank != rank) continue;
    if (mine) throw std::invalid_argument("more than one fault for rank " + std::to_string(rank));
    mine = spec;
  }
  return mine;
}

CollectiveFactory round_collective_with_fault(FaultSpec fault) {
  return [fault](const DistEnv& env, const DistributedConfig& timing) {
    auto collective = make_round_collective(env, timing);
    if (env.rank != fault.rank) return collective;
    std::function<void()> stop_store;
    if (auto* group = dynamic_cast<ProcessGroupCollective*>(collective.get()))
      stop_store = [group] { group->stop_hosted_store(); };
    return std::unique_ptr<Collective>(std::make_unique<FaultInjectingCollective>(
        std::move(collective), fault, std::move(stop_store)));
  };
}

FaultInjectingCollective::FaultInjectingCollective(std::unique_ptr<Collective> inner,
                                                   FaultSpec fault,
                                                   std::function<void()> stop_store)
    : inner_(std::move(inner)), fault_(fault), stop_store_(std::move(stop_store)) {
  write_stderr("odbatch: rank " + std::to_string(inner_->rank()) + ": will inject fault " +
               to_string(fault_) + "\n");
}

FaultInjectingCollective::~FaultInjectingCollective() {
  if (exchanges_ <= fault_.round)
    write_stderr("odbatch: rank " + std::to_string(inner_->rank()) + ": fault " +
                 to_string(fault_) + " not injected: the run had " + std::to_string(exchanges_) +
                 " exchanges\n");
}

std::uint32_t FaultInjectingCollective::rank() const {
  return inner_->rank();
}

std::uint32_t FaultInjectingCollective::world_size() const {
  return inner_->world_size();
}

std::vector<std::vector<std::byte>> FaultInjectingCollective::allgather(
    std::span<const std::byte> mine, Clock::time_point deadline) {
  if (exchanges_++ != fault_.round) return inner_->allgather(mine, deadline);
  write_stderr("odbatch: rank " + std::to_string(inner_->rank()) + ": injecting fault " +
               to_string(fault_) + " at unix_ms=" + std::to_string(unix_ms_now()) + "\n");
  const std::vector<std::byte> replaced = inject(mine);
  return inner_->allgather(replaced.empty() ? mine : std::span<const std::byte>(replaced),
                           deadline);
}

std::vector<std::byte> FaultInjectingCollective::inject(std::span<const std::byte> mine) {
  std::vector<std::byte> frame(mine.begin(), mine.end());
  switch (fault_.kind) {
    case FaultKind::kill:
      ::raise(SIGKILL);
      return {};
    case FaultKind::stop:
      stop_for(fault_.duration);
      return {};
    case FaultKind::delay:
      std::this_thread::sleep_for(fault_.duration);
      return {};
    case FaultKind::store_unreachable:
      if (stop_store_) stop_store_();
      return {};
    case FaultKind::corrupt:
      if (!frame.empty()) frame[0] = ~frame[0];  // the magic's first byte
      return frame;
    case FaultKind::truncate:
      frame.resize(frame.size() / 2);
      return frame;
    case FaultKind::wrong_version: {
      Proposal proposal;
      if (const auto error = decode_proposal(frame, proposal))
        throw CollectiveError("fault injection: own proposal does not decode: " + error->message);
      proposal.version = static_cast<std::uint16_t>(kProtocolVersion + 1);
      return encode_proposal(proposal);
    }
  }
  return {};
}

void FaultInjectingCollective::abort(const std::string& reason) {
  inner_->abort(reason);
}

void FaultInjectingCollective::finish_epoch(std::uint64_t epoch, Clock::time_point deadline) {
  inner_->finish_epoch(epoch, deadline);
}

void FaultInjectingCollective::depart(std::uint64_t epoch, std::uint64_t steps,
                                      Clock::time_point deadline) {
  inner_->depart(epoch, steps, deadline);
}

void FaultInjectingCollective::set_abort_listener(AbortListener listener) {
  inner_->set_abort_listener(std::move(listener));
}

}  // namespace odbatch
