#pragma once
// A dataset that cannot be used as given: a path or pattern that names no file, an unreadable or
// changed file, a record id outside the dataset. The message names the file or pattern and why.
// Problems inside a single record are not errors of this kind: they reject that record only.
#include <stdexcept>

namespace odbatch {

class DatasetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace odbatch
