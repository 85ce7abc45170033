#pragma once
// Our store as Gloo's rendezvous store, so that a Gloo mesh is built through the control plane's
// TCP store (each rank publishes its pair addresses under its rank number). Private to runtime:
// Gloo's headers stay out of the public ones.
#include <gloo/rendezvous/store.h>

#include <chrono>
#include <cstdint>
#include <optional>

#include "odbatch/store/store.hpp"

namespace odbatch {

class GlooRendezvousStore final : public gloo::rendezvous::Store {
 public:
  // `store` must outlive this view. Gloo's waits without a timeout wait `default_timeout`.
  GlooRendezvousStore(odbatch::Store& store, std::chrono::milliseconds default_timeout)
      : store_(store), default_timeout_(default_timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

  // The peer whose keys Gloo waited for or read last. Gloo's keys name the rank that published
  // them, and Gloo connects each pair right after reading its peer's address, so when building
  // the mesh fails, this is the peer that never published or could not be reached.
  std::optional<std::uint32_t> current_peer() const { return current_peer_; }

 private:
  void note_peer(const std::string& key);

  odbatch::Store& store_;
  std::chrono::milliseconds default_timeout_;
  std::optional<std::uint32_t> current_peer_;
};

}  // namespace odbatch
