#include "odbatch/dist/flight_recorder.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include <nlohmann/json.hpp>

namespace odbatch {

FlightRecorder::FlightRecorder(std::uint32_t rank, std::size_t capacity)
    : rank_(rank), capacity_(std::max<std::size_t>(capacity, 1)) {}

double FlightRecorder::seconds_since_start() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void FlightRecorder::record(RoundTrace record) {
  std::lock_guard lock(mutex_);
  if (rounds_.size() == capacity_) rounds_.pop_front();
  rounds_.push_back(std::move(record));
}

std::vector<RoundTrace> FlightRecorder::rounds() const {
  std::lock_guard lock(mutex_);
  return {rounds_.begin(), rounds_.end()};
}

void FlightRecorder::write(const std::filesystem::path& file) const {
  nlohmann::ordered_json rounds = nlohmann::ordered_json::array();
  for (const auto& r : this->rounds()) {
    nlohmann::ordered_json j;
    j["epoch"] = r.epoch;
    j["round"] = r.round;
    j["state"] = r.state;
    j["window_samples"] = r.window_samples;
    j["proposal_bytes"] = r.proposal_bytes;
    j["steps"] = r.steps;
    j["digest"] = r.digest;
    j["epoch_over"] = r.epoch_over;
    j["started_seconds"] = r.started_seconds;
    j["exchange_ms"] = r.exchange_ms;
    j["plan_ms"] = r.plan_ms;
    if (!r.failure.empty()) j["failure"] = r.failure;
    rounds.push_back(std::move(j));
  }
  const nlohmann::ordered_json report{{"rank", rank_}, {"rounds", std::move(rounds)}};
  auto temporary = file;
  temporary += ".tmp";
  {
    std::ofstream out(temporary);
    // Failure texts can carry any bytes a peer wrote to the abort key.
    out << report.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
    out.close();
    if (!out)
      throw std::runtime_error("cannot write " + temporary.string() + ": " + std::strerror(errno));
  }
  std::error_code error;
  std::filesystem::rename(temporary, file, error);
  if (error) throw std::runtime_error("cannot write " + file.string() + ": " + error.message());
}

}  // namespace odbatch
