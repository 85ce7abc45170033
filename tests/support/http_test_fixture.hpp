#pragma once
// The servers tests/runtime/source/http_fixture.py starts for the tests of files over HTTP (the
// CTest fixture odbatch_http_servers; ODBATCH_HTTP_FIXTURE_DIR names its folder): where they
// listen and where the files they serve are written. Tests run without them skip with a message.
#include <unistd.h>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>

#include "test_skip.hpp"

namespace odbatch::test {

class HttpFixture {
 public:
  // The fixture's servers, or nothing and `why_absent` says why.
  static std::optional<HttpFixture> find(std::string& why_absent) {
    const std::filesystem::path state = ODBATCH_HTTP_FIXTURE_DIR;
    if (std::filesystem::exists(state / "skipped")) {
      why_absent = slurp(state / "skipped");
      return std::nullopt;
    }
    if (!std::filesystem::exists(state / "nginx.port") ||
        !std::filesystem::exists(state / "flaky.port")) {
      why_absent = "no servers at " + state.string() +
                   " (ctest starts them: tests/runtime/source/http_fixture.py)";
      return std::nullopt;
    }
    // The servers are on loopback: a proxy configured for the machine must not be asked.
    ::setenv("NO_PROXY", "127.0.0.1", 1);
    ::setenv("no_proxy", "127.0.0.1", 1);
    HttpFixture fixture;
    fixture.files_ = state / "www" / "files";
    fixture.nginx_ = "http://127.0.0.1:" + slurp(state / "nginx.port");
    fixture.flaky_ = "http://127.0.0.1:" + slurp(state / "flaky.port");
    if (std::filesystem::exists(state / "https.port")) {
      fixture.https_ = "https://127.0.0.1:" + slurp(state / "https.port");
      fixture.certificate_ = state / "tls" / "cert.pem";
    }
    return fixture;
  }

  // Writes `bytes` as the served file `name` (unique per test process, as tests run in
  // parallel) and returns the name.
  std::string serve(const std::string& name, const std::string& bytes) const {
    const std::string unique = std::to_string(::getpid()) + "-" + name;
    std::ofstream out(files_ / unique, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return unique;
  }
  // Serves the file at `target` as `name` (a symbolic link; unique per test process) and returns
  // the name.
  std::string serve_link(const std::string& name, const std::filesystem::path& target) const {
    const std::string unique = std::to_string(::getpid()) + "-" + name;
    std::filesystem::remove(files_ / unique);
    std::filesystem::create_symlink(std::filesystem::absolute(target), files_ / unique);
    return unique;
  }
  std::filesystem::path local(const std::string& served_name) const { return files_ / served_name; }

  // nginx's location (files, no-ranges, error, slow, ...) and the file's name.
  std::string nginx_url(const std::string& location, const std::string& name) const {
    return nginx_ + "/" + location + "/" + name;
  }
  // nginx's /files/ over HTTPS, with a certificate of its own (`certificate()` verifies it);
  // empty without openssl.
  std::string https_url(const std::string& name) const {
    return https_.empty() ? std::string() : https_ + "/files/" + name;
  }
  const std::filesystem::path& certificate() const { return certificate_; }

  // flaky_http_server.py: `mode` fail or drop for the first `failures` requests, or endless.
  std::string flaky_url(const std::string& mode, int failures, const std::string& name) const {
    return flaky_ + "/" + mode + "/" + std::to_string(failures) + "/" + name + "/" + name;
  }

 private:
  static std::string slurp(const std::filesystem::path& file) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    std::string s = text.str();
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }

  std::filesystem::path files_;
  std::string nginx_;
  std::string flaky_;
  std::string https_;
  std::filesystem::path certificate_;
};

// Bytes from a fixed seed: the same file in every run.
inline std::string random_bytes(std::size_t size, std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(generator() & 0xFF);
  return bytes;
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace odbatch::test

// Declares `fixture` (the HttpFixture) or skips the test case with a message.
#define ODBATCH_REQUIRE_HTTP_FIXTURE(fixture)                                        \
  std::string fixture##_absent;                                                      \
  const auto fixture##_found = ::odbatch::test::HttpFixture::find(fixture##_absent); \
  if (!fixture##_found) {                                                            \
    ODBATCH_SKIP_TEST("nginx", fixture##_absent);                                    \
  }                                                                                  \
  const ::odbatch::test::HttpFixture& fixture = *fixture##_found
