#include "odbatch/config/batching_config_toml.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "odbatch/config/batching_settings.hpp"

namespace odbatch {
namespace {

// The error a document raises, or an empty error when it parses.
ConfigFileError error_of(std::string_view document, const BatchingConfig& base = {}) {
  try {
    batching_config_from_toml(document, "test.toml", base);
  } catch (const ConfigFileError& e) {
    return e;
  }
  return ConfigFileError("", "", "");
}

}  // namespace

TEST_CASE("every key of the [batching] table sets its field") {
  const auto config = batching_config_from_toml(R"(
[batching]
token_budget = 8192
budget_mode = "packed"
patch_budget = 4096
max_seq_len = 6000
window = 64
warmup = "short"
max_defer_rounds = 2
hold_pct = 95
policy = "reference"
loss_scaling = "tokens"
over_budget = "reject"
over_length = "reject"
zero_labels = "keep"
seed = 9223372036854775807
)",
                                                "test.toml");
  CHECK(config.token_budget == 8192);
  CHECK(config.budget_mode == BudgetMode::packed);
  CHECK(config.patch_budget == 4096);
  CHECK(config.max_seq_len == 6000);
  CHECK(config.window == 64);
  CHECK(config.warmup == Warmup::short_ramp);
  CHECK(config.max_defer_rounds == 2);
  CHECK(config.hold_pct == 95);
  CHECK(config.policy == Policy::reference);
  CHECK(config.loss_scaling == LossScaling::tokens);
  CHECK(config.over_budget == OverBudgetPolicy::reject);
  CHECK(config.over_length == OverLengthPolicy::reject);
  CHECK(config.zero_labels == ZeroLabelPolicy::keep);
  CHECK(config.seed == 9223372036854775807ULL);
}

TEST_CASE("keys the table omits keep the base configuration's values") {
  BatchingConfig base;
  base.window = 256;
  base.seed = 7;
  const auto config = batching_config_from_toml("[batching]\ntoken_budget = 4096\n", "t", base);
  CHECK(config.token_budget == 4096);
  CHECK(config.window == 256);
  CHECK(config.seed == 7);
}

TEST_CASE("a document without a [batching] table yields the base, other tables are ignored") {
  BatchingConfig base;
  base.hold_pct = 90;
  CHECK(batching_config_from_toml("[reader]\npath = \"x\"\n", "t", base) == base);
  CHECK(batching_config_from_toml("", "t") == BatchingConfig{});
}

TEST_CASE("dotted keys and inline tables are tables too") {
  CHECK(batching_config_from_toml("batching.window = 32\n", "t").window == 32);
  CHECK(batching_config_from_toml("batching = { window = 16 }\n", "t").window == 16);
}

TEST_CASE("a negative integer names the key, file, line and column") {
  const auto e = error_of("[batching]\n\nwindow = -3\n");
  CHECK(e.key() == "batching.window");
  CHECK(e.location() == "test.toml:3:10");
  CHECK(std::string(e.what()) ==
        "test.toml:3:10: batching.window: expected a positive integer, got -3");
}

TEST_CASE("zero is rejected where a field must be positive, accepted where it may be zero") {
  CHECK(error_of("[batching]\ntoken_budget = 0\n").problem() ==
        "expected a positive integer, got 0");
  CHECK(batching_config_from_toml("[batching]\npatch_budget = 0\n", "t").patch_budget == 0);
  CHECK(error_of("[batching]\nmax_defer_rounds = -1\n").problem() ==
        "expected a non-negative integer, got -1");
}

TEST_CASE("integers beyond the field's range are errors") {
  const auto e = error_of("[batching]\nwindow = 4294967296\n");
  CHECK(e.key() == "batching.window");
  CHECK(e.problem() == "expected an integer at most 4294967295, got 4294967296");
}

TEST_CASE("values of the wrong type name what was found") {
  CHECK(error_of("[batching]\nwindow = \"64\"\n").problem() ==
        "expected a positive integer, got \"64\"");
  CHECK(error_of("[batching]\nwindow = 64.5\n").problem() ==
        "expected a positive integer, got a floating-point number (64.5)");
  CHECK(error_of("[batching]\npolicy = true\n").problem() ==
        "expected one of balanced, reference; got a boolean (true)");
  CHECK(error_of("[batching]\nseed = [1]\n").problem() ==
        "expected a non-negative integer, got an array");
}

