#pragma once
// The trainer's abort hook (PipelineOptions::on_abort), called at most once whichever path
// reports the failure first: this rank's epoch, or the collective hearing of another rank's.
#include <functional>
#include <mutex>
#include <string>
#include <utility>

namespace odbatch::actors {

class AbortHook {
 public:
  explicit AbortHook(std::function<void(const std::string&)> hook) : hook_(std::move(hook)) {}

  void operator()(const std::string& reason) {
    std::call_once(called_, [&] { hook_(reason); });
  }

 private:
  std::function<void(const std::string&)> hook_;
  std::once_flag called_;
};

}  // namespace odbatch::actors
