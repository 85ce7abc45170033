#include "odbatch/version.hpp"

namespace odbatch {

std::string_view library_version() {
  return kHeaderVersion;
}

}  // namespace odbatch