TEST_CASE("an unknown enum name lists the accepted names") {
  const auto e = error_of("[batching]\nwarmup = \"fast\"\n");
  CHECK(e.key() == "batching.warmup");
  CHECK(e.problem() == "expected one of none, short, linear; got \"fast\"");
}

TEST_CASE("an unknown key is an error naming it") {
  const auto e = error_of("[batching]\nwindow = 8\nwindw = 8\n");
  CHECK(e.key() == "batching.windw");
  CHECK(e.location() == "test.toml:3:9");
  CHECK(e.problem().starts_with("unknown key (known keys: token_budget, budget_mode,"));
}

TEST_CASE("the first problem in document order is reported") {
  CHECK(error_of("[batching]\nzzz = 1\nwindow = -1\n").key() == "batching.zzz");
  CHECK(error_of("[batching]\nwindow = -1\nzzz = 1\n").key() == "batching.window");
}

TEST_CASE("a batching key that is not a table is an error") {
  const auto e = error_of("batching = 3\n");
  CHECK(e.key() == "batching");
  CHECK(e.problem() == "expected a table, got an integer (3)");
}

TEST_CASE("a syntax error names file, line and column") {
  const auto e = error_of("[batching]\nwindow = = 3\n");
  CHECK(e.key().empty());
  CHECK(e.location() == "test.toml:2:10");
  CHECK(e.problem().starts_with("TOML syntax error: "));
}

TEST_CASE("validation runs last and is located at the offending key") {
  const auto e = error_of("[batching]\nwindow = 8\nhold_pct = 150\n");
  CHECK(e.key() == "batching.hold_pct");
  CHECK(e.location() == "test.toml:3:12");
  CHECK(e.problem() == "must be between 0 and 100 (got 150)");
}

TEST_CASE("validation of a value from the base configuration points at the table") {
  BatchingConfig base;
  base.max_defer_rounds = 2000;
  const auto e = error_of("\n[batching]\nwindow = 8\n", base);
  CHECK(e.key() == "batching.max_defer_rounds");
  CHECK(e.location() == "test.toml:2:1");
}

TEST_CASE("a file is read with its path in errors") {
  const auto path = std::filesystem::temp_directory_path() /
                    ("odbatch_batching_config_test_" + std::to_string(::getpid()) + ".toml");
  {
    std::ofstream out(path);
    out << "# comment\n[batching]\nwindow = 128\npolicy = \"fast\"\n";
  }
  try {
    load_batching_config_toml(path);
    FAIL("expected a ConfigFileError");
  } catch (const ConfigFileError& e) {
    CHECK(e.location() == path.string() + ":4:10");
    CHECK(e.key() == "batching.policy");
  }
  {
    std::ofstream out(path);
    out << "[batching]\nwindow = 128\n";
  }
  CHECK(load_batching_config_toml(path).window == 128);
  std::filesystem::remove(path);
}

TEST_CASE("a missing file is an error naming it") {
  const std::filesystem::path path = "/nonexistent/odbatch.toml";
  try {
    load_batching_config_toml(path);
    FAIL("expected a ConfigFileError");
  } catch (const ConfigFileError& e) {
    CHECK(e.location() == path.string());
    CHECK(e.problem().starts_with("cannot read: "));
  }
}

TEST_CASE("settings round-trip by name") {
  BatchingConfig config;
  config.warmup = Warmup::short_ramp;
  config.seed = 42;
  CHECK(batching_setting_names().size() == 14);
  BatchingConfig copy{};
  copy.window = 1;
  for (const auto name : batching_setting_names())
    set_batching_setting(copy, name, get_batching_setting(config, name));
  CHECK(copy == config);
  CHECK(std::get<std::string>(get_batching_setting(config, "warmup")) == "short");
  CHECK_THROWS_AS(get_batching_setting(config, "nope"), SettingError);
}

TEST_CASE("unsigned values beyond int64 are accepted for the seed") {
  BatchingConfig config;
  set_batching_setting(config, "seed", std::uint64_t{18446744073709551615ULL});
  CHECK(config.seed == 18446744073709551615ULL);
}

}  // namespace odbatch
