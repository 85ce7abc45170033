#include "odbatch/dist/gloo_collective.hpp"

#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include <algorithm>
#include <mutex>
#include <optional>

#include "gloo_rendezvous_store.hpp"
#include "odbatch/core/rank_names.hpp"
#include "odbatch/store/store.hpp"

namespace odbatch {
namespace {

using gloo::transport::UnboundBuffer;

constexpr std::uint8_t kSizeSlot = 1;
constexpr std::uint8_t kBlobSlot = 2;
// A peer announcing more than this is not speaking our protocol; refuse before allocating.
constexpr std::uint64_t kMaxBlobBytes = std::uint64_t{1} << 31;

std::chrono::milliseconds remaining(Collective::Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Collective::Clock::now());
  // Gloo reads a zero timeout as "the context's default", so a passed deadline waits 1 ms.
  return std::max(left, std::chrono::milliseconds(1));
}

}  // namespace

class GlooCollective::Mesh {
 public:
  // `ours` is `store` when it is our store seen through Gloo's interface: then a failure names
  // the peer Gloo was busy with.
  Mesh(gloo::rendezvous::Store& store, std::uint32_t rank, std::uint32_t world_size,
       const GlooOptions& options, const GlooRendezvousStore* ours = nullptr)
      : rank_(rank), world_(world_size), close_on_failure_(options.close_on_failure) {
    if (world_size == 0 || rank >= world_size)
      throw CollectiveError("rank " + std::to_string(rank) + " is not in a group of " +
                            std::to_string(world_size));
    if (world_size == 1) return;
    try {
      gloo::transport::tcp::attr attr(options.hostname.c_str());
      auto device = gloo::transport::tcp::CreateDevice(attr);
      context_ = std::make_shared<gloo::rendezvous::Context>(static_cast<int>(rank),
                                                             static_cast<int>(world_size));
      // Gloo waits five times its timeout for a pair's first connection.
      context_->setTimeout(std::max(std::chrono::milliseconds(1), options.connect_timeout / 5));
      context_->connectFullMesh(store, device);
    } catch (const StoreError& e) {
      const auto peer = ours ? ours->current_peer() : std::nullopt;
      // A lost store: the caller knows who hosts it.
      if (e.kind() == StoreError::Kind::connection || !peer) throw;
      throw GlooPeerError(*peer, joining(rank, world_size, options) + "rank " +
                                     std::to_string(*peer) +
                                     " did not publish its Gloo address within " +
                                     std::to_string(options.connect_timeout.count()) +
                                     " ms (it died or hangs while joining): " + e.what());
    } catch (const std::exception& e) {
      const auto peer = ours ? ours->current_peer() : std::nullopt;
      if (!peer) throw CollectiveError(joining(rank, world_size, options) + e.what());
      throw GlooPeerError(*peer, joining(rank, world_size, options) + "cannot connect to rank " +
                                     std::to_string(*peer) +
                                     " (it died or is unreachable): " + e.what());
    }
  }

  std::uint32_t rank() const { return rank_; }
  std::uint32_t world_size() const { return world_; }

  static std::string joining(std::uint32_t rank, std::uint32_t world_size,
                             const GlooOptions& options) {
    return "rank " + std::to_string(rank) + ": cannot join the Gloo mesh of " +
           std::to_string(world_size) + " ranks at " + options.hostname + ": ";
  }

