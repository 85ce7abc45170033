// A checkpoint file as `odbatch run --resume` and Pipeline::resume take it.
#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "fuzz_contract.hpp"
#include "fuzz_entries.hpp"
#include "odbatch/proto_msgs/checkpoint_codec.hpp"

namespace odbatch::fuzz {
namespace {

constexpr std::string_view kTarget = "checkpoint_file";
constexpr std::string_view kSource = "fuzz.ckpt";

// What a resume does with a checkpoint whose parts are whole and in rank order: every rank's part
// is validated, then the pending samples are spread over other world sizes.
void expect_resharding_within_pending(const Checkpoint& checkpoint) {
  for (std::uint32_t world = 1; world <= 3; ++world) {
    for (std::uint32_t rank = 0; rank < world; ++rank) {
      for (const PendingSlice& slice : reshard_pending(checkpoint, world, rank)) {
        expect(slice.old_rank < checkpoint.world_size, kTarget, "a slice names an old rank");
        const auto& old =
            *std::ranges::find(checkpoint.ranks, slice.old_rank, &RankCheckpoint::rank);
        expect(slice.begin < slice.end && slice.end <= pending_samples(old), kTarget,
               "a slice lies within its old rank's pending samples");
      }
    }
  }
}

}  // namespace

Outcome checkpoint_file(Input input) {
  const std::span bytes(reinterpret_cast<const std::byte*>(input.data()), input.size());
  const std::vector<std::byte> file = has_checkpoint_magic(bytes)
                                          ? std::vector<std::byte>(bytes.begin(), bytes.end())
                                          : frame_checkpoint_body(bytes);

  Checkpoint checkpoint;
  try {
    checkpoint = decode_checkpoint(file, std::string(kSource));
  } catch (const CheckpointError& e) {
    expect(std::string_view(e.what()).starts_with(kSource), kTarget,
           "a checkpoint error names the file");
    return Outcome::rejected;
  }
  const auto encoded = encode_checkpoint(checkpoint);
  expect(decode_checkpoint(encoded, std::string(kSource)) == checkpoint, kTarget,
         "a decoded checkpoint re-encodes to bytes that decode to it again");

  bool whole = checkpoint.ranks.size() == checkpoint.world_size;
  for (std::uint32_t r = 0; whole && r < checkpoint.ranks.size(); ++r) {
    whole = checkpoint.ranks[r].rank == r;
    try {
      validate_rank_checkpoint(checkpoint, checkpoint.ranks[r]);
    } catch (const CheckpointError& e) {
      expect(std::string_view(e.what()).find("checkpoint") != std::string_view::npos, kTarget,
             "a rank's validation error says it is about the checkpoint");
      whole = false;
    }
  }
  if (whole) expect_resharding_within_pending(checkpoint);
  return Outcome::accepted;
}

}  // namespace odbatch::fuzz
