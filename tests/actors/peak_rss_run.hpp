#pragma once
// Peak memory of `odbatch run` as a child process: the memory tests' measurement.
#include <chrono>
#include <filesystem>

namespace odbatch::test {

// Runs `odbatch run CONFIG --no-progress` under odbatch_peak_rss (which waits for it with
// wait4(); see there why the test does not spawn it itself), with the output in DIR, and returns
// its peak resident set size in KiB. Fails the calling test unless the run succeeds within
// `deadline` (after which it is killed). The child
// gets the parent's environment without torchrun's variables (it is one rank alone) and with
// AddressSanitizer's quarantine off: it keeps freed memory resident up to its cap, so peak RSS
// would grow with all memory ever allocated rather than with what is live.
long peak_rss_kib_of_run(const std::filesystem::path& config, const std::filesystem::path& dir,
                         std::chrono::seconds deadline = std::chrono::seconds(600));

}  // namespace odbatch::test
