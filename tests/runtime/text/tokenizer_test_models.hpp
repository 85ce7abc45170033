#pragma once
// The sentencepiece models of the tokenizer tests, which odbatch_test_spm_model trains into
// ODBATCH_TOKENIZER_TEST_MODEL_DIR before the tests run (a CTest fixture).
#include <string_view>

namespace odbatch::test {

// Default normalization (nmt_nfkc, extra whitespace removed) and the chat and vision pieces.
inline constexpr std::string_view kChatModel = "chat";
// Llama-2's normalization (identity, whitespace kept, byte fallback) and the same pieces.
inline constexpr std::string_view kByteChatModel = "chat_bytes";
// No user-defined pieces at all.
inline constexpr std::string_view kPlainModel = "plain";
// BPE with Llama-2's normalization and whitespace-only pieces ("▁▁", "▁▁▁▁"), and the chat pieces.
inline constexpr std::string_view kBpeChatModel = "chat_bpe";
// Trained without splitting at whitespace: pieces such as "of▁the" span spaces.
inline constexpr std::string_view kUnsplitChatModel = "chat_unsplit";
// Whitespace as a suffix: "the▁" rather than "▁the".
inline constexpr std::string_view kSuffixChatModel = "chat_suffix";

}  // namespace odbatch::test