  std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine,
                                                Clock::time_point deadline) {
    throw_if_unusable();
    if (world_ == 1) return {{mine.begin(), mine.end()}};
    const std::uint32_t tag = calls_++;
    std::uint64_t my_size = mine.size();
    std::vector<std::uint64_t> sizes(world_, 0);
    try {
      exchange(
          &my_size, sizeof my_size, [&](std::uint32_t peer) { return &sizes[peer]; },
          [](std::uint32_t) { return sizeof(std::uint64_t); }, gloo::Slot::build(kSizeSlot, tag),
          deadline, "sizes");
    } catch (const CollectiveError&) {
      break_mesh();
      throw;
    }
    sizes[rank_] = my_size;
    return gather_blobs(mine, sizes, tag, deadline);
  }

  std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine,
                                                std::span<const std::uint64_t> sizes,
                                                Clock::time_point deadline) {
    if (sizes.size() != world_ || sizes[rank_] != mine.size())
      throw std::invalid_argument("allgather: the sizes do not fit this rank's blob and world");
    throw_if_unusable();
    if (world_ == 1) return {{mine.begin(), mine.end()}};
    return gather_blobs(mine, sizes, calls_++, deadline);
  }

 private:
  std::vector<std::vector<std::byte>> gather_blobs(std::span<const std::byte> mine,
                                                   std::span<const std::uint64_t> sizes,
                                                   std::uint32_t tag, Clock::time_point deadline) {
    std::vector<std::vector<std::byte>> all(world_);
    all[rank_].assign(mine.begin(), mine.end());
    try {
      for (std::uint32_t peer = 0; peer < world_; ++peer) {
        if (peer == rank_) continue;
        if (sizes[peer] > kMaxBlobBytes)
          throw CollectiveError("rank " + std::to_string(peer) + " announced a blob of " +
                                std::to_string(sizes[peer]) + " bytes");
        all[peer].resize(sizes[peer]);
      }
      exchange(
          const_cast<std::byte*>(mine.data()), mine.size(),
          [&](std::uint32_t peer) { return all[peer].data(); },
          [&](std::uint32_t peer) { return all[peer].size(); }, gloo::Slot::build(kBlobSlot, tag),
          deadline, "blobs");
    } catch (const CollectiveError&) {
      break_mesh();
      throw;
    }
    return all;
  }

 public:
  void abort(const std::string& reason) {
    std::lock_guard lock(mutex_);
    if (!abort_reason_) abort_reason_ = reason;
    for (auto* buffer : in_flight_) {
      buffer->abortWaitRecv();
      buffer->abortWaitSend();
    }
    // Between exchanges nothing uses the pairs: closing them now makes every peer blocked in an
    // exchange with us fail at once. During an exchange the exchanging thread closes them.
    if (in_flight_.empty() && context_) context_->closeConnections();
  }

 private:
  // Sends `size` bytes at `out` to every peer and receives each peer's bytes into buffer(peer)
  // (buffer_size(peer) of them), all under one slot. Zero-byte messages are not sent: both sides
  // know the sizes.
  template <class BufferOf, class SizeOf>
  void exchange(void* out, std::size_t size, BufferOf buffer, SizeOf buffer_size,
                std::uint64_t slot, Clock::time_point deadline, const char* what) {
    std::unique_ptr<UnboundBuffer> sending;
    std::vector<std::unique_ptr<UnboundBuffer>> receiving(world_);
    std::vector<std::uint32_t> missing;  // peers whose message has not arrived
    // The peer of the call in progress (none: world_), whose pair is the one a failure comes from.
    std::uint32_t peer_of_call = world_;
    const char* call = "";
    const auto calling = [&](const char* what_call, std::uint32_t peer) {
      call = what_call;
      peer_of_call = peer;
    };
    struct Release {
      Mesh& mesh;
      ~Release() {
        std::lock_guard lock(mesh.mutex_);
        mesh.in_flight_.clear();
      }
    } release{*this};
    try {
      {
        std::lock_guard lock(mutex_);
        if (abort_reason_) throw CollectiveError("aborted: " + *abort_reason_);
        for (std::uint32_t peer = 0; peer < world_; ++peer) {
          if (peer == rank_ || buffer_size(peer) == 0) continue;
          receiving[peer] = context_->createUnboundBuffer(buffer(peer), buffer_size(peer));
          in_flight_.push_back(receiving[peer].get());
          missing.push_back(peer);
          // A pair broken before this exchange fails the call that posts on it.
          calling("receiving from", peer);
          receiving[peer]->recv(static_cast<int>(peer), slot);
        }
        if (size > 0) {
          sending = context_->createUnboundBuffer(out, size);
          in_flight_.push_back(sending.get());
          for (std::uint32_t peer = 0; peer < world_; ++peer) {
            if (peer == rank_) continue;
            calling("sending to", peer);
            sending->send(static_cast<int>(peer), slot);
          }
        }
      }
      for (std::uint32_t peer = 0; peer < world_; ++peer) {
        if (!receiving[peer]) continue;
        calling("waiting for", peer);
        if (!receiving[peer]->waitRecv(nullptr, remaining(deadline))) throw_aborted();
        missing.erase(std::find(missing.begin(), missing.end(), peer));
      }
      peer_of_call = world_;
      if (sending)
        for (std::uint32_t n = 1; n < world_; ++n)
          if (!sending->waitSend(nullptr, remaining(deadline))) throw_aborted();
    } catch (const CollectiveError&) {
      throw;
    } catch (const std::exception& e) {
      // Gloo's own errors: a timeout, or a pair broken by a peer that died or closed it. Posting
      // and receiving fail on their own pair, so that peer is the one named.
      if (peer_of_call < world_)
        throw CollectiveError(std::string("exchanging ") + what + ", " + call + " rank " +
                              std::to_string(peer_of_call) + ": " + e.what());
      // Waiting for the sends fails on some pair; the ranks not heard from yet include its peer.
      const std::string peers = missing.empty() ? "the other ranks" : rank_names(missing);
      throw CollectiveError(std::string("exchanging ") + what + ", sending to " + peers + ": " +
                            e.what());
    }
  }

  [[noreturn]] void throw_aborted() {
    std::lock_guard lock(mutex_);
    throw CollectiveError("aborted: " + abort_reason_.value_or("by this rank"));
  }

  void throw_if_unusable() {
    std::lock_guard lock(mutex_);
    if (abort_reason_) throw CollectiveError("aborted: " + *abort_reason_);
    if (broken_) throw CollectiveError("the group failed in an earlier exchange");
  }

  // After a failed exchange messages may be half sent: the mesh cannot be trusted any more, and
  // closing it tells every peer at once.
  void break_mesh() {
    std::lock_guard lock(mutex_);
    broken_ = true;
    if (close_on_failure_ && context_) context_->closeConnections();
  }

  std::uint32_t rank_;
  std::uint32_t world_;
  bool close_on_failure_;
  std::shared_ptr<gloo::rendezvous::Context> context_;
  std::uint32_t calls_ = 0;
  std::mutex mutex_;
  std::vector<UnboundBuffer*> in_flight_;
  std::optional<std::string> abort_reason_;
  bool broken_ = false;
};

