#include "odbatch/dist/inproc_collective.hpp"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>

#include "odbatch/core/departure.hpp"
#include "odbatch/core/rank_names.hpp"

namespace odbatch {
namespace {

class SharedGroup final : public InprocGroup, public std::enable_shared_from_this<SharedGroup> {
 public:
  explicit SharedGroup(std::uint32_t world_size)
      : world_size_(world_size),
        arriving_(world_size),
        arrived_(world_size, false),
        departures_(world_size) {}

  std::unique_ptr<Collective> member(std::uint32_t rank) override;

  std::uint32_t world_size() const { return world_size_; }

  std::vector<std::vector<std::byte>> allgather(std::uint32_t rank, std::span<const std::byte> mine,
                                                Collective::Clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    if (abort_reason_) throw CollectiveError(*abort_reason_);
    if (ended_) throw CollectiveError(*ended_);
    const std::uint64_t generation = generation_;
    arriving_[rank].assign(mine.begin(), mine.end());
    arrived_[rank] = true;
    if (++arrived_count_ == world_size_) {
      // The last rank publishes; earlier readers of the previous result have all arrived here,
      // so overwriting it is safe.
      completed_ = std::move(arriving_);
      arriving_.assign(world_size_, {});
      arrived_.assign(world_size_, false);
      arrived_count_ = 0;
      ++generation_;
      changed_.notify_all();
      return completed_;
    }
    const bool done = changed_.wait_until(lock, deadline, [&] {
      return generation_ != generation || abort_reason_.has_value() || ended_.has_value();
    });
    if (generation_ != generation) return completed_;
    if (!abort_reason_ && ended_) throw CollectiveError(*ended_);
    if (!done) abort_locked(timeout_reason(generation));
    throw CollectiveError(*abort_reason_);
  }

  void depart(std::uint32_t rank, Departure departure, Collective::Clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    if (abort_reason_) throw CollectiveError(*abort_reason_);
    departures_[rank] = departure;
    if (std::all_of(departures_.begin(), departures_.end(),
                    [](const auto& d) { return d.has_value(); })) {
      std::vector<Departure> all;
      for (const auto& d : departures_) all.push_back(*d);
      if (auto disagreement = departure_disagreement(all)) {
        abort_locked(*disagreement);
        throw CollectiveError(*abort_reason_);
      }
      ended_ = "the run ended: every rank departed at " + describe(departure);
      changed_.notify_all();
      return;
    }
    changed_.wait_until(lock, deadline,
                        [&] { return abort_reason_.has_value() || ended_.has_value(); });
    if (abort_reason_) throw CollectiveError(*abort_reason_);
    if (ended_) return;
    std::vector<std::uint32_t> missing;
    for (std::uint32_t r = 0; r < world_size_; ++r)
      if (!departures_[r]) missing.push_back(r);
    abort_locked(rank_names(missing) + " not departed at " + describe(departure) +
                 " by the deadline");
    throw CollectiveError(*abort_reason_);
  }

  void abort(const std::string& reason) {
    std::lock_guard lock(mutex_);
    abort_locked(reason);
  }

 private:
  void abort_locked(const std::string& reason) {
    if (!abort_reason_) abort_reason_ = reason;
    changed_.notify_all();
  }

  std::string timeout_reason(std::uint64_t generation) const {
    std::string missing;
    std::uint32_t count = 0;
    for (std::uint32_t r = 0; r < world_size_; ++r)
      if (!arrived_[r]) {
        missing += (missing.empty() ? "" : ", ") + std::to_string(r);
        ++count;
      }
    return "allgather " + std::to_string(generation) + " timed out waiting for " +
           (count == 1 ? "rank " : "ranks ") + missing;
  }

  const std::uint32_t world_size_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::vector<std::byte>> arriving_;
  std::vector<bool> arrived_;
  std::uint32_t arrived_count_ = 0;
  std::vector<std::vector<std::byte>> completed_;
  std::uint64_t generation_ = 0;
  std::optional<std::string> abort_reason_;
  std::vector<std::optional<Departure>> departures_;
  std::optional<std::string> ended_;  // why exchanges end once every rank departed
};

class InprocMember final : public Collective {
 public:
  InprocMember(std::shared_ptr<SharedGroup> group, std::uint32_t rank)
      : group_(std::move(group)), rank_(rank) {}
  std::uint32_t rank() const override { return rank_; }
  std::uint32_t world_size() const override { return group_->world_size(); }
  std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine,
                                                Clock::time_point deadline) override {
    return group_->allgather(rank_, mine, deadline);
  }
  void abort(const std::string& reason) override {
    group_->abort("rank " + std::to_string(rank_) + " aborted: " + reason);
  }
  void depart(std::uint64_t epoch, std::uint64_t steps, Clock::time_point deadline) override {
    group_->depart(rank_, Departure{epoch, steps}, deadline);
  }

 private:
  std::shared_ptr<SharedGroup> group_;
  std::uint32_t rank_;
};

std::unique_ptr<Collective> SharedGroup::member(std::uint32_t rank) {
  if (rank >= world_size_)
    throw std::invalid_argument("rank " + std::to_string(rank) + " is outside a group of " +
                                std::to_string(world_size_));
  return std::make_unique<InprocMember>(shared_from_this(), rank);
}

}  // namespace

std::shared_ptr<InprocGroup> InprocGroup::create(std::uint32_t world_size) {
  if (world_size == 0) throw std::invalid_argument("an in-process group needs at least one rank");
  return std::make_shared<SharedGroup>(world_size);
}

}  // namespace odbatch
