#include "stage_call.hpp"

#include "odbatch/config/stage_config.hpp"

namespace odbatch::actors {
namespace {

// What a rejection's detail may hold: enough for a message, bounded whatever a stage says.
constexpr std::size_t kMaxDetailBytes = 1024;

}  // namespace

std::string bounded_detail(std::string detail) {
  if (detail.size() <= kMaxDetailBytes) return detail;
  std::size_t cut = kMaxDetailBytes;
  while (cut > 0 && (static_cast<unsigned char>(detail[cut]) & 0xC0) == 0x80) --cut;
  const auto dropped = detail.size() - cut;
  detail.resize(cut);
  return detail + "... (" + std::to_string(dropped) + " more bytes)";
}

Rejection stage_rejection(const std::string& stage, SampleId id, const std::string& where,
                          const StageReject& verdict) {
  if (!is_stage_reason(verdict.reason))
    return Rejection{id, stage + ":invalid_reason",
                     where + ": the stage rejected with reason \"" +
                         bounded_detail(verdict.reason) +
                         "\", which is no reason name (1 to 64 letters, digits, '_', '-', '.')"};
  return Rejection{id, stage + ":" + verdict.reason,
                   where + (verdict.detail.empty() ? "" : ": " + bounded_detail(verdict.detail))};
}

}  // namespace odbatch::actors
