#include "odbatch/source/json_array_scanner.hpp"

#include <cstring>

#include "odbatch/source/dataset_error.hpp"

namespace odbatch {
namespace {

bool is_json_whitespace(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// Whether the bytes just before `at`, back to `from` at most, are an odd number of backslashes.
bool odd_backslash_run_before(const char* from, const char* at) {
  const char* run = at;
  while (run > from && run[-1] == '\\') --run;
  return (at - run) % 2 == 1;
}

// A byte for a message: itself when printable ASCII, else its hex value.
std::string shown(char c) {
  const auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x20 && byte < 0x7f) return std::string("'") + c + "'";
  constexpr char kHex[] = "0123456789abcdef";
  return std::string("byte 0x") + kHex[byte >> 4] + kHex[byte & 0xf];
}

}  // namespace

JsonArrayScanner::JsonArrayScanner(std::string path, ElementSink on_element)
    : path_(std::move(path)), on_element_(std::move(on_element)) {}

void JsonArrayScanner::fail(std::uint64_t offset, const std::string& problem) const {
  throw DatasetError(path_ + ": JSON array, byte " + std::to_string(offset) + ": " + problem);
}

void JsonArrayScanner::end_element(std::uint64_t separator) {
  if (in_element_) {
    on_element_(element_start_, element_end_ - element_start_);
  } else {
    on_element_(separator, 0);
  }
  in_element_ = false;
  ++elements_;
}

void JsonArrayScanner::open(char bracket, std::uint64_t offset) {
  if (nesting_.size() >= kMaxNesting) {
    fail(offset, "element " + std::to_string(elements_) + " (at byte " +
                     std::to_string(element_start_) + ") nests deeper than " +
                     std::to_string(kMaxNesting) + " levels");
  }
  nesting_.push_back(bracket == '{');
}

void JsonArrayScanner::close(char bracket, std::uint64_t offset) {
  if (nesting_.empty()) {
    fail(offset, shown(bracket) + " closes nothing in element " + std::to_string(elements_) +
                     " (at byte " + std::to_string(element_start_) +
                     "); the elements after it cannot be told apart");
  }
  if (nesting_.back() != (bracket == '}')) {
    fail(offset, shown(bracket) + " closes a " + (nesting_.back() ? "'{'" : "'['") +
                     " in element " + std::to_string(elements_) + " (at byte " +
                     std::to_string(element_start_) +
                     "); the elements after it cannot be told apart");
  }
  nesting_.pop_back();
  if (nesting_.empty()) element_end_ = offset + 1;
}

void JsonArrayScanner::feed(std::string_view bytes, std::uint64_t offset) {
  const char* const begin = bytes.data();
  const char* const end = begin + bytes.size();
  for (const char* p = begin; p < end; ++p) {
    if (in_string_) {
      if (escaped_) {
        escaped_ = false;
        continue;
      }
      // Most of an instruction set's bytes are string contents: jump from quote to quote with
      // memchr. A quote ends the string unless an odd run of backslashes precedes it; the run
      // cannot reach back before `p`, where no escape is pending.
      const char* quote = nullptr;
      for (const char* from = p;;) {
        quote =
            static_cast<const char*>(std::memchr(from, '"', static_cast<std::size_t>(end - from)));
        if (quote == nullptr || !odd_backslash_run_before(p, quote)) break;
        from = quote + 1;
      }
      if (quote == nullptr) {
        escaped_ = odd_backslash_run_before(p, end);
        break;
      }
      p = quote;
      in_string_ = false;
      if (nesting_.empty()) element_end_ = offset + static_cast<std::uint64_t>(p - begin) + 1;
      continue;
    }
    const char c = *p;
    const std::uint64_t at = offset + static_cast<std::uint64_t>(p - begin);
    switch (phase_) {
      case Phase::before_array:
        if (is_json_whitespace(c)) continue;
        if (c != '[') fail(at, "expected '[' opening the array, found " + shown(c));
        phase_ = Phase::in_array;
        array_start_ = at;
        continue;
      case Phase::after_array:
        if (is_json_whitespace(c)) continue;
        fail(at, "found " + shown(c) +
                     " after the array's closing ']'; only whitespace may follow (a file "
                     "whose first byte besides whitespace is '[' is read as one JSON array)");
      case Phase::in_array:
        break;
    }
    if (nesting_.empty()) {
      if (is_json_whitespace(c)) continue;
      if (c == ',') {
        end_element(at);
        continue;
      }
      if (c == ']') {
        // `[]` holds no element; `[{}, ]` ends in an empty one.
        if (in_element_ || elements_ > 0) end_element(at);
        phase_ = Phase::after_array;
        continue;
      }
      if (!in_element_) {
        in_element_ = true;
        element_start_ = at;
      }
      element_end_ = at + 1;
    }
    switch (c) {
      case '"':
        in_string_ = true;
        break;
      case '{':
      case '[':
        open(c, at);
        break;
      case '}':
      case ']':
        close(c, at);
        break;
      default:
        break;
    }
  }
}

void JsonArrayScanner::finish() const {
  if (phase_ == Phase::after_array) return;
  if (phase_ == Phase::before_array) {
    throw DatasetError(path_ + ": JSON array: the file holds only whitespace, no '['");
  }
  std::string problem = "the file ends before the array's closing ']' (opened at byte " +
                        std::to_string(array_start_) + ") after " + std::to_string(elements_) +
                        " complete elements";
  if (in_element_) {
    problem += "; element " + std::to_string(elements_) + " (at byte " +
               std::to_string(element_start_) + ") is cut off";
    if (in_string_) problem += " inside a string";
  }
  throw DatasetError(path_ + ": JSON array: " + problem + " (a truncated file?)");
}

}  // namespace odbatch
