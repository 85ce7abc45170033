#include "tar_header_walker.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <new>
#include <vector>

#include "odbatch/source/byte_source.hpp"
#include "odbatch/source/dataset_error.hpp"

namespace odbatch {
namespace {

// Large enough that a remote shard's headers come in few requests.
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

}  // namespace

// Hands libarchive the input from a position, and moves the position for skipped data.
struct TarHeaderWalker::Input {
  const ByteSource* source = nullptr;  // or `bytes`
  std::string_view bytes;
  std::uint64_t position = 0;  // relative to the walk's start
  std::uint64_t start = 0;     // the walk's start in the source
  std::vector<char> chunk;
  std::string failure;  // a read error, reported as damage

  std::uint64_t remaining() const {
    const std::uint64_t end = source != nullptr ? source->size() - start : bytes.size();
    return position < end ? end - position : 0;
  }

  static la_ssize_t read(archive*, void* self, const void** buffer) {
    auto& in = *static_cast<Input*>(self);
    const std::uint64_t available = in.remaining();
    if (in.source == nullptr) {
      *buffer = in.bytes.data() + in.position;
      in.position += available;
      return static_cast<la_ssize_t>(available);
    }
    const std::size_t wanted =
        static_cast<std::size_t>(std::min<std::uint64_t>(available, kChunkBytes));
    in.chunk.resize(wanted);
    std::size_t got = 0;
    try {
      got = in.source->read_at(in.chunk.data(), wanted, in.start + in.position);
    } catch (const DatasetError& e) {
      in.failure = e.what();
      return ARCHIVE_FATAL;
    }
    in.position += got;
    *buffer = in.chunk.data();
    return static_cast<la_ssize_t>(got);
  }

  static la_int64_t skip(archive*, void* self, la_int64_t request) {
    auto& in = *static_cast<Input*>(self);
    const auto skipped =
        std::min<std::uint64_t>(static_cast<std::uint64_t>(request), in.remaining());
    in.position += skipped;
    return static_cast<la_int64_t>(skipped);
  }
};

namespace {}  // namespace

TarHeaderWalker::TarHeaderWalker(const ByteSource& source, std::uint64_t offset)
    : input_(std::make_unique<Input>()), base_(offset) {
  input_->source = &source;
  input_->start = offset;
  open();
}

TarHeaderWalker::TarHeaderWalker(std::string_view bytes, std::uint64_t offset)
    : input_(std::make_unique<Input>()), base_(offset) {
  input_->bytes = bytes;
  open();
}

void TarHeaderWalker::open() {
  archive_ = archive_read_new();
  if (archive_ == nullptr) throw std::bad_alloc();
  archive_read_support_format_tar(archive_);
  archive_read_set_read_callback(archive_, &Input::read);
  archive_read_set_skip_callback(archive_, &Input::skip);
  archive_read_set_callback_data(archive_, input_.get());
  if (archive_read_open1(archive_) != ARCHIVE_OK) damaged();
}

TarHeaderWalker::Step TarHeaderWalker::damaged() {
  problem_ = !input_->failure.empty()                    ? input_->failure
             : archive_error_string(archive_) != nullptr ? archive_error_string(archive_)
                                                         : "unreadable tar header";
  return Step::damaged;
}

TarHeaderWalker::~TarHeaderWalker() {
  archive_read_free(archive_);
}

std::uint64_t TarHeaderWalker::position() const {
  return base_ + static_cast<std::uint64_t>(archive_filter_bytes(archive_, 0));
}

TarHeaderWalker::Step TarHeaderWalker::next(Member& member) {
  if (!problem_.empty()) return Step::damaged;
  archive_entry* entry = nullptr;
  const int status = archive_read_next_header(archive_, &entry);
  if (status == ARCHIVE_EOF) return Step::end;
  if (status != ARCHIVE_OK && status != ARCHIVE_WARN) return damaged();
  const char* path = archive_entry_pathname(entry);
  member.path = path != nullptr ? path : "";
  member.header_offset = base_ + static_cast<std::uint64_t>(archive_read_header_position(archive_));
  member.data_offset = position();
  member.size = static_cast<std::uint64_t>(archive_entry_size(entry));
  member.regular_file = archive_entry_filetype(entry) == AE_IFREG;
  member.sparse = archive_entry_sparse_count(entry) > 0;
  return Step::member;
}

}  // namespace odbatch
