#include "length_trace.hpp"

#include <charconv>
#include <fstream>
#include <string>
#include <string_view>
#include <unordered_set>

#include "json_input.hpp"

namespace odbatch::cli {
namespace {

constexpr std::string_view kHeader = "id,tokens,labels,patches";

// Parses the next comma-separated unsigned field of `line` from `at`.
template <class Unsigned>
bool next_field(std::string_view line, std::size_t& at, Unsigned& value, bool last) {
  const auto end = last ? line.size() : line.find(',', at);
  if (end == std::string_view::npos) return false;
  const auto [stop, error] = std::from_chars(line.data() + at, line.data() + end, value);
  if (error != std::errc{} || stop != line.data() + end || end == at) return false;
  at = end + 1;
  return true;
}

}  // namespace

void write_length_trace(const std::filesystem::path& file, std::span<const SampleCost> samples) {
  std::ofstream out(file);
  out << kHeader << '\n';
  for (const auto& s : samples)
    out << s.id << ',' << s.tokens << ',' << s.labels << ',' << s.patches << '\n';
  out.flush();
  if (!out) throw InputError("cannot write " + file.string());
}

std::vector<SampleCost> read_length_trace(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw InputError("cannot read " + file.string());
  const auto where = [&](std::uint64_t line) {
    return file.string() + ":" + std::to_string(line) + ": ";
  };
  std::string line;
  if (!std::getline(in, line) || line != kHeader)
    throw InputError(where(1) + "expected the header \"" + std::string(kHeader) + "\"");
  std::vector<SampleCost> samples;
  std::unordered_set<SampleId> ids;
  for (std::uint64_t number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    SampleCost s;
    std::size_t at = 0;
    if (!next_field(line, at, s.id, false) || !next_field(line, at, s.tokens, false) ||
        !next_field(line, at, s.labels, false) || !next_field(line, at, s.patches, true))
      throw InputError(where(number) + "expected four unsigned integers id,tokens,labels,patches");
    if (s.tokens == 0) throw InputError(where(number) + "a sample needs at least one token");
    if (!ids.insert(s.id).second)
      throw InputError(where(number) + "id " + std::to_string(s.id) + " appears twice");
    samples.push_back(s);
  }
  if (samples.empty()) throw InputError(file.string() + ": the trace holds no sample");
  return samples;
}

}  // namespace odbatch::cli
