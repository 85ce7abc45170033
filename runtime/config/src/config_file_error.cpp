#include "odbatch/config/config_file_error.hpp"

#include <utility>

namespace odbatch {
namespace {

std::string compose(const std::string& location, const std::string& key,
                    const std::string& problem) {
  std::string text = location;
  if (!key.empty()) text += (text.empty() ? "" : ": ") + key;
  return text + (text.empty() ? "" : ": ") + problem;
}

}  // namespace

ConfigFileError::ConfigFileError(std::string location, std::string key, std::string problem)
    : std::runtime_error(compose(location, key, problem)),
      location_(std::move(location)),
      key_(std::move(key)),
      problem_(std::move(problem)) {}

}  // namespace odbatch
