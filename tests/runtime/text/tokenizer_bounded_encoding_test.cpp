// The tokenizer encodes a long text only as far as max_seq_len needs: up to a point where no
// piece of the model can span (before a space that follows a printable ASCII character, or
// between two printable ASCII characters that no piece holds side by side), where the text before
// the point encodes to the pieces the whole text's encoding starts with. The property: whatever
// max_seq_len, the sample holds exactly the first max_seq_len tokens of the whole text's encoding,
// on real text (the license texts, 270 KB, and half of them with their whitespace, letters or all
// whitespace changed, or in base64) and real models: the test models (unigram and BPE, Llama-2's
// and the default normalization, and models trained without whitespace splitting or with
// whitespace as a suffix, whose pieces span spaces and which are encoded whole) and, when
// present, the dataset's 8k unigram model and Llama-2's 32k BPE model (tools/prepare-data.sh
// [--with-llama]).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "license_texts.hpp"
#include "odbatch/text/chat_tokenizer.hpp"
#include "tokenizer_test_support.hpp"

namespace odbatch::test {
namespace {

// Each space in turn kept, doubled, made a tab, or a newline and indentation.
std::string varied_whitespace(const std::string& text) {
  std::string varied;
  std::size_t spaces = 0;
  for (const char c : text) {
    if (c != ' ') {
      varied += c;
      continue;
    }
    static constexpr const char* kForms[] = {" ", "  ", "\t", " ", "\n    ", " \n", "   "};
    varied += kForms[spaces++ % std::size(kForms)];
  }
  return varied;
}

// Accented letters, CJK words, and fullwidth letters that NFKC turns into ASCII.
std::string non_ascii_letters(const std::string& text) {
  std::string changed;
  std::size_t words = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == 'e' && i % 5 == 0)
      changed += "\xC3\xA9";  // é
    else
      changed += c;
    if (c == ' ' && ++words % 40 == 0)
      changed += words % 80 == 0 ? "\xE8\x87\xAA\xE7\x94\xB1\xE8\xBD\xAF\xE4\xBB\xB6 "  // 自由软件
                                 : "\xEF\xBC\xA7\xEF\xBC\xAE\xEF\xBC\xB5 ";             // ＧＮＵ
  }
  return changed;
}

// A run of whitespace longer than the first prefix encoded, between two texts.
std::string long_whitespace_run(const std::string& text) {
  std::string run;
  for (int i = 0; i < 20'000; ++i) run += "  \n \t";
  return text.substr(0, 30'000) + run + text.substr(30'000, 60'000);
}

std::string without_whitespace(const std::string& text) {
  std::string joined;
  for (const char c : text)
    if (c != ' ' && c != '\n' && c != '\t' && c != '\r' && c != '\f') joined += c;
  return joined;
}

// Real bytes in base64: letters of both cases, digits, '+' and '/', no whitespace.
std::string base64(const std::string& bytes) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string encoded;
  for (std::size_t i = 0; i + 2 < bytes.size(); i += 3) {
    const auto triple = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16 |
                        static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8 |
                        static_cast<unsigned char>(bytes[i + 2]);
    for (const int shift : {18, 12, 6, 0}) encoded += kDigits[(triple >> shift) & 63];
  }
  return encoded;
}

struct ModelCase {
  std::filesystem::path path;
  TokenizerOptions options;
  // Pieces that span spaces leave no point to cut the text at, so it is always encoded whole:
  // the first two texts suffice to show that.
  bool pieces_span_spaces = false;
};

std::vector<ModelCase> model_cases() {
  std::vector<ModelCase> cases;
  for (const auto name : {kChatModel, kByteChatModel, kBpeChatModel})
    cases.push_back({model_path(name), options_for(ChatTemplate::chatml)});
  cases.push_back({model_path(kByteChatModel), options_for(ChatTemplate::llama2)});
  for (const auto name : {kUnsplitChatModel, kSuffixChatModel})
    cases.push_back({model_path(name), options_for(ChatTemplate::chatml), true});
  const std::filesystem::path dataset_model = ODBATCH_DATASET_TOKENIZER_MODEL;
  if (std::filesystem::exists(dataset_model))
    cases.push_back({dataset_model, options_for(ChatTemplate::chatml)});
  else
    MESSAGE("not covered: " << dataset_model.string() << " is absent (tools/prepare-data.sh)");
  const auto llama_model = dataset_model.parent_path() / "llama2-32k.model";
  if (std::filesystem::exists(llama_model)) {
    // Llama-2 has no vision pieces: byte pieces that text without control characters never
    // encodes to stand in for them.
    auto options = options_for(ChatTemplate::llama2);
    options.image_piece = "<0x01>";
    options.vision_start_piece = "<0x02>";
    options.vision_end_piece = "<0x03>";
    cases.push_back({llama_model, options});
  } else {
    MESSAGE("not covered: " << llama_model.string()
                            << " is absent (tools/prepare-data.sh --with-llama)");
  }
  return cases;
}

TokenizeResult tokenize_within(const ModelCase& model, const Conversation& conversation,
                               std::uint32_t max_seq_len, OverLengthPolicy over_length) {
  auto options = model.options;
  options.max_seq_len = max_seq_len;
  options.over_length = over_length;
  options.zero_labels = ZeroLabelPolicy::keep;
  return ChatTokenizer(model.path, options).tokenize(conversation, {});
}

// Lengths that cut the long prompt near its start (cheap: only its first 64 KiB are encoded), the
// sequence anywhere, and at its end.
std::vector<std::uint32_t> cut_lengths(std::uint32_t full) {
  std::vector<std::uint32_t> lengths = {1, 17, full - 1, full};
  std::mt19937 random(full);
  std::uniform_int_distribution<std::uint32_t> early(1, std::min<std::uint32_t>(full, 8000));
  std::uniform_int_distribution<std::uint32_t> anywhere(1, full);
  for (int i = 0; i < 4; ++i) lengths.push_back(early(random));
  for (int i = 0; i < 2; ++i) lengths.push_back(anywhere(random));
  return lengths;
}

}  // namespace

