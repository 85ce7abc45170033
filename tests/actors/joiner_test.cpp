// The joiner alone, fed parts in scripted orders: it releases samples in shard order and only as
// many accepted ones as the packer asked for, returns a credit to the reader per sample
// released, tells the aligner once the lookahead behind the first round is ready, and gives the
// image buffers of released samples back to the pool.
#include <doctest/doctest.h>

#include "actor_test_bench.hpp"
#include "joiner.hpp"
#include "pooled_pixels.hpp"

namespace odbatch::actors::test {
namespace {

using Lines = std::vector<std::string>;

PipelineConfig lookahead_of(std::uint32_t lookahead) {
  PipelineConfig config;
  config.flow.lookahead = lookahead;
  return config;
}

SampleStart start_of(std::uint64_t seq, SampleId id, std::uint32_t parts) {
  SampleStart start;
  start.seq = seq;
  start.id = id;
  start.parts = parts;
  return start;
}

TextDone text_of(std::uint64_t seq, SampleId id) {
  TextDone done;
  done.seq = seq;
  done.sample = sample_of(id, 5);
  return done;
}

ImageDone image_of(std::uint64_t seq, std::uint32_t image) {
  ImageDone done;
  done.seq = seq;
  done.image = image;
  done.decoded = std::make_shared<DecodedImage>();
  return done;
}

TEST_CASE("the joiner releases complete samples in shard order, as many as the packer wants") {
  ActorTestBench bench(lookahead_of(2), {10, 11, 12, 13});
  auto joiner = spawn_joiner(bench.system(), bench.context());
  bench.wiring().joiner = joiner;

  // Position 1 is complete before position 0 is even announced: it waits.
  bench.send(joiner, start_of(1, 11, 1));
  bench.send(joiner, text_of(1, 11));
  bench.send(joiner, want_atom::value, std::uint32_t{2});
  CHECK(bench.received("packer").empty());
  CHECK(bench.received("reader").empty());

  // Position 0's text and image arrive in either order; then both go, in order, with their
  // credits in one message.
  bench.send(joiner, start_of(0, 10, 2));
  bench.send(joiner, image_of(0, 0));
  CHECK(bench.received("packer").empty());
  bench.send(joiner, text_of(0, 10));
  CHECK(bench.received("packer") == Lines{"sample 10", "sample 11"});
  CHECK(bench.received("reader") == Lines{"credit 2"});
  // The lookahead (2 complete samples beyond the first round's) is not ready yet.
  CHECK(bench.received("aligner").empty());

  // A rejection is complete at once but waits, like any sample, until the packer wants more.
  SampleStart rejected = start_of(2, 12, 0);
  rejected.rejection = Rejection{12, "malformed_json", "a.jsonl:3: cannot parse"};
  bench.send(joiner, rejected);
  CHECK(bench.received("aligner").empty());
  bench.send(joiner, start_of(3, 13, 1));
  bench.send(joiner, text_of(3, 13));
  CHECK(bench.received("aligner") == Lines{"primed"});
  CHECK(bench.received("packer").empty());

  // Rejections pass through without counting against what the packer wants.
  bench.send(joiner, want_atom::value, std::uint32_t{1});
  CHECK(bench.received("packer") == Lines{"rejected 12", "sample 13"});
  CHECK(bench.received("reader") == Lines{"credit 2"});
  CHECK(bench.received("aligner").empty());
}

TEST_CASE("a rejected part rejects its sample, its other parts still complete it") {
  ActorTestBench bench(lookahead_of(1), {20});
  auto joiner = spawn_joiner(bench.system(), bench.context());
  bench.wiring().joiner = joiner;
  bench.send(joiner, want_atom::value, std::uint32_t{1});
  bench.send(joiner, start_of(0, 20, 2));
  bench.send(joiner, text_of(0, 20));
  CHECK(bench.received("packer").empty());
  ImageDone corrupt;
  corrupt.seq = 0;
  corrupt.rejection = Rejection{20, "corrupt_image", "a.jsonl:1: image x.jpg: bad"};
  bench.send(joiner, corrupt);
  CHECK(bench.received("packer") == Lines{"rejected 20"});
  CHECK(bench.received("reader") == Lines{"credit 1"});
  // The whole shard is out: the first round is primed, whatever the lookahead.
  CHECK(bench.received("aligner") == Lines{"primed"});
}

TEST_CASE(
    "image buffers go back to the pool once their sample is released, or at once if rejected") {
  ActorTestBench bench(lookahead_of(1), {30, 31});
  auto joiner = spawn_joiner(bench.system(), bench.context());
  bench.wiring().joiner = joiner;
  const auto& pool = bench.context()->resources().image_buffers;
  REQUIRE(pool->kept_buffers() == 0);
  const auto decoded = [&](std::uint64_t seq, std::size_t bytes) {
    DecodedImage image;
    image.rgb.resize(bytes);
    ImageDone done;
    done.seq = seq;
    done.decoded = pooled_image(pool, std::move(image));
    return done;
  };
  bench.send(joiner, want_atom::value, std::uint32_t{2});

  // Sample 30 is joined with its image and handed to the packer (a probe, which drops it).
  ImageDone first = decoded(0, 1000);
  const std::uint8_t* first_pixels = first.decoded->rgb.data();
  bench.send(joiner, start_of(0, 30, 2));
  bench.send(joiner, text_of(0, 30));
  bench.send(joiner, std::move(first));
  CHECK(bench.received("packer") == Lines{"sample 30"});
  CHECK(pool->kept_buffers() == 1);
  CHECK(pool->take().rgb.data() == first_pixels);

  // Sample 31's text is rejected: its decoded image goes back with the rejection.
  bench.send(joiner, start_of(1, 31, 2));
  bench.send(joiner, decoded(1, 2000));
  TextDone rejected;
  rejected.seq = 1;
  rejected.rejection = Rejection{31, "over_length", "a.jsonl:2: too long"};
  bench.send(joiner, rejected);
  CHECK(bench.received("packer") == Lines{"rejected 31"});
  CHECK(pool->kept_buffers() == 1);
  CHECK(pool->take().rgb.size() == 2000);
}

}  // namespace
}  // namespace odbatch::actors::test
