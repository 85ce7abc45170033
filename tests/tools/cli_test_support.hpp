#pragma once
// Running the built `odbatch` binary as a user would, for the tools' end-to-end tests: a scratch
// directory of this test process, and the command's exit status and output.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace odbatch::test {

// A directory of this test process's files, removed at exit.
class Scratch {
 public:
  Scratch()
      : dir_(std::filesystem::temp_directory_path() /
             ("odbatch_tools_test_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
  }
  ~Scratch() { std::filesystem::remove_all(dir_); }
  std::filesystem::path write(const std::string& name, const std::string& contents) const {
    const auto path = dir_ / name;
    std::ofstream(path, std::ios::binary) << contents;
    return path;
  }
  std::filesystem::path path(const std::string& name) const { return dir_ / name; }

 private:
  std::filesystem::path dir_;
};

inline const Scratch& scratch() {
  static const Scratch instance;
  return instance;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::string shell_quoted(const std::filesystem::path& path) {
  return "'" + path.string() + "'";
}

// The [source] and [tokenizer] tables of a pipeline TOML over `records`, with the dataset's images
// and tokenizer under `data_dir` and one tokenizer worker.
inline std::string source_and_tokenizer_toml(const std::filesystem::path& records,
                                             const std::filesystem::path& data_dir) {
  return "[source]\nfiles = [\"" + records.string() + "\"]\nimage_root = \"" +
         (data_dir / "images").string() + "\"\n[tokenizer]\nmodel = \"" +
         (data_dir / "tokenizer/odbatch-unigram-8k.model").string() + "\"\nworkers = 1\n";
}

struct CliRun {
  int status = -1;
  std::string out;
  std::string err;
  nlohmann::json report() const { return nlohmann::json::parse(out); }
};

// The status of a command `timeout` ended at its deadline.
constexpr int kTimedOutStatus = 124;

// Runs `odbatch ARGUMENTS`, capturing stdout and stderr. With a deadline, a run that outlives it
// (hung on a FIFO, say) is ended with status kTimedOutStatus.
inline CliRun run_cli(const std::string& arguments, int deadline_seconds = 0) {
  const auto out = scratch().path("stdout"), err = scratch().path("stderr");
  const std::string deadline =
      deadline_seconds > 0 ? "timeout -k 5 " + std::to_string(deadline_seconds) + " " : "";
  const std::string command = deadline + shell_quoted(ODBATCH_CLI_PATH) + " " + arguments + " >" +
                              shell_quoted(out) + " 2>" + shell_quoted(err);
  const int raw = std::system(command.c_str());
  CliRun run;
  run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  run.out = read_file(out);
  run.err = read_file(err);
  return run;
}

}  // namespace odbatch::test
