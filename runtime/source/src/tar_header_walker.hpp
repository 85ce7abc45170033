#pragma once
// Walks a tar stream's member headers with libarchive (ustar, pax and GNU long names), reporting
// where each member's header and data lie, and skipping data without reading it where the input
// allows. Private to the source library: libarchive's headers stay out of public ones.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

struct archive;

namespace odbatch {

class ByteSource;

class TarHeaderWalker {
 public:
  struct Member {
    std::string path;
    std::uint64_t header_offset = 0;  // of its first header block (pax or long-name ones included)
    std::uint64_t data_offset = 0;
    std::uint64_t size = 0;
    bool regular_file = false;  // directories, links and devices are not sample members
    bool sparse = false;
  };
  enum class Step : std::uint8_t { member, end, damaged };

  // Over `source` from byte `offset` (offsets reported are the source's), read in chunks.
  TarHeaderWalker(const ByteSource& source, std::uint64_t offset);
  // Over bytes in memory that start at `offset` of their shard.
  TarHeaderWalker(std::string_view bytes, std::uint64_t offset);
  TarHeaderWalker(const TarHeaderWalker&) = delete;
  TarHeaderWalker& operator=(const TarHeaderWalker&) = delete;
  ~TarHeaderWalker();

  // The next member (into `member`), the archive's end, or damage: a header that is not one, or
  // input that ends inside a header or a member's data. After `damaged`, problem() says what.
  Step next(Member& member);
  const std::string& problem() const { return problem_; }
  // The shard offset up to which headers and data have been consumed: after `end`, just past
  // the end-of-archive blocks.
  std::uint64_t position() const;

  // libarchive's callbacks.
  struct Input;

 private:
  void open();
  // Records libarchive's (or the input's) complaint as the problem.
  Step damaged();

  std::unique_ptr<Input> input_;
  archive* archive_ = nullptr;
  std::uint64_t base_ = 0;
  std::string problem_;
};

}  // namespace odbatch
