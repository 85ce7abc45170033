#include "odbatch/core/run_settings.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "odbatch/core/rank_names.hpp"

namespace odbatch {
namespace {

// The value rank `settings` holds for `name`, if it lists the setting.
std::optional<std::string> value_of(const std::vector<RunSetting>& settings,
                                    const std::string& name) {
  for (const auto& setting : settings)
    if (setting.name == name) return setting.value;
  return std::nullopt;
}

// "false on rank 2, true on ranks 0, 1": values in order of first appearance by rank.
std::string who_holds_what(std::span<const std::vector<RunSetting>> per_rank,
                           const std::string& name) {
  std::vector<std::pair<std::optional<std::string>, std::vector<std::uint32_t>>> holders;
  for (std::uint32_t r = 0; r < per_rank.size(); ++r) {
    auto value = value_of(per_rank[r], name);
    auto same = holders.begin();
    while (same != holders.end() && same->first != value) ++same;
    if (same == holders.end())
      holders.push_back({std::move(value), {r}});
    else
      same->second.push_back(r);
  }
  // The value fewer ranks hold comes first: it is most likely the odd one out.
  std::stable_sort(holders.begin(), holders.end(),
                   [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
  std::string text;
  for (const auto& [value, ranks] : holders) {
    if (!text.empty()) text += ", ";
    text += (value ? *value : "(not set)") + " on " + rank_names(ranks);
  }
  return text;
}

}  // namespace

std::vector<std::string> rank_setting_differences(
    std::span<const std::vector<RunSetting>> per_rank) {
  std::vector<std::string> names;
  std::set<std::string> listed;
  for (const auto& settings : per_rank)
    for (const auto& setting : settings)
      if (listed.insert(setting.name).second) names.push_back(setting.name);
  std::vector<std::string> differences;
  if (per_rank.empty()) return differences;
  for (const auto& name : names) {
    const auto first = value_of(per_rank.front(), name);
    for (const auto& settings : per_rank.subspan(1)) {
      if (value_of(settings, name) != first) {
        differences.push_back(name + ": " + who_holds_what(per_rank, name));
        break;
      }
    }
  }
  return differences;
}

}  // namespace odbatch
