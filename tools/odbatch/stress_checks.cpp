#include "stress_checks.hpp"

#include <cctype>
#include <sstream>

namespace odbatch::cli {

std::string run_error_lines(const std::string& stderr_text) {
  std::istringstream in(stderr_text);
  std::string errors;
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("odbatch run: ") && line.find(" saved its state ") == std::string::npos)
      errors += line + '\n';
  return errors;
}

bool mentions(const std::string& text, const std::string& phrase) {
  for (auto at = text.find(phrase); at != std::string::npos; at = text.find(phrase, at + 1)) {
    const auto next = at + phrase.size();
    if (next == text.size() || !std::isdigit(static_cast<unsigned char>(text[next])) ||
        !std::isdigit(static_cast<unsigned char>(phrase.back())))
      return true;
  }
  return false;
}

std::optional<std::string> unnamed_cause(const std::string& stderr_text,
                                         const std::vector<std::string>& cause) {
  const std::string errors = run_error_lines(stderr_text);
  if (errors.empty()) return "it reported no error";
  std::string missing;
  for (const auto& phrase : cause)
    if (!mentions(errors, phrase)) missing += (missing.empty() ? "'" : ", '") + phrase + "'";
  if (missing.empty()) return std::nullopt;
  return "its error does not name " + missing;
}

}  // namespace odbatch::cli
