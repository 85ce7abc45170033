#include "fuzz_seeds.hpp"

#include <png.h>
#include <turbojpeg.h>
#include <webp/encode.h>
#include <webp/mux.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <utility>
#include <variant>

#include "fuzz_entries.hpp"
#include "odbatch/config/checkpoint_settings.hpp"
#include "odbatch/config/pipeline_config.hpp"
#include "odbatch/core/plan.hpp"
#include "odbatch/core/window.hpp"
#include "odbatch/image/image_decoder.hpp"
#include "odbatch/image/image_file.hpp"
#include "odbatch/image/jpeg_decoder.hpp"
#include "odbatch/proto_msgs/checkpoint_codec.hpp"
#include "odbatch/proto_msgs/proposal_codec.hpp"
#include "odbatch/source/conversation_parser.hpp"
#include "odbatch/source/record_reader.hpp"
#include "odbatch/store/store.hpp"
#include "odbatch/store/store_wire.hpp"
#include "odbatch/text/chat_tokenizer.hpp"
#include "tar_builder.hpp"
#include "tiny_tokenizer_files.hpp"

namespace odbatch::fuzz {
namespace {

using Bytes = std::vector<std::uint8_t>;
namespace fs = std::filesystem;

// Records of the real dataset costed for the seeds: enough for two rounds of a small window.
constexpr std::size_t kCostedRecords = 48;

Bytes file_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(file.string() + ": cannot read a seed source");
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Bytes text_bytes(std::string_view text) {
  return Bytes(text.begin(), text.end());
}

template <class Byte>
Bytes to_bytes(const std::vector<Byte>& bytes) {
  Bytes out(bytes.size());
  std::transform(bytes.begin(), bytes.end(), out.begin(),
                 [](Byte b) { return static_cast<std::uint8_t>(b); });
  return out;
}

std::vector<std::string> lines_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(file.string() + ": cannot read a seed source");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  return lines;
}

// The example pipeline over the real dataset, and its first records costed as the pipeline
// costs them: parsed, images sized from their headers, tokenized.
struct RealRun {
  PipelineConfig config;
  std::vector<RunSetting> settings;
  std::uint64_t records = 0;
  std::vector<SampleCost> samples;
};

RealRun make_real_run(const fs::path& source_dir) {
  RealRun run;
  run.config = PipelineConfig::from_toml_file(source_dir / "examples/pipeline.toml");
  const auto index =
      std::make_shared<const DatasetIndex>(DatasetIndex::build(run.config.source.files));
  run.settings = checkpoint_settings(run.config, *index);
  run.records = index->record_count();
  const RecordReader reader(index, run.config.source.reader);
  const ChatTokenizer tokenizer(run.config.tokenizer.model,
                                effective_tokenizer_options(run.config));
  ImageDecoder decoder(run.config.images.decoder_limits);  // as the reader sizes images
  const auto& geometry = run.config.images.geometry;
  for (SampleId id = 0; id < run.records && run.samples.size() < kCostedRecords; ++id) {
    const auto record = reader.read(id);
    if (!std::holds_alternative<Record>(record)) continue;
    const auto& text = std::get<Record>(record);
    const auto parsed = parse_conversation(text.text, text.where());
    if (!std::holds_alternative<Conversation>(parsed)) continue;
    const auto& conversation = std::get<Conversation>(parsed);
    std::vector<std::uint32_t> visual_tokens;
    std::uint32_t patches = 0;
    for (const auto& image : conversation.images) {
      const auto bytes = read_image_file(run.config.source.image_root, image);
      if (!bytes) break;
      const auto header = decoder.read_header(bytes.value());
      if (!header) break;
      const auto target = smart_resize(header.value().height, header.value().width, geometry);
      if (!target) break;
      visual_tokens.push_back(target.value().grid.tokens);
      patches += target.value().grid.patches();
    }
    if (visual_tokens.size() != conversation.images.size()) continue;
    const auto tokenized = tokenizer.tokenize(conversation, visual_tokens);
    if (!std::holds_alternative<TokenizedSample>(tokenized)) continue;
    const auto& sample = std::get<TokenizedSample>(tokenized);
    run.samples.push_back({id, static_cast<std::uint32_t>(sample.input_ids.size()),
                           sample.supervised_targets, patches});
  }
  if (run.samples.size() < kCostedRecords)
    throw std::runtime_error("the dataset's first records yield too few samples for the seeds");
  return run;
}

const RealRun& real_run(const fs::path& source_dir) {
  static const RealRun run = make_real_run(source_dir);
  return run;
}

// Two rounds of a two-rank run whose ranks both hold the real samples: the proposals as sent
// and the checkpoints saved after the first step of the second round.
struct Rounds {
  std::vector<Proposal> proposals;
  std::vector<Checkpoint> checkpoints;
};

GlobalProgress progress_of(const RoundPlan& plan, std::uint32_t steps) {
  GlobalProgress progress;
  for (std::uint32_t s = 0; s < steps && s < plan.totals.size(); ++s) {
    progress.samples += plan.totals[s].samples;
    progress.tokens += plan.totals[s].tokens;
  }
  return progress;
}

Rounds make_rounds(const RealRun& run) {
  const BatchingConfig& batching = run.config.batching;
  constexpr std::uint32_t kWorld = 2;
  constexpr std::uint64_t kEpoch = 1;
  const std::size_t half = run.samples.size() / 2;
  Rounds rounds;

  RankWindow window;
  for (std::size_t i = 0; i < half; ++i) window.admit(run.samples[i]);
  Proposal first;
  first.epoch = kEpoch;
  first.fingerprint = fingerprint(batching, kWorld);
  first.settings = run.settings;  // a rank's first round carries them
  window.describe(first);
  rounds.proposals.push_back(first);
  const RoundPlan plan0 = plan_round(std::array{first, first}, batching, kEpoch, 0);
  std::vector<EmittedStep> emitted;
  window.apply(plan0, 0, 0, emitted);

  for (std::size_t i = half; i < run.samples.size(); ++i) window.admit(run.samples[i]);
  Proposal second = first;
  second.round = 1;
  second.prev_digest = plan0.digest;
  second.settings.clear();
  window.describe(second);
  rounds.proposals.push_back(second);
  Proposal draining = second;
  draining.state = RankState::draining;
  draining.entered = 0;
  rounds.proposals.push_back(draining);
  Proposal done = second;
  done.state = RankState::done;
  done.samples.clear();
  done.entered = 0;
  rounds.proposals.push_back(done);

  // Saved once the trainer took the first step of round 1: both ranks' windows at its start.
  const RoundPlan plan1 = plan_round(std::array{second, second}, batching, kEpoch, 1);
  Checkpoint joined;
  joined.epoch = kEpoch;
  joined.steps_taken = plan0.steps + 1;
  joined.progress = progress_of(plan0, plan0.steps);
  const auto in_round = progress_of(plan1, 1);
  joined.progress.samples += in_round.samples;
  joined.progress.tokens += in_round.tokens;
  joined.world_size = kWorld;
  joined.settings = run.settings;
  for (std::uint32_t rank = 0; rank < kWorld; ++rank) {
    RankCheckpoint part;
    part.rank = rank;
    part.round = 1;
    part.round_first_step = plan0.steps;
    part.cursor = run.samples.size();
    part.shard_size = run.records / kWorld;
    part.before_round = progress_of(plan0, plan0.steps);
    const auto first_step = plan1.ranks[rank].group(0);
    for (std::uint32_t i = 0; i < window.samples().size(); ++i) {
      const auto& sample = window.samples()[i];
      part.window.push_back(
          {sample.cost.id, sample.age, std::ranges::find(first_step, i) != first_step.end()});
    }
    joined.ranks.push_back(std::move(part));
  }
  rounds.checkpoints.push_back(joined);
  Checkpoint rank_part = joined;  // what rank 1 writes before rank 0 joins the parts
  rank_part.ranks.erase(rank_part.ranks.begin());
  rounds.checkpoints.push_back(rank_part);

  // The same epoch resumed onto three ranks, saved before any step there.
  Checkpoint resumed;
  resumed.epoch = kEpoch;
  resumed.steps_taken = joined.steps_taken;
  resumed.progress = joined.progress;
  resumed.world_size = 3;
  resumed.settings = run.settings;
  resumed.origin = std::make_shared<const Checkpoint>(joined);
  for (std::uint32_t rank = 0; rank < resumed.world_size; ++rank) {
    RankCheckpoint part;
    part.rank = rank;
    part.round = 2;
    part.round_first_step = joined.steps_taken;
    part.shard_size = pending_samples(joined.ranks[0]) + pending_samples(joined.ranks[1]);
    part.shard_size = part.shard_size / 3 + (rank < part.shard_size % 3 ? 1 : 0);
    part.before_round = joined.progress;
    resumed.ranks.push_back(std::move(part));
  }
  rounds.checkpoints.push_back(resumed);
  return rounds;
}

std::vector<Seed> proposal_seeds(const fs::path& source_dir) {
  const Rounds rounds = make_rounds(real_run(source_dir));
  const std::array<std::string_view, 4> names = {"round0-with-settings", "round1", "draining",
                                                 "done"};
  std::vector<Seed> seeds;
  for (std::size_t i = 0; i < rounds.proposals.size(); ++i)
    seeds.push_back({std::string(names[i]), to_bytes(encode_proposal(rounds.proposals[i]))});
  return seeds;
}

// Whole files, and their bodies alone (the target wraps bytes without the magic).
std::vector<Seed> checkpoint_seeds(const fs::path& source_dir) {
  constexpr std::size_t kHeaderBytes = 20;
  constexpr std::size_t kChecksumBytes = 8;
  const Rounds rounds = make_rounds(real_run(source_dir));
  const std::array<std::string_view, 3> names = {"joined", "rank-part", "resumed-onto-3"};
  std::vector<Seed> seeds;
  for (std::size_t i = 0; i < rounds.checkpoints.size(); ++i) {
    const Bytes file = to_bytes(encode_checkpoint(rounds.checkpoints[i]));
    seeds.push_back({std::string(names[i]) + ".ckpt", file});
    seeds.push_back({std::string(names[i]) + ".body",
                     Bytes(file.begin() + kHeaderBytes, file.end() - kChecksumBytes)});
  }
  return seeds;
}

// A rank's requests to the store as the control plane makes them, under a run's key prefix.
std::vector<Seed> store_seeds() {
  const std::string prefix = "run/fuzz/";
  const auto key = [&](std::string_view name) { return prefix + std::string(name); };
  const auto hello = [](std::string_view token) {
    return StoreMessage{StoreOp::hello, 0, {}, {store_bytes(token)}};
  };
  const std::vector<std::pair<std::string, StoreMessage>> requests = {
      {"add-heartbeat", {StoreOp::add, 1, {key("heartbeat/0")}, {}}},
      {"set-ready", {StoreOp::set, 0, {key("ready/0/3/0")}, {store_bytes("4096")}}},
      {"get-missing-key", {StoreOp::get, 5, {key("ready/0/3/1")}, {}}},
      {"check-finished", {StoreOp::check, 0, {key("finished/1"), key("left/1")}, {}}},
      {"wait-ready", {StoreOp::wait, 5, {key("ready/0/3/0"), key("ready/0/3/1")}, {}}},
      {"set-and-wait-departed",
       {StoreOp::set_and_wait,
        5,
        {key("departed/0"), key("departed/0"), key("departed/1")},
        {store_bytes("round 7 step 42")}}},
      {"compare-and-set-abort",
       {StoreOp::compare_and_set, 0, {key("abort")}, {store_bytes("rank 1: lost the mesh")}}},
      {"compare-and-set-expected",
       {StoreOp::compare_and_set, 0, {key("abort")}, {store_bytes(""), store_bytes("rank 0")}}},
      {"erase-left", {StoreOp::erase, 0, {key("left/1")}, {}}},
      {"erase-ready-block", {StoreOp::erase_prefix, 0, {key("ready/0/")}, {}}},
  };
  const StoreWireLimits limits;
  const auto frame = [&](const StoreMessage& message) {
    std::vector<std::byte> bytes;
    if (const auto error = encode_store_frame(message, bytes, limits))
      throw std::runtime_error("store seed: " + error->message);
    return to_bytes(bytes);
  };
  const Bytes greeting = frame(hello(kStoreSessionToken));
  std::vector<Seed> seeds{{"hello", greeting},
                          {"hello-wrong-token", frame(hello("not-the-token"))},
                          {"set-before-hello", frame(requests[1].second)}};
  Bytes session = greeting;
  for (const auto& [name, request] : requests) {
    Bytes one = greeting;
    const Bytes bytes = frame(request);
    one.insert(one.end(), bytes.begin(), bytes.end());
    seeds.push_back({"hello-then-" + name, std::move(one)});
    // The session leaves out the waits that its own keys do not satisfy.
    if (request.op == StoreOp::get || request.op == StoreOp::set_and_wait) continue;
    session.insert(session.end(), bytes.begin(), bytes.end());
  }
  seeds.push_back({"session", std::move(session)});
  return seeds;
}

// Shards of the first ShareGPT records (KEY.json, and a small member for each image) in the
// three tar formats, and damaged ones: truncated mid-member, a broken header checksum, a key
// collision and a repeated member.
std::vector<Seed> tar_seeds(const fs::path& source_dir) {
  std::vector<test::TarEntry> entries;
  std::size_t bytes = 0;
  int key = 0;
  for (const auto& line : lines_of(source_dir / "data/sft/sharegpt.jsonl")) {
    if (line.size() > kJsonlRecordLimit) continue;
    const std::string name = "s" + std::to_string(key++);
    entries.push_back({name + ".json", line});
    if (line.find("\"image") != std::string::npos) entries.push_back({name + ".jpg", "\xff\xd8"});
    bytes += line.size();
    if (bytes > 2 * kJsonlRecordLimit) break;
  }
  std::vector<Seed> seeds;
  for (const auto& [name, format] :
       {std::pair{"ustar", test::TarFormat::ustar}, std::pair{"pax", test::TarFormat::pax},
        std::pair{"gnu", test::TarFormat::gnu}}) {
    seeds.push_back({std::string(name) + ".tar", text_bytes(test::tar_bytes(entries, format))});
  }
  const auto whole = test::tar_bytes(entries);
  seeds.push_back({"truncated.tar", text_bytes(whole.substr(0, whole.size() * 2 / 3))});
  auto damaged = whole;
  damaged[damaged.find("s1.json") + 148] ^= 0x11;  // the header's checksum field
  seeds.push_back({"bad-checksum.tar", text_bytes(damaged)});
  auto flawed = entries;
  flawed.push_back(entries.front());
  flawed.insert(flawed.begin() + 1, entries.front());
  seeds.push_back({"collision-and-repeat.tar", text_bytes(test::tar_bytes(flawed))});
  return seeds;
}

std::vector<Seed> jsonl_seeds(const fs::path& source_dir) {
  const fs::path data = source_dir / "data";
  std::vector<Seed> seeds;
  // The first records of each file, as a file.
  for (const char* file : {"sft/sharegpt.jsonl", "sft/openai.jsonl", "sft/mixed.jsonl"}) {
    std::string head;
    for (const auto& line : lines_of(data / file)) {
      if (line.size() > kJsonlRecordLimit) continue;  // rejected unread
      head += line + "\n";
      if (head.size() > 2 * kJsonlRecordLimit) break;
    }
    seeds.push_back({fs::path(file).stem().string() + "-head.jsonl", text_bytes(head)});
  }
  // The same records as a LLaVA-style JSON array file.
  std::string array = "[";
  for (const auto& line : lines_of(data / "sft/sharegpt.jsonl")) {
    if (line.size() > kJsonlRecordLimit) continue;
    array += (array.size() > 1 ? ",\n" : "") + line;
    if (array.size() > 2 * kJsonlRecordLimit) break;
  }
  seeds.push_back({"sharegpt-head.json", text_bytes(array + "]\n")});
  // Every defective record of the dirty copy alone, and its beginning with CRLF line ends.
  const auto dirty = lines_of(data / "dirty/dirty.jsonl");
  std::string crlf;
  for (std::size_t i = 0; i < dirty.size(); ++i) {
    if (dirty[i].size() > kJsonlRecordLimit) continue;
    seeds.push_back({"dirty-line-" + std::to_string(i + 1) + ".jsonl", text_bytes(dirty[i])});
    if (crlf.size() < 2 * kJsonlRecordLimit) crlf += dirty[i] + "\r\n";
  }
  seeds.push_back({"dirty-head-crlf.jsonl", text_bytes(crlf)});
  return seeds;
}

// A real photo decoded small (84x56 pixels at most), for the seeds that re-encode it.
DecodedImage small_photo(const fs::path& photo) {
  JpegDecoder decoder;
  DecodedImage small;
  VisionGeometryConfig geometry;
  geometry.min_pixels = 28 * 28;
  geometry.max_pixels = 84 * 56;
  if (const auto error = decoder.decode(file_bytes(photo), geometry, small))
    throw std::runtime_error(photo.string() + ": " + error->message);
  return small;
}

// A real photo re-encoded small in each layout the decoder handles: chroma subsamplings, grey,
// progressive and CMYK (YCCK).
std::vector<Seed> reencoded_photos(const fs::path& photo) {
  const DecodedImage small = small_photo(photo);
  std::vector<std::uint8_t> cmyk(std::size_t{small.width} * small.height * 4);
  for (std::size_t p = 0; p < std::size_t{small.width} * small.height; ++p) {
    for (std::size_t c = 0; c < 3; ++c) cmyk[p * 4 + c] = small.rgb[p * 3 + c];
    cmyk[p * 4 + 3] = 255;
  }
  struct Layout {
    const char* name;
    int subsampling;
    int flags;
    bool cmyk;
  };
  constexpr std::array<Layout, 8> layouts{{{"s444", TJSAMP_444, 0, false},
                                           {"s422", TJSAMP_422, 0, false},
                                           {"s420", TJSAMP_420, 0, false},
                                           {"s440", TJSAMP_440, 0, false},
                                           {"s411", TJSAMP_411, 0, false},
                                           {"grey", TJSAMP_GRAY, 0, false},
                                           {"progressive", TJSAMP_420, TJFLAG_PROGRESSIVE, false},
                                           {"ycck", TJSAMP_444, 0, true}}};
  const std::unique_ptr<void, int (*)(tjhandle)> compressor(tjInitCompress(), tjDestroy);
  if (!compressor) throw std::runtime_error("cannot create a TurboJPEG compressor");
  std::vector<Seed> seeds;
  for (const Layout& layout : layouts) {
    unsigned char* jpeg = nullptr;
    unsigned long size = 0;
    const int status = tjCompress2(compressor.get(), layout.cmyk ? cmyk.data() : small.rgb.data(),
                                   static_cast<int>(small.width), 0, static_cast<int>(small.height),
                                   layout.cmyk ? TJPF_CMYK : TJPF_RGB, &jpeg, &size,
                                   layout.subsampling, 75, layout.flags);
    const std::unique_ptr<unsigned char, void (*)(unsigned char*)> owned(jpeg, tjFree);
    if (status != 0)
      throw std::runtime_error(std::string("tjCompress2: ") + tjGetErrorStr2(nullptr));
    seeds.push_back({photo.stem().string() + "-" + layout.name + ".jpg", Bytes(jpeg, jpeg + size)});
  }
  return seeds;
}

std::vector<Seed> jpeg_seeds(const fs::path& source_dir) {
  const fs::path data = source_dir / "data";
  std::vector<Seed> seeds = reencoded_photos(data / "images/sklearn/china.jpg");
  // Small files of the dataset as they are: grey video frames, and the dirty copy's broken ones.
  for (const char* file :
       {"images/dlib/video_frames/frame_000236.jpg", "images/dlib/video_frames/frame_000173.jpg",
        "dirty/images/skimage/truncated.jpg", "dirty/images/bombs/pixel_bomb_sof0.jpg"})
    seeds.push_back({fs::path(file).filename().string(), file_bytes(data / file)});
  return seeds;
}

// A photo's RGB pixels with a fourth channel, alpha rising left to right.
Bytes with_alpha(const DecodedImage& small) {
  Bytes rgba;
  for (std::size_t p = 0; p < std::size_t{small.width} * small.height; ++p) {
    rgba.insert(rgba.end(), small.rgb.begin() + 3 * p, small.rgb.begin() + 3 * p + 3);
    rgba.push_back(static_cast<std::uint8_t>(255 * (p % small.width) / small.width));
  }
  return rgba;
}

// `pixels` as a PNG by libpng's simplified writer; `colormap` for the colour-mapped formats.
Bytes png_of(const DecodedImage& small, png_uint_32 format, const void* pixels,
             const Bytes& colormap = {}) {
  ::png_image image{};  // libpng's struct, not the fuzz target
  image.version = PNG_IMAGE_VERSION;
  image.width = small.width;
  image.height = small.height;
  image.format = format;
  image.colormap_entries = static_cast<png_uint_32>(colormap.size() / 3);
  png_alloc_size_t size = 0;
  const void* map = colormap.empty() ? nullptr : colormap.data();
  if (png_image_write_to_memory(&image, nullptr, &size, 0, pixels, 0, map) == 0)
    throw std::runtime_error(std::string("libpng: ") + image.message);
  Bytes png(size);
  if (png_image_write_to_memory(&image, png.data(), &size, 0, pixels, 0, map) == 0)
    throw std::runtime_error(std::string("libpng: ") + image.message);
  png.resize(size);
  return png;
}

// The PNG with an acTL chunk declaring two frames inserted after IHDR: an animated PNG's
// header, whose first frame is the image data.
Bytes with_actl(Bytes png) {
  const std::uint8_t body[] = {'a', 'c', 'T', 'L', 0, 0, 0, 2, 0, 0, 0, 0};
  const auto crc = static_cast<std::uint32_t>(crc32(0, body, sizeof body));
  Bytes chunk = {0, 0, 0, 8};
  chunk.insert(chunk.end(), std::begin(body), std::end(body));
  for (int i = 0; i < 4; ++i) chunk.push_back(static_cast<std::uint8_t>(crc >> (24 - 8 * i)));
  png.insert(png.begin() + 8 + 25, chunk.begin(), chunk.end());
  return png;
}

// A real photo as PNGs of each colour type libpng's simplified writer makes: RGB, RGBA, grey,
// grey+alpha, 16-bit RGB, a 16-colour palette, and an animated header.
std::vector<Seed> png_seeds(const fs::path& source_dir) {
  const DecodedImage small = small_photo(source_dir / "data/images/sklearn/china.jpg");
  const std::size_t pixels = std::size_t{small.width} * small.height;
  Bytes grey(pixels), grey_alpha, indices(pixels), colormap;
  std::vector<std::uint16_t> rgb16;
  for (std::size_t p = 0; p < pixels; ++p) {
    grey[p] = small.rgb[3 * p + 1];
    grey_alpha.push_back(grey[p]);
    grey_alpha.push_back(static_cast<std::uint8_t>(p));
    indices[p] = static_cast<std::uint8_t>(grey[p] >> 4);
    for (int c = 0; c < 3; ++c)
      rgb16.push_back(static_cast<std::uint16_t>(small.rgb[3 * p + c] * 257));
  }
  for (int i = 0; i < 16; ++i)
    colormap.insert(colormap.end(),
                    {static_cast<std::uint8_t>(i * 17), static_cast<std::uint8_t>(255 - i * 17),
                     static_cast<std::uint8_t>(i * 5)});
  const Bytes rgba = with_alpha(small);
  const Bytes rgb = png_of(small, PNG_FORMAT_RGB, small.rgb.data());
  return {{"china-rgb.png", rgb},
          {"china-rgba.png", png_of(small, PNG_FORMAT_RGBA, rgba.data())},
          {"china-grey.png", png_of(small, PNG_FORMAT_GRAY, grey.data())},
          {"china-grey-alpha.png", png_of(small, PNG_FORMAT_GA, grey_alpha.data())},
          {"china-rgb16.png", png_of(small, PNG_FORMAT_LINEAR_RGB, rgb16.data())},
          {"china-palette.png", png_of(small, PNG_FORMAT_RGB_COLORMAP, indices.data(), colormap)},
          {"china-animated-header.png", with_actl(rgb)}};
}

Bytes webp_bytes(std::uint8_t* data, std::size_t size) {
  if (data == nullptr || size == 0) throw std::runtime_error("libwebp could not encode a seed");
  Bytes webp(data, data + size);
  WebPFree(data);
  return webp;
}

// Two frames of the photo (as is, then mirrored) as an animated WebP.
Bytes animated_webp(const DecodedImage& small) {
  const int width = static_cast<int>(small.width);
  const int height = static_cast<int>(small.height);
  WebPAnimEncoderOptions options;
  WebPConfig config;
  if (WebPAnimEncoderOptionsInit(&options) == 0 || WebPConfigInit(&config) == 0)
    throw std::runtime_error("libwebp version mismatch");
  const std::unique_ptr<WebPAnimEncoder, void (*)(WebPAnimEncoder*)> encoder(
      WebPAnimEncoderNew(width, height, &options), WebPAnimEncoderDelete);
  Bytes mirrored(small.rgb.size());
  for (std::size_t y = 0; y < small.height; ++y)
    for (std::size_t x = 0; x < small.width; ++x)
      for (std::size_t c = 0; c < 3; ++c)
        mirrored[(y * small.width + x) * 3 + c] =
            small.rgb[(y * small.width + small.width - 1 - x) * 3 + c];
  int timestamp = 0;
  const Bytes* frames[] = {&small.rgb, &mirrored};
  for (const Bytes* frame : frames) {
    WebPPicture picture;
    if (WebPPictureInit(&picture) == 0) throw std::runtime_error("libwebp version mismatch");
    picture.width = width;
    picture.height = height;
    picture.use_argb = 1;
    const bool added = WebPPictureImportRGB(&picture, frame->data(), width * 3) != 0 &&
                       WebPAnimEncoderAdd(encoder.get(), &picture, timestamp, &config) != 0;
    WebPPictureFree(&picture);
    if (!added) throw std::runtime_error("libwebp could not add an animation frame");
    timestamp += 100;
  }
  WebPData data;
  WebPDataInit(&data);
  if (WebPAnimEncoderAdd(encoder.get(), nullptr, timestamp, nullptr) == 0 ||
      WebPAnimEncoderAssemble(encoder.get(), &data) == 0)
    throw std::runtime_error("libwebp could not assemble the animation");
  Bytes webp(data.bytes, data.bytes + data.size);
  WebPDataClear(&data);
  return webp;
}

// A real photo as WebPs: lossy and lossless, each with and without alpha, and animated.
std::vector<Seed> webp_seeds(const fs::path& source_dir) {
  const DecodedImage small = small_photo(source_dir / "data/images/sklearn/china.jpg");
  const int width = static_cast<int>(small.width);
  const int height = static_cast<int>(small.height);
  const Bytes rgba = with_alpha(small);
  std::uint8_t* out = nullptr;
  std::vector<Seed> seeds;
  std::size_t size = WebPEncodeRGB(small.rgb.data(), width, height, width * 3, 75, &out);
  seeds.push_back({"china-lossy.webp", webp_bytes(out, size)});
  size = WebPEncodeRGBA(rgba.data(), width, height, width * 4, 75, &out);
  seeds.push_back({"china-lossy-alpha.webp", webp_bytes(out, size)});
  size = WebPEncodeLosslessRGB(small.rgb.data(), width, height, width * 3, &out);
  seeds.push_back({"china-lossless.webp", webp_bytes(out, size)});
  size = WebPEncodeLosslessRGBA(rgba.data(), width, height, width * 4, &out);
  seeds.push_back({"china-lossless-alpha.webp", webp_bytes(out, size)});
  seeds.push_back({"china-animated.webp", animated_webp(small)});
  return seeds;
}

// Size pairs the resampler's vector loops treat differently (shrinking, enlarging, one axis,
// unchanged, blocks of 8 and 16 rows with leftovers), with a few pixel bytes.
std::vector<Seed> resize_seeds() {
  struct Sizes {
    std::uint16_t source_width, source_height, target_width, target_height;
  };
  const Sizes sizes[] = {{640, 480, 252, 196}, {13, 9, 17, 11}, {37, 20, 37, 5},
                         {100, 20, 37, 20},    {5, 3, 5, 3},    {1023, 17, 511, 33},
                         {1, 1, 40, 30},       {300, 1, 7, 1}};
  std::vector<Seed> seeds;
  for (const Sizes& s : sizes) {
    Bytes bytes;
    for (const std::uint16_t side :
         {s.source_width, s.source_height, s.target_width, s.target_height}) {
      const std::uint16_t encoded = static_cast<std::uint16_t>(side - 1);
      bytes.push_back(static_cast<std::uint8_t>(encoded & 0xFF));
      bytes.push_back(static_cast<std::uint8_t>(encoded >> 8));
    }
    for (int i = 0; i < 61; ++i) bytes.push_back(static_cast<std::uint8_t>(i * 97 + 13));
    seeds.push_back({"resize-" + std::to_string(s.source_width) + "x" +
                         std::to_string(s.source_height) + "-" + std::to_string(s.target_width) +
                         "x" + std::to_string(s.target_height),
                     std::move(bytes)});
  }
  return seeds;
}

// The example configs, and every TOML block of the docs.
std::vector<Seed> toml_seeds(const fs::path& source_dir) {
  std::vector<Seed> seeds;
  for (const char* file : {"examples/pipeline.toml", "examples/batching.toml"})
    seeds.push_back({fs::path(file).filename().string(), file_bytes(source_dir / file)});
  std::vector<fs::path> docs;
  for (const auto& entry : fs::directory_iterator(source_dir / "docs"))
    if (entry.path().extension() == ".md") docs.push_back(entry.path());
  std::sort(docs.begin(), docs.end());
  for (const auto& doc : docs) {
    std::string block;
    bool inside = false;
    int blocks = 0;
    for (const auto& line : lines_of(doc)) {
      if (!inside && line == "```toml") {
        inside = true;
        block.clear();
      } else if (inside && line == "```") {
        inside = false;
        seeds.push_back(
            {doc.stem().string() + "-" + std::to_string(++blocks) + ".toml", text_bytes(block)});
      } else if (inside) {
        block += line + "\n";
      }
    }
  }
  return seeds;
}

// The real chat templates the tests keep, alone and followed by real records of the dataset as
// their variables; and templates that crashed, hung or took gigabytes before the engine's budgets.
std::vector<Seed> jinja_seeds(const fs::path& source_dir) {
  std::vector<fs::path> templates;
  for (const auto& entry :
       fs::directory_iterator(source_dir / "tests/runtime/text/data/chat_templates"))
    if (entry.path().extension() == ".jinja") templates.push_back(entry.path());
  std::sort(templates.begin(), templates.end());
  const auto records = lines_of(source_dir / "data/sft/openai.jsonl");
  std::vector<Seed> seeds;
  for (std::size_t i = 0; i < templates.size(); ++i) {
    const Bytes text = file_bytes(templates[i]);
    seeds.push_back({templates[i].filename().string(), text});
    Bytes with_record = text;
    with_record.push_back(0);
    const Bytes record = text_bytes(records.at(i % records.size()));
    with_record.insert(with_record.end(), record.begin(), record.end());
    seeds.push_back({templates[i].stem().string() + "-with-record.jinja", with_record});
  }
  const auto repeated = [](std::string_view piece, int times) {
    std::string out;
    for (int i = 0; i < times; ++i) out += piece;
    return out;
  };
  const std::pair<const char*, std::string> hostile[] = {
      {"plus-chain", "{{ 1" + repeated(" + 1", 3000) + " }}"},
      {"not-chain", "{{ " + repeated("not ", 3000) + "1 }}"},
      {"filter-chain", "{{ 'a'" + repeated("|trim", 3000) + " }}"},
      {"deep-list",
       "{% set ns = namespace(x=[]) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}"
       "{% endfor %}{{ ns.x }}"},
      {"nested-range",
       "{% for a in range(99999) %}{% for b in range(99999) %}{% endfor %}{% endfor %}"},
      {"double-macro",
       "{% macro f(n) %}{% if n > 0 %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}{% endmacro %}"
       "{{ f(60) }}"},
      {"deep-macro", "{% macro f(n) %}{% if n > 0 %}" + repeated("{% if true %}", 12) +
                         "{{ f(n-1) }}" + repeated("{% endif %}", 12) +
                         "{% endif %}{% endmacro %}{{ f(199) }}"},
      {"list-doubling",
       "{% set ns = namespace(x=[1]) %}{% for i in range(40) %}{% set ns.x = ns.x + ns.x %}"
       "{% endfor %}"},
      {"replace-growth",
       "{% set ns = namespace(s='a' * 1000000) %}{% for i in range(8) %}"
       "{% set ns.s = ns.s | replace('a', 'aaaaaaaaaaaaaaaa') %}{% endfor %}"},
      {"indent-growth", "{{ ('\n' * 30000000) | indent(100) }}"},
      {"shared-list", "{% set big = ['x' * 60] * 200000 %}{{ ([big] * 400) | tojson(indent=2) }}"},
      {"self-namespace", "{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}"},
      {"raise-big", "{{ raise_exception('x' * 60000000) }}"},
  };
  for (const auto& [name, text] : hostile)
    seeds.push_back({std::string(name) + ".jinja", text_bytes(text)});
  return seeds;
}

// Shard lists over the target's scratch shards (shard-000.tar ... shard-003.tar, a.jsonl,
// sub/b.jsonl), and ranges the expansion refuses before making a name.
std::vector<Seed> shard_list_seeds() {
  return {
      {"braces.txt", text_bytes("# the shards\nshard-{000..003}.tar\n")},
      {"globs.txt", text_bytes("shard-00[0-1].tar\n*.jsonl\n  sub/*.jsonl  \n")},
      {"alternatives.txt", text_bytes("shard-00{0,2}.tar\r\nhttp://127.0.0.1:1/x.tar\n")},
      {"twice.txt", text_bytes("a.jsonl\n./a.jsonl\n")},
      {"missing.txt", text_bytes("shard-{004..009}.tar\n")},
      {"huge-range.txt", text_bytes("shard-{0..99999999999}.tar\n")},
      {"whole-range.txt", text_bytes("shard-{-9223372036854775808..9223372036854775807}.tar\n")},
      {"empty.txt", text_bytes("\n# nothing\n")},
  };
}

// Small tokenizer.json files: plain, with added tokens and a post-processor, with normalizers,
// and the hostile ones the loader refuses or whose pattern hits its limit.
std::vector<Seed> tokenizer_json_seeds() {
  using nlohmann::json;
  std::vector<Seed> seeds;
  const auto add = [&](std::string name, const json& config) {
    seeds.push_back({std::move(name), text_bytes(config.dump())});
  };
  add("tiny.json", test::tiny_tokenizer());
  add("tiny-pair-merges.json", test::tiny_tokenizer(false));
  json added = test::tiny_tokenizer();
  added["added_tokens"] = {
      test::added_token(262, "<|im_start|>"),
      test::added_token(263, "<mask>", {{"lstrip", true}, {"rstrip", true}}),
      test::added_token(264, "[W]", {{"single_word", true}, {"special", false}}),
      test::added_token(265, "<s>", {{"normalized", true}, {"special", false}})};
  added["post_processor"] = {
      {"type", "BertProcessing"}, {"cls", {"<|im_start|>", 262}}, {"sep", {"<mask>", 263}}};
  add("added-tokens.json", added);
  json normalized = test::tiny_tokenizer();
  normalized["normalizer"] = {{"type", "Sequence"},
                              {"normalizers", {{{"type", "NFD"}}, {{"type", "NFKC"}}}}};
  add("normalizers.json", normalized);
  json nested = test::tiny_tokenizer();
  json* innermost = &nested["normalizer"];
  for (int depth = 0; depth < 70; ++depth) {
    *innermost = {{"type", "Sequence"}, {"normalizers", {{{"type", "NFC"}}}}};
    innermost = &(*innermost)["normalizers"][0];
  }
  add("nested-too-deep.json", nested);
  json far_id = test::tiny_tokenizer();
  far_id["model"]["vocab"]["ab"] = 50'000'000;
  add("far-id.json", far_id);
  json backtracking = test::tiny_tokenizer();
  backtracking["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {{"Regex", "(a+)+$"}};
  add("backtracking-pattern.json", backtracking);
  return seeds;
}

// Small tiktoken ranks files: plain, one with a rank far beyond its lines, one with a repeat.
std::vector<Seed> tiktoken_seeds() {
  const std::string ranks = test::tiny_ranks();
  return {{"tiny.tiktoken", text_bytes(ranks)},
          {"far-rank.tiktoken", text_bytes(ranks + test::base64("ab") + " 100000000\n")},
          {"repeated.tiktoken", text_bytes(ranks + test::base64("he") + " 300\n")}};
}

}  // namespace

std::vector<Seed> seeds_for(std::string_view target, const fs::path& source_dir) {
  if (target == "proposal_frame") return proposal_seeds(source_dir);
  if (target == "checkpoint_file") return checkpoint_seeds(source_dir);
  if (target == "store_frames" || target == "store_session") return store_seeds();
  if (target == "jsonl_records") return jsonl_seeds(source_dir);
  if (target == "tar_shard") return tar_seeds(source_dir);
  if (target == "jpeg_image") return jpeg_seeds(source_dir);
  if (target == "png_image") return png_seeds(source_dir);
  if (target == "webp_image") return webp_seeds(source_dir);
  if (target == "image_resize") return resize_seeds();
  if (target == "pipeline_toml") return toml_seeds(source_dir);
  if (target == "jinja_template") return jinja_seeds(source_dir);
  if (target == "shard_list") return shard_list_seeds();
  if (target == "tokenizer_json") return tokenizer_json_seeds();
  if (target == "tiktoken_ranks") return tiktoken_seeds();
  throw std::runtime_error("no seeds for an unknown fuzz target '" + std::string(target) + "'");
}

}  // namespace odbatch::fuzz
