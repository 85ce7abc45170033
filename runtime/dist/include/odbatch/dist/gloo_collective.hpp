#pragma once
// The Gloo backend of the round protocol's collective, for ranks in separate processes or on
// separate machines: a full mesh of Gloo TCP pairs, built once through a rendezvous store, on the
// loader's own context (never the trainer's). Each allgather is one exchange in which every rank
// sends its blob straight to every other rank: a size first, then the bytes. Waits are bounded by
// the call's deadline, a peer that dies breaks its pair at once, and abort() from any thread wakes
// a rank blocked in the exchange.
#include <chrono>
#include <memory>
#include <string>

#include "odbatch/dist/collective.hpp"

namespace gloo::rendezvous {
class Store;
}

namespace odbatch {

class Store;

struct GlooOptions {
  // The address this rank listens on for its peers (they connect to it): a host name or IP of
  // this machine that the other ranks can reach.
  std::string hostname = "127.0.0.1";
  // How long building the mesh may take: every rank must have joined within it.
  std::chrono::milliseconds connect_timeout{60'000};
  // Whether a failed exchange closes every pair at once, which tells the peers. Off when the
  // caller first records the failure's cause elsewhere (the control plane's abort key) and then
  // calls abort(), so that the peers find the cause rather than a closed pair.
  bool close_on_failure = true;
};

// Building the mesh failed because of one peer: it never published its address, or its pair could
// not be connected (it died, or is unreachable).
class GlooPeerError : public CollectiveError {
 public:
  GlooPeerError(std::uint32_t peer, const std::string& what) : CollectiveError(what), peer_(peer) {}
  std::uint32_t peer() const { return peer_; }

 private:
  std::uint32_t peer_;
};

class GlooCollective final : public Collective {
 public:
  // Joins the mesh of `world_size` ranks through `store` (keys are the ranks' numbers, so give
  // each group a store or a prefix of its own). Throws CollectiveError when the mesh cannot be
  // built in time, naming this rank and the cause.
  GlooCollective(gloo::rendezvous::Store& store, std::uint32_t rank, std::uint32_t world_size,
                 const GlooOptions& options);
  // The same through our store (the control plane's): its waits last up to connect_timeout. A
  // peer that never published its address or could not be reached throws GlooPeerError naming
  // it; a lost store throws its StoreError (connection).
  GlooCollective(Store& store, std::uint32_t rank, std::uint32_t world_size,
                 const GlooOptions& options);
  ~GlooCollective() override;
  GlooCollective(const GlooCollective&) = delete;
  GlooCollective& operator=(const GlooCollective&) = delete;

  std::uint32_t rank() const override;
  std::uint32_t world_size() const override;
  std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine,
                                                Clock::time_point deadline) override;
  // The same with every rank's blob size known beforehand (sizes[r] for rank r, as readiness on
  // the store tells them): one exchange, the sizes' is skipped. Every rank of one allgather must
  // call the same form.
  std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine,
                                                std::span<const std::uint64_t> sizes,
                                                Clock::time_point deadline);
  void abort(const std::string& reason) override;

 private:
  class Mesh;
  std::unique_ptr<Mesh> mesh_;
};

}  // namespace odbatch
