#pragma once
// A scratch directory of generated dataset files for the data source tests; removed afterwards.
// Also FIFOs, and a deadline for code that might block opening one.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

namespace odbatch::test {

class ScratchDirectory {
 public:
  ScratchDirectory() {
    // mkdtemp makes the name unique, so test processes running in parallel never share files.
    std::string pattern = (std::filesystem::temp_directory_path() / "odbatch_source_XXXXXX");
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

  // Writes `bytes` exactly (no newline translation) to `name` and returns the file's path.
  std::string write(const std::string& name, std::string_view bytes) const {
    const auto file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + file.string());
    return file.string();
  }

  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

  // Makes a FIFO at `name` and returns its path.
  std::string make_fifo(const std::string& name) const {
    const auto fifo = path_ / name;
    std::filesystem::create_directories(fifo.parent_path());
    if (::mkfifo(fifo.c_str(), 0600) != 0) throw std::runtime_error("mkfifo failed");
    return fifo.string();
  }

 private:
  std::filesystem::path path_;
};

// Runs `open_it`, which opens `fifo`, and returns whether it came back within `deadline`. If it
// did not, it is blocked waiting for a writer: one comes and goes, so that the open returns and
// the read sees the end, and the test fails instead of hanging.
inline bool returns_before_deadline(const std::string& fifo, const std::function<void()>& open_it,
                                    std::chrono::milliseconds deadline = std::chrono::seconds(10)) {
  auto done = std::async(std::launch::async, open_it);
  if (done.wait_for(deadline) == std::future_status::ready) {
    done.get();
    return true;
  }
  for (int attempt = 0; attempt < 500; ++attempt) {
    const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (writer >= 0) {
      ::close(writer);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  done.get();
  return false;
}

}  // namespace odbatch::test
