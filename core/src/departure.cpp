#include "odbatch/core/departure.hpp"

#include <charconv>

namespace odbatch {

std::string describe(const Departure& departure) {
  return "step " + std::to_string(departure.steps) + " of epoch " + std::to_string(departure.epoch);
}

std::string encode_departure(const Departure& departure) {
  return std::to_string(departure.epoch) + " " + std::to_string(departure.steps);
}

std::optional<Departure> decode_departure(std::string_view text) {
  Departure departure;
  const char* const end = text.data() + text.size();
  const auto [after_epoch, epoch_error] = std::from_chars(text.data(), end, departure.epoch);
  if (epoch_error != std::errc{} || after_epoch == end || *after_epoch != ' ') return std::nullopt;
  const auto [after_steps, steps_error] = std::from_chars(after_epoch + 1, end, departure.steps);
  if (steps_error != std::errc{} || after_steps != end) return std::nullopt;
  return departure;
}

std::optional<std::string> departure_disagreement(std::span<const Departure> by_rank) {
  for (std::size_t r = 1; r < by_rank.size(); ++r)
    if (by_rank[r] != by_rank[0])
      return "rank 0 departs at " + describe(by_rank[0]) + " but rank " + std::to_string(r) +
             " at " + describe(by_rank[r]) + ": ranks must depart at an agreed step";
  return std::nullopt;
}

}  // namespace odbatch
