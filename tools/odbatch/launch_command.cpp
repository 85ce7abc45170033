#include "launch_command.hpp"

#include <iostream>
#include <stdexcept>

#include "odbatch/dist/local_launcher.hpp"

namespace odbatch::cli {

int run_launch_command(const LaunchOptions& options) {
  LaunchSpec spec;
  spec.nproc = options.nproc;
  spec.master_addr = options.master_addr;
  spec.master_port = options.master_port;
  spec.grace = options.grace;
  spec.command = options.command;
  spec.prefix_output = options.prefix_output;
  LaunchResult result;
  try {
    result = launch_local_ranks(spec, std::cerr);
  } catch (const std::runtime_error& e) {
    // As a shell reports a command it cannot run.
    std::cerr << "odbatch launch: " << e.what() << '\n';
    return 127;
  }
  if (result.status == 0)
    std::cerr << "odbatch launch: all " << spec.nproc << " rank(s) succeeded\n";
  return result.status;
}

}  // namespace odbatch::cli
