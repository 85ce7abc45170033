#include "split_regex.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdexcept>
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
// The JIT stack grows to 8 MiB so long runs of one class never fail for lack of stack.
struct ThreadMatchState {
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> data{pcre2_match_data_create(1, nullptr)};
  std::unique_ptr<pcre2_jit_stack, JitStackDeleter> stack{
      pcre2_jit_stack_create(64 * 1024, 8 * 1024 * 1024, nullptr)};
  std::unique_ptr<pcre2_match_context, MatchContextDeleter> context{
      pcre2_match_context_create(nullptr)};

  ThreadMatchState() {
    if (!data || !stack || !context) throw std::bad_alloc();
    pcre2_jit_stack_assign(context.get(), nullptr, stack.get());
  }
};

}  // namespace

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
  pcre2_jit_compile(compiled_->code, PCRE2_JIT_COMPLETE);
}

SplitRegex::SplitRegex(SplitRegex&&) noexcept = default;
SplitRegex& SplitRegex::operator=(SplitRegex&&) noexcept = default;
SplitRegex::~SplitRegex() = default;

void SplitRegex::find_all(std::string_view text, std::vector<MatchSpan>& matches) const {
  thread_local ThreadMatchState state;
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::size_t start = 0;
  while (start <= text.size()) {
    // The text was validated as UTF-8 once by the caller; PCRE2 need not check it per call.
    const int rc = pcre2_match(compiled_->code, subject, text.size(), start, PCRE2_NO_UTF_CHECK,
                               state.data.get(), state.context.get());
    if (rc == PCRE2_ERROR_NOMATCH) return;
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof message);
      throw std::runtime_error("regex match failed (PCRE2: " +
                               std::string(reinterpret_cast<const char*>(message)) + ")");
    }
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
