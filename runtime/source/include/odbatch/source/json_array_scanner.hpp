#pragma once
// Splits a file whose top level is a JSON array (LLaVA-style instruction sets: one big
// `[{...}, {...}, ...]`) into its elements' byte ranges, in one streaming pass, so that each
// element is indexed and read like a JSONL line.
//
// A structural scanner, not a JSON parser: it follows strings (with their escapes) and bracket
// nesting only, and an element is whatever lies between the array's top-level commas (leading
// and trailing whitespace excluded). Why not nlohmann's SAX interface: it gives no byte offsets
// of values, stops at the first syntax error of the whole file, and builds every key and string
// it passes; here each element is judged later by the record parser, alone, so one broken element
// (a missing quote's neighbour, a bad number, non-UTF-8 bytes, two objects without a comma) is
// rejected with its location while the rest of the file is read. Memory is one bit of state per
// nesting level of the element being scanned (at most kMaxNesting), never the element or the file.
//
// What cannot be resynchronised throws DatasetError naming the file and byte offset: a closing
// bracket that does not match its opening one or closes nothing, nesting deeper than
// kMaxNesting, a file that ends before the array's closing ']' (truncated), and anything but
// whitespace after it (trailing garbage, a second array).
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace odbatch {

class JsonArrayScanner {
 public:
  static constexpr std::size_t kMaxNesting = std::size_t{1} << 20;

  // Called once per element, in order, with its offset and length in the file. An element between
  // two commas with nothing but whitespace (`[{}, , {}]`, or a trailing comma) is reported with
  // length 0 at the comma or ']' ending it, so the record parser rejects it in its place.
  using ElementSink = std::function<void(std::uint64_t offset, std::uint64_t length)>;

  // `path` names the file in errors.
  JsonArrayScanner(std::string path, ElementSink on_element);

  // Scans the file's next bytes, which start at file offset `offset` (the previous call's end).
  void feed(std::string_view bytes, std::uint64_t offset);

  // Checks that the array was closed; call after the file's last bytes.
  void finish() const;

 private:
  enum class Phase : std::uint8_t { before_array, in_array, after_array };

  [[noreturn]] void fail(std::uint64_t offset, const std::string& problem) const;
  void end_element(std::uint64_t separator);
  void open(char bracket, std::uint64_t offset);
  void close(char bracket, std::uint64_t offset);

  std::string path_;
  ElementSink on_element_;
  Phase phase_ = Phase::before_array;
  bool in_string_ = false;
  bool escaped_ = false;       // the previous byte in a string was an unescaped backslash
  bool in_element_ = false;    // an element's first byte has been seen
  std::vector<bool> nesting_;  // true for '{', false for '[', innermost last
  std::uint64_t array_start_ = 0;
  std::uint64_t element_start_ = 0;
  std::uint64_t element_end_ = 0;  // one past its last byte outside whitespace so far
  std::uint64_t elements_ = 0;
};

}  // namespace odbatch
