#include "odbatch/image/image_file.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "source_test_files.hpp"

namespace odbatch {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

ImageError read_error(const std::filesystem::path& root, std::string_view relative,
                      const ImageFileLimits& limits = {}) {
  const auto bytes = read_image_file(root, relative, limits);
  REQUIRE_FALSE(bytes.ok());
  return bytes.error();
}

}  // namespace

TEST_CASE("an image file is read whole from under the image root") {
  const test::ScratchDirectory root;
  const std::string content("\xFF\xD8\x00jpeg\xFF\xD9", 9);
  root.write("photos/a.jpg", content);
  const auto bytes = read_image_file(root / "", "photos/a.jpg");
  REQUIRE_MESSAGE(bytes.ok(), bytes.error().message);
  CHECK(std::string(bytes.value().begin(), bytes.value().end()) == content);
  // Inner ".." that stays inside the root is fine.
  CHECK(read_image_file(root / "", "photos/../photos/./a.jpg").ok());
  root.write("empty.jpg", "");
  CHECK(read_image_file(root / "", "empty.jpg").value().empty());
}

TEST_CASE("a missing file is named in full") {
  const test::ScratchDirectory root;
  const ImageError error = read_error(root / "", "photos/missing.jpg");
  CHECK(error.kind == ImageErrorKind::missing_file);
  CHECK(contains(error.message, root / "photos/missing.jpg"));
  CHECK(read_error(root / "", "a.jpg/b.jpg").kind == ImageErrorKind::missing_file);
}

TEST_CASE("absolute paths and paths escaping the root are refused before touching the disk") {
  const test::ScratchDirectory root;
  root.write("inside.jpg", "x");
  for (const char* path :
       {"/etc/passwd", "../inside.jpg", "photos/../../etc/passwd", "..", "a/b/../../../c.jpg"}) {
    CAPTURE(path);
    const ImageError error = read_error(root / "images", path);
    CHECK(error.kind == ImageErrorKind::bad_path);
    CHECK(contains(error.message, std::string("\"") + path + "\""));
  }
  CHECK(contains(read_error(root / "", "/etc/passwd").message, "is absolute"));
  CHECK(contains(read_error(root / "", "../x.jpg").message, "escapes the image root"));
  CHECK(read_error(root / "", "").kind == ImageErrorKind::bad_path);
  CHECK(read_error(root / "", std::string_view("a\0b", 3)).kind == ImageErrorKind::bad_path);
}

TEST_CASE("directories are unreadable and oversized files are refused by the size limit") {
  const test::ScratchDirectory root;
  root.write("photos/a.jpg", std::string(1000, 'x'));
  const ImageError directory = read_error(root / "", "photos");
  CHECK(directory.kind == ImageErrorKind::unreadable);
  CHECK(directory.message == root / "photos" + ": not a regular file (a directory)");

  const ImageError large = read_error(root / "", "photos/a.jpg", {.max_file_bytes = 999});
  CHECK(large.kind == ImageErrorKind::pixel_bomb);
  CHECK(contains(large.message, "1000 bytes, over the limit of 999"));
  CHECK(read_image_file(root / "", "photos/a.jpg", {.max_file_bytes = 1000}).ok());
  CHECK_THROWS_AS(validate(ImageFileLimits{.max_file_bytes = 0}), ConfigError);
}

TEST_CASE("a FIFO is unreadable at once, not waited on, so are a symlink loop and a device") {
  const test::ScratchDirectory root;
  const auto fifo = root.make_fifo("photos/fifo.jpg");
  std::optional<ImageResult<std::vector<std::uint8_t>>> read;
  CHECK(test::returns_before_deadline(
      fifo, [&] { read.emplace(read_image_file(root / "", "photos/fifo.jpg")); }));
  REQUIRE(read);
  REQUIRE_FALSE(read->ok());
  CHECK(read->error().kind == ImageErrorKind::unreadable);
  CHECK(read->error().message == fifo + ": not a regular file (a FIFO)");

  std::filesystem::create_symlink("loop_b.jpg", root / "loop_a.jpg");
  std::filesystem::create_symlink("loop_a.jpg", root / "loop_b.jpg");
  const ImageError loop = read_error(root / "", "loop_a.jpg");
  CHECK(loop.kind == ImageErrorKind::unreadable);
  CHECK(loop.message == root / "loop_a.jpg" + ": cannot open: Too many levels of symbolic links");

  const ImageError device = read_error("/dev", "null");
  CHECK(device.kind == ImageErrorKind::unreadable);
  CHECK(device.message == "/dev/null: not a regular file (a character device)");
}

}  // namespace odbatch
