// odbatch_peak_rss SECONDS LOG COMMAND [ARGS...]: runs COMMAND with its stdout and stderr in LOG,
// waits for it with wait4() and prints "exit STATUS peak_rss_kib KIB" (ru_maxrss). A command
// still running after SECONDS is killed (status 137), so a run that never ends fails its test.
//
// A process that execs keeps the peak RSS of the memory it replaced, and posix_spawn's child
// starts on its parent's memory: a command spawned straight from a test process would report at
// least the test's own peak. Spawned from this small program instead, its peak is its own.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

extern char** environ;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s SECONDS LOG COMMAND [ARGS...]\n", argv[0]);
    return 2;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(std::atol(argv[1]));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, argv[2], O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t child = 0;
  const int spawned = posix_spawn(&child, argv[3], &actions, nullptr, argv + 3, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    std::fprintf(stderr, "%s: cannot run %s: %s\n", argv[0], argv[3], std::strerror(spawned));
    return 2;
  }
  int status = 0;
  rusage usage{};
  for (;;) {
    const pid_t ended = wait4(child, &status, WNOHANG, &usage);
    if (ended == child) break;
    if (ended < 0 && errno != EINTR) {
      std::fprintf(stderr, "%s: wait4: %s\n", argv[0], std::strerror(errno));
      return 2;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      std::fprintf(stderr, "%s: %s still ran after %s s: killed\n", argv[0], argv[3], argv[1]);
      kill(child, SIGKILL);
      while (wait4(child, &status, 0, &usage) != child && errno == EINTR) {
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const int exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::printf("exit %d peak_rss_kib %ld\n", exit_status, usage.ru_maxrss);
  return 0;
}
