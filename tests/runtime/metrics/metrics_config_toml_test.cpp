// The [metrics] table of the pipeline file: off by default on loopback and a free port; its keys
// read; bad values and unknown keys are errors naming the key.
#include <doctest/doctest.h>

#include <string>

#include "odbatch/config/config_file_error.hpp"
#include "odbatch/config/pipeline_config.hpp"

using namespace odbatch;

namespace {

constexpr std::string_view kMinimal = R"(
[source]
files = ["train.jsonl"]

[tokenizer]
model = "spm.model"
)";

PipelineConfig parse(const std::string& metrics_table) {
  return PipelineConfig::from_toml(std::string(kMinimal) + metrics_table, "p.toml", "/base");
}

std::string error_of(const std::string& metrics_table) {
  try {
    parse(metrics_table);
  } catch (const ConfigFileError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("without a [metrics] table the endpoint is off, on loopback, on a free port") {
  const auto c = parse("");
  CHECK_FALSE(c.metrics.enabled);
  CHECK(c.metrics.address == "127.0.0.1");
  CHECK(c.metrics.port == 0);
}

TEST_CASE("the [metrics] keys are read") {
  const auto c = parse("[metrics]\nenabled = true\naddress = \"::1\"\nport = 9400\n");
  CHECK(c.metrics.enabled);
  CHECK(c.metrics.address == "::1");
  CHECK(c.metrics.port == 9400);
  CHECK(parse("[metrics]\naddress = \"0.0.0.0\"\nport = 65535\n").metrics.port == 65535);
}

TEST_CASE("bad [metrics] values and unknown keys name the key") {
  const auto unknown = error_of("[metrics]\nenable = true\n");
  CHECK(unknown.find("metrics.enable") != std::string::npos);
  CHECK(unknown.find("unknown key") != std::string::npos);
  CHECK(unknown.find("p.toml:8") != std::string::npos);

  const auto not_boolean = error_of("[metrics]\nenabled = \"yes\"\n");
  CHECK(not_boolean.find("metrics.enabled") != std::string::npos);
  CHECK(not_boolean.find("expected true or false") != std::string::npos);

  const auto port_too_large = error_of("[metrics]\nport = 65536\n");
  CHECK(port_too_large.find("metrics.port") != std::string::npos);
  CHECK(port_too_large.find("between 0 and 65535") != std::string::npos);
  CHECK(error_of("[metrics]\nport = -1\n").find("metrics.port") != std::string::npos);
  CHECK(error_of("[metrics]\nport = \"9400\"\n").find("metrics.port") != std::string::npos);

  const auto host_name = error_of("[metrics]\naddress = \"localhost\"\n");
  CHECK(host_name.find("metrics.address") != std::string::npos);
  CHECK(host_name.find("numeric IPv4 or IPv6") != std::string::npos);
  CHECK(error_of("[metrics]\naddress = 127\n").find("metrics.address") != std::string::npos);

  CHECK(error_of("metrics = 1\n").find("metrics") != std::string::npos);
  CHECK(error_of("[metric]\nport = 1\n").find("distributed or metrics") != std::string::npos);
}