GlooCollective::GlooCollective(gloo::rendezvous::Store& store, std::uint32_t rank,
                               std::uint32_t world_size, const GlooOptions& options)
    : mesh_(std::make_unique<Mesh>(store, rank, world_size, options)) {}

GlooCollective::GlooCollective(Store& store, std::uint32_t rank, std::uint32_t world_size,
                               const GlooOptions& options) {
  // Gloo uses the store only while it builds the mesh.
  GlooRendezvousStore rendezvous(store, options.connect_timeout);
  mesh_ = std::make_unique<Mesh>(rendezvous, rank, world_size, options, &rendezvous);
}

GlooCollective::~GlooCollective() = default;

std::uint32_t GlooCollective::rank() const {
  return mesh_->rank();
}
std::uint32_t GlooCollective::world_size() const {
  return mesh_->world_size();
}

std::vector<std::vector<std::byte>> GlooCollective::allgather(std::span<const std::byte> mine,
                                                              Clock::time_point deadline) {
  return mesh_->allgather(mine, deadline);
}

std::vector<std::vector<std::byte>> GlooCollective::allgather(std::span<const std::byte> mine,
                                                              std::span<const std::uint64_t> sizes,
                                                              Clock::time_point deadline) {
  return mesh_->allgather(mine, sizes, deadline);
}

void GlooCollective::abort(const std::string& reason) {
  mesh_->abort(reason);
}

}  // namespace odbatch
