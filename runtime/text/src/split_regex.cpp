#include "split_regex.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace odbatch::text_detail {
namespace {

// `\s` and `\S` as Unicode White_Space, inside and outside character classes; every other
// escape is copied as it is.
std::string with_white_space_property(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size() + 32);
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '\\' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    const char escaped = pattern[++i];
    if (escaped == 's')
      out += "\\p{White_Space}";
    else if (escaped == 'S')
      out += "\\P{White_Space}";
    else
      (out += '\\') += escaped;
  }
  return out;
}

std::size_t utf8_sequence_length(unsigned char lead) {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

struct MatchDataDeleter {
  void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
};
struct JitStackDeleter {
  void operator()(pcre2_jit_stack* stack) const { pcre2_jit_stack_free(stack); }
};
struct MatchContextDeleter {
  void operator()(pcre2_match_context* context) const { pcre2_match_context_free(context); }
};

// Per-thread match state: matching is const and concurrent, and these are reused across calls.
// The JIT stack grows to kJitStackBytes so long runs of one class never fail for lack of stack.
struct ThreadMatchState {
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> data{pcre2_match_data_create(1, nullptr)};
  std::unique_ptr<pcre2_jit_stack, JitStackDeleter> stack{
      pcre2_jit_stack_create(64 * 1024, kJitStackBytes, nullptr)};
  std::unique_ptr<pcre2_match_context, MatchContextDeleter> context{
      pcre2_match_context_create(nullptr)};

  ThreadMatchState() {
    if (!data || !stack || !context) throw std::bad_alloc();
    pcre2_jit_stack_assign(context.get(), nullptr, stack.get());
    pcre2_set_depth_limit(context.get(), kMatchDepthLimit);
    pcre2_set_heap_limit(context.get(), kMatchHeapLimitKib);
  }
};

std::string quoted_pattern(const std::string& pattern) {
  if (pattern.size() <= kPatternQuoteBytes) return "'" + pattern + "'";
  // Cut at a character boundary.
  std::size_t cut = kPatternQuoteBytes;
  while (cut > 0 && (static_cast<unsigned char>(pattern[cut]) & 0xC0) == 0x80) --cut;
  return "'" + pattern.substr(0, cut) + "...' (" + std::to_string(pattern.size()) + " bytes)";
}

// What the limit a failed match hit was, or PCRE2's own words for another failure.
std::string match_failure(int rc, std::uint64_t step_budget) {
  switch (rc) {
    case PCRE2_ERROR_MATCHLIMIT:
      return "the match budget of " + std::to_string(step_budget) + " (" +
             std::to_string(kMatchBudgetBase) + " + " + std::to_string(kMatchBudgetPerByte) +
             " per byte of text)";
    case PCRE2_ERROR_DEPTHLIMIT:
      return "the depth limit of " + std::to_string(kMatchDepthLimit);
    case PCRE2_ERROR_HEAPLIMIT:
      return "the heap limit of " + std::to_string(kMatchHeapLimitKib) + " KiB";
    case PCRE2_ERROR_JIT_STACKLIMIT:
      return "the JIT stack limit of " + std::to_string(kJitStackBytes) + " bytes";
    default:
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof message);
      return "an error (PCRE2: " + std::string(reinterpret_cast<const char*>(message)) + ")";
  }
}

}  // namespace

std::uint64_t match_step_budget(std::size_t bytes) {
  return kMatchBudgetBase + kMatchBudgetPerByte * std::uint64_t{bytes};
}

struct SplitRegex::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

SplitRegex::SplitRegex(std::string_view pattern)
    : pattern_(pattern), compiled_(std::make_unique<Compiled>()) {
  const std::string translated = with_white_space_property(pattern);
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  compiled_->code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                    PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &error, &error_offset, nullptr);
  if (compiled_->code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    throw std::invalid_argument("regex does not compile (PCRE2: " +
                                std::string(reinterpret_cast<const char*>(message)) + ")");
  }
  // Without JIT (an unsupported CPU) PCRE2's interpreter gives the same matches, only slower.
  pcre2_jit_compile(compiled_->code, PCRE2_JIT_COMPLETE | PCRE2_JIT_PARTIAL_HARD);
}

SplitRegex::SplitRegex(SplitRegex&&) noexcept = default;
SplitRegex& SplitRegex::operator=(SplitRegex&&) noexcept = default;
SplitRegex::~SplitRegex() = default;

void SplitRegex::find_all(std::string_view text, std::vector<MatchSpan>& matches) const {
  thread_local ThreadMatchState state;
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  const std::uint64_t step_budget = match_step_budget(text.size());
  std::uint64_t budget_left = step_budget;
  // One match call from `start`, charged as the comment on kFreeMatchSteps says. A result within
  // a window is the whole text's: a hard partial match is returned whenever the end of the window
  // was reached (or, for an empty match at its end, could change), and no match is retried wider.
  const auto match_from = [&](std::size_t start) {
    std::uint64_t window = kFreeWindowBytes;
    std::uint64_t limit = kFreeMatchSteps;
    for (bool first_try = true;; first_try = false) {
      std::size_t end =
          static_cast<std::size_t>(std::min<std::uint64_t>(text.size(), start + window));
      while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
      const bool whole_rest = end == text.size();
      pcre2_set_match_limit(state.context.get(), static_cast<std::uint32_t>(limit));
      // The text was validated as UTF-8 once by the caller; PCRE2 need not check it per call.
      const int rc = pcre2_match(compiled_->code, subject, end, start,
                                 PCRE2_NO_UTF_CHECK | (whole_rest ? 0 : PCRE2_PARTIAL_HARD),
                                 state.data.get(), state.context.get());
      // Every later try costs at least one step, so the retries end.
      if (!first_try) budget_left -= std::min(limit + (end - start), budget_left);
      const bool needs_steps = rc == PCRE2_ERROR_MATCHLIMIT;
      const bool needs_text =
          !whole_rest && (rc == PCRE2_ERROR_PARTIAL || rc == PCRE2_ERROR_NOMATCH);
      if (!needs_steps && !needs_text) return rc;
      if (budget_left == 0 || (needs_steps && limit == UINT32_MAX)) return PCRE2_ERROR_MATCHLIMIT;
      if (needs_steps)
        limit = std::min({2 * limit, budget_left, std::uint64_t{UINT32_MAX}});
      else
        window *= 2;
    }
  };
  std::size_t start = 0;
  while (start <= text.size()) {
    const int rc = match_from(start);
    if (rc == PCRE2_ERROR_NOMATCH) return;
    if (rc < 0)
      throw RegexMatchError("the pattern " + quoted_pattern(pattern_) + " hit " +
                            match_failure(rc, step_budget) + " on a text of " +
                            std::to_string(text.size()) + " bytes");
    const PCRE2_SIZE* offsets = pcre2_get_ovector_pointer(state.data.get());
    matches.push_back({offsets[0], offsets[1]});
    if (offsets[1] > offsets[0]) {
      start = offsets[1];
    } else if (offsets[1] < text.size()) {
      start = offsets[1] + utf8_sequence_length(static_cast<unsigned char>(text[offsets[1]]));
    } else {
      return;
    }
  }
}

}  // namespace odbatch::text_detail
