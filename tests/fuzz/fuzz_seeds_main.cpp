// Writes the fuzz targets' seeds (fuzz_seeds.hpp) as files, one folder per target, for libFuzzer.
// Usage: odbatch_fuzz_seeds SOURCE_DIR OUT_DIR
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "fuzz_entries.hpp"
#include "fuzz_seeds.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s SOURCE_DIR OUT_DIR\n", argv[0]);
    return 2;
  }
  namespace fs = std::filesystem;
  const fs::path source_dir = argv[1];
  const fs::path out_dir = argv[2];
  try {
    for (const auto& target : odbatch::fuzz::targets()) {
      const fs::path dir = out_dir / target.name;
      fs::remove_all(dir);  // seeds of an older checkout must not linger
      fs::create_directories(dir);
      const auto seeds = odbatch::fuzz::seeds_for(target.name, source_dir);
      for (const auto& seed : seeds) {
        std::ofstream out(dir / seed.name, std::ios::binary);
        out.write(reinterpret_cast<const char*>(seed.bytes.data()),
                  static_cast<std::streamsize>(seed.bytes.size()));
        if (!out) throw std::runtime_error((dir / seed.name).string() + ": cannot write");
      }
      std::printf("%-16s %3zu seeds\n", std::string(target.name).c_str(), seeds.size());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "odbatch_fuzz_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
