#pragma once
// An error in a config file, located and naming the offending key, e.g.
// "pipeline.toml:7:10: batching.window: expected a positive integer, got -3".
#include <stdexcept>
#include <string>

namespace odbatch {

class ConfigFileError : public std::runtime_error {
 public:
  // `location` is "file", "file:line" or "file:line:column"; `key` is empty for syntax errors and
  // unreadable files.
  ConfigFileError(std::string location, std::string key, std::string problem);

  const std::string& location() const { return location_; }
  const std::string& key() const { return key_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string location_;
  std::string key_;
  std::string problem_;
};

}  // namespace odbatch