TEST_CASE("a sample holds exactly the first max_seq_len tokens of the whole encoding") {
  // The variants are shorter, for time, yet longer than the 64 KiB encoded first.
  const std::string licenses = license_texts();
  const std::string half = licenses.substr(0, licenses.size() / 2);
  const std::vector<std::pair<std::string, std::string>> texts = {
      {"licenses", licenses},
      {"varied whitespace", varied_whitespace(half)},
      {"non-ASCII letters", non_ascii_letters(half)},
      {"a long whitespace run", long_whitespace_run(licenses)},
      {"no whitespace", without_whitespace(half)},
      {"base64", base64(licenses.substr(0, 100'000))},
  };
  for (const auto& model : model_cases()) {
    CAPTURE(model.path.string());
    CAPTURE(to_string(model.options.chat_template));
    for (std::size_t t = 0; t < (model.pieces_span_spaces ? 2 : texts.size()); ++t) {
      const auto& [name, text] = texts[t];
      CAPTURE(name);
      // Cuts in the prompt, in the reply (whose segment starts mid-text), and in between.
      const Conversation conversation{{{Role::user, text},
                                       {Role::assistant, text.substr(text.size() * 5 / 6)},
                                       {Role::user, "Thanks."},
                                       {Role::assistant, "You are welcome."}},
                                      {}};
      const auto full =
          sample_of(tokenize_within(model, conversation, 1u << 30, OverLengthPolicy::truncate));
      REQUIRE_FALSE(full.truncated);
      const auto full_size = static_cast<std::uint32_t>(full.input_ids.size());
      for (const auto length : cut_lengths(full_size)) {
        CAPTURE(length);
        const auto sample =
            sample_of(tokenize_within(model, conversation, length, OverLengthPolicy::truncate));
        CHECK(sample.truncated == (length < full_size));
        CHECK(std::equal(sample.input_ids.begin(), sample.input_ids.end(), full.input_ids.begin(),
                         full.input_ids.begin() + length));
        CHECK(std::equal(sample.labels.begin(), sample.labels.end(), full.labels.begin(),
                         full.labels.begin() + length));
        CHECK(sample.input_ids.size() == length);
      }
      CHECK(error_of(tokenize_within(model, conversation, full_size - 1, OverLengthPolicy::reject))
                .message == "more than max_seq_len " + std::to_string(full_size - 1) +
                                " tokens (raise batching.max_seq_len, or set "
                                "batching.over_length = \"truncate\")");
    }
  }
}

TEST_CASE("text past max_seq_len is cut away unread, special pieces included") {
  // Under truncate the cut text is never used, so what it would encode to does not matter.
  const Conversation quoting{
      {{Role::user, "Quote the end marker."}, {Role::assistant, "It is written <|im_end|>."}}, {}};
  const ChatTokenizer tokenizer(model_path(kChatModel), options_for(ChatTemplate::chatml));
  CHECK(error_of(tokenizer.tokenize(quoting, {})).reason ==
        TokenizeErrorReason::special_piece_in_text);

  // The same conversation up to "written", and the reply's <|im_end|> (the separator after it
  // encodes to nothing with this model's normalization).
  const Conversation before_the_marker{
      {{Role::user, "Quote the end marker."}, {Role::assistant, "It is written"}}, {}};
  const auto kept = sample_of(tokenizer.tokenize(before_the_marker, {}));
  auto options = options_for(ChatTemplate::chatml);
  options.max_seq_len = static_cast<std::uint32_t>(kept.input_ids.size() - 1);
  const auto sample =
      sample_of(ChatTokenizer(model_path(kChatModel), options).tokenize(quoting, {}));
  CHECK(sample.truncated);
  CHECK(sample.input_ids ==
        std::vector<std::int32_t>(kept.input_ids.begin(), kept.input_ids.end() - 1));
  const auto processor = load_processor(kChatModel);
  CHECK(render(*processor, sample.input_ids).ends_with(" It is written"));
}

}  // namespace odbatch::test
