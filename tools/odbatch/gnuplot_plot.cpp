#include "gnuplot_plot.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "json_input.hpp"
#include "temporary_directory.hpp"

extern char** environ;

namespace odbatch::cli {
namespace {

namespace fs = std::filesystem;

// A chart of a few thousand points draws in well under a second; a hung gnuplot is ended.
constexpr auto kDeadline = std::chrono::seconds(30);

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// Runs `gnuplot SCRIPT` with its stdout and stderr inherited; returns its wait status.
int run_gnuplot(const fs::path& script) {
  std::string program = "gnuplot", argument = script.string();
  std::vector<char*> argv = {program.data(), argument.data(), nullptr};
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, "gnuplot", nullptr, nullptr, argv.data(), environ);
  if (spawned == ENOENT)
    throw std::runtime_error(
        "gnuplot not found on PATH; install Debian's gnuplot-nox (apt-get install gnuplot-nox)");
  if (spawned != 0)
    throw std::runtime_error("cannot start gnuplot: " + std::string(std::strerror(spawned)));
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR)
      throw std::runtime_error("waiting for gnuplot: " + std::string(std::strerror(errno)));
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      throw std::runtime_error("gnuplot did not finish within " +
                               std::to_string(kDeadline.count()) + " s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

std::string gnuplot_terminal(const fs::path& output) {
  const auto extension = output.extension().string();
  if (extension == ".svg") return "svg size 900,560 dynamic background rgb 'white'";
  if (extension == ".png") return "pngcairo size 900,560";
  throw InputError(output.string() + ": --plot writes .svg or .png files, not '" + extension + "'");
}

std::string gnuplot_quoted(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) {
    if (c == '\'') quoted += '\'';
    quoted += c;
  }
  return quoted + "'";
}

void draw_with_gnuplot(const fs::path& output, const std::string& script, const std::string& data) {
  const std::string terminal = gnuplot_terminal(output);
  const TemporaryDirectory directory("odbatch-plot");
  const auto data_file = directory.path() / "data.dat";
  const auto script_file = directory.path() / "plot.gp";
  write_text(data_file, data);
  write_text(script_file, "set terminal " + terminal + "\nset output " +
                              gnuplot_quoted(fs::absolute(output).string()) +
                              "\ndata = " + gnuplot_quoted(data_file.string()) + "\n" + script +
                              "\nset output\n");
  const int status = run_gnuplot(script_file);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("gnuplot failed drawing " + output.string() + " (status " +
                             std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  std::error_code error;
  if (fs::file_size(output, error) == 0 || error)
    throw std::runtime_error("gnuplot wrote no " + output.string());
}

}  // namespace odbatch::cli
