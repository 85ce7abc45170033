#pragma once
// The batching configuration: everything the round plan depends on, its validation and fingerprint.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace odbatch {

// Bumped whenever the proposal layout or the plan function's rules change.
inline constexpr std::uint16_t kProtocolVersion = 3;

enum class BudgetMode : std::uint8_t { padded, packed };
enum class Warmup : std::uint8_t { none, short_ramp, linear };
enum class Policy : std::uint8_t { balanced, reference };
enum class LossScaling : std::uint8_t { none, samples, tokens, labels };
enum class OverBudgetPolicy : std::uint8_t { singleton, reject };
enum class OverLengthPolicy : std::uint8_t { truncate, reject };
enum class ZeroLabelPolicy : std::uint8_t { reject, keep };

struct BatchingConfig {
  std::uint32_t token_budget = 16384;  // padded: |g| * max L <= B; packed: sum L <= B
  BudgetMode budget_mode = BudgetMode::padded;
  std::uint32_t patch_budget = 0;  // sum of vision patches per group; 0 = unlimited
  std::uint32_t max_seq_len = 16384;
  std::uint32_t window = 1024;  // samples admitted per round once warm
  // A short ramp puts the first batch after window/16 samples instead of a whole window.
  Warmup warmup = Warmup::short_ramp;
  std::uint32_t max_defer_rounds = 4;  // D
  std::uint32_t hold_pct = 98;         // fill a group needs to count as good
  Policy policy = Policy::balanced;
  LossScaling loss_scaling = LossScaling::labels;
  OverBudgetPolicy over_budget = OverBudgetPolicy::singleton;
  OverLengthPolicy over_length = OverLengthPolicy::truncate;
  ZeroLabelPolicy zero_labels = ZeroLabelPolicy::reject;
  std::uint64_t seed = 0;

  friend bool operator==(const BatchingConfig&, const BatchingConfig&) = default;
};

// A configuration error naming the offending field.
class ConfigError : public std::invalid_argument {
 public:
  ConfigError(std::string field, const std::string& message)
      : std::invalid_argument(field + ": " + message), field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

// Throws ConfigError for the first invalid field.
void validate(const BatchingConfig& config);

// Hash of everything the plan function depends on: batching config, seed, world size and the
// protocol version. Ranks whose fingerprints differ must not align with each other.
std::uint64_t fingerprint(const BatchingConfig& config, std::uint32_t world_size);

std::string_view to_string(BudgetMode v);
std::string_view to_string(Warmup v);
std::string_view to_string(Policy v);
std::string_view to_string(LossScaling v);
std::string_view to_string(OverBudgetPolicy v);
std::string_view to_string(OverLengthPolicy v);
std::string_view to_string(ZeroLabelPolicy v);

// Parsers accept exactly the names to_string produces; nullopt otherwise.
std::optional<BudgetMode> parse_budget_mode(std::string_view s);
std::optional<Warmup> parse_warmup(std::string_view s);
std::optional<Policy> parse_policy(std::string_view s);
std::optional<LossScaling> parse_loss_scaling(std::string_view s);
std::optional<OverBudgetPolicy> parse_over_budget_policy(std::string_view s);
std::optional<OverLengthPolicy> parse_over_length_policy(std::string_view s);
std::optional<ZeroLabelPolicy> parse_zero_label_policy(std::string_view s);

}  // namespace odbatch
