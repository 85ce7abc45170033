#include <doctest/doctest.h>

#include <set>
#include <string>

#include "odbatch/core/config.hpp"

using namespace odbatch;

namespace {

std::string failing_field(const BatchingConfig& c) {
  try {
    validate(c);
  } catch (const ConfigError& e) {
    return e.field();
  }
  return "";
}

}  // namespace

TEST_CASE("the default configuration is valid") {
  CHECK(failing_field(BatchingConfig{}).empty());
}

TEST_CASE("validation names the bad field") {
  BatchingConfig c;
  c.token_budget = 0;
  CHECK(failing_field(c) == "token_budget");
  c = {};
  c.max_seq_len = 0;
  CHECK(failing_field(c) == "max_seq_len");
  c = {};
  c.window = 0;
  CHECK(failing_field(c) == "window");
  c = {};
  c.hold_pct = 101;
  CHECK(failing_field(c) == "hold_pct");
  c = {};
  c.max_defer_rounds = 5000;
  CHECK(failing_field(c) == "max_defer_rounds");
  c = {};
  c.window = 1u << 23;
  CHECK(failing_field(c) == "window");
  c = {};
  c.policy = static_cast<Policy>(9);
  CHECK(failing_field(c) == "policy");
}

TEST_CASE("the fingerprint changes with every batching field, the seed and the world size") {
  const BatchingConfig base;
  std::set<std::uint64_t> seen{fingerprint(base, 8)};
  auto expect_new = [&](const BatchingConfig& c, std::uint32_t world = 8) {
    CHECK(seen.insert(fingerprint(c, world)).second);
  };
  expect_new(base, 9);
  BatchingConfig c = base;
  c.token_budget += 1;
  expect_new(c);
  c = base;
  c.budget_mode = BudgetMode::packed;
  expect_new(c);
  c = base;
  c.patch_budget = 7;
  expect_new(c);
  c = base;
  c.max_seq_len += 1;
  expect_new(c);
  c = base;
  c.window += 1;
  expect_new(c);
  c = base;
  c.warmup = Warmup::linear;
  expect_new(c);
  c = base;
  c.max_defer_rounds += 1;
  expect_new(c);
  c = base;
  c.hold_pct -= 1;
  expect_new(c);
  c = base;
  c.policy = Policy::reference;
  expect_new(c);
  c = base;
  c.loss_scaling = LossScaling::tokens;
  expect_new(c);
  c = base;
  c.over_budget = OverBudgetPolicy::reject;
  expect_new(c);
  c = base;
  c.over_length = OverLengthPolicy::reject;
  expect_new(c);
  c = base;
  c.zero_labels = ZeroLabelPolicy::keep;
  expect_new(c);
  c = base;
  c.seed = 1;
  expect_new(c);
  CHECK(fingerprint(base, 8) == fingerprint(BatchingConfig{}, 8));
}

TEST_CASE("enum names round-trip and unknown names are refused") {
  for (auto v : {BudgetMode::padded, BudgetMode::packed})
    CHECK(parse_budget_mode(to_string(v)) == v);
  for (auto v : {Warmup::none, Warmup::short_ramp, Warmup::linear})
    CHECK(parse_warmup(to_string(v)) == v);
  for (auto v : {Policy::balanced, Policy::reference}) CHECK(parse_policy(to_string(v)) == v);
  for (auto v : {LossScaling::none, LossScaling::samples, LossScaling::tokens, LossScaling::labels})
    CHECK(parse_loss_scaling(to_string(v)) == v);
  for (auto v : {OverBudgetPolicy::singleton, OverBudgetPolicy::reject})
    CHECK(parse_over_budget_policy(to_string(v)) == v);
  for (auto v : {OverLengthPolicy::truncate, OverLengthPolicy::reject})
    CHECK(parse_over_length_policy(to_string(v)) == v);
  for (auto v : {ZeroLabelPolicy::reject, ZeroLabelPolicy::keep})
    CHECK(parse_zero_label_policy(to_string(v)) == v);
  CHECK(to_string(Warmup::short_ramp) == "short");
  CHECK_FALSE(parse_policy("Balanced").has_value());
  CHECK_FALSE(parse_warmup("").has_value());
}
