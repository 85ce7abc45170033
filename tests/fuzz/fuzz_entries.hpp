#pragma once
// The fuzz targets' entry points: each takes arbitrary bytes, feeds them to the project's code the
// way the project does (same functions, same limits) and checks what that code promises. A broken
// promise aborts with a message naming the target (fuzz_contract.hpp), as does an exception the
// code must not throw, so libFuzzer records the input as a crash. The libFuzzer executables
// (<name>_fuzz.cpp) and the replay test of the normal build (fuzz_replay_test.cpp) call the same
// functions.
#include <cstdint>
#include <span>
#include <string_view>

namespace odbatch::fuzz {

using Input = std::span<const std::uint8_t>;

// What the code under test made of an input: it accepted it (a proposal, a checkpoint, a
// conversation, an image, a config...) or rejected it with an error.
enum class Outcome : std::uint8_t { rejected, accepted };

// A round proposal frame from another rank, as the round coordinator takes it: decode_proposal
// with the coordinator's limits; the frame must be the accepted proposal's one encoding; then
// check_proposals and, when it passes, plan_round over two ranks holding the proposal.
Outcome proposal_frame(Input input);

// A checkpoint file's bytes: decode_checkpoint (CheckpointError is the only error), a re-encoding
// that decodes to the same checkpoint, the ranks' validation and re-sharding. Bytes without the
// checkpoint magic are taken as a body and wrapped in a valid header and checksum first, so that
// mutations reach the body's decoder.
Outcome checkpoint_file(Input input);

// A client's bytes on a store connection, through the functions the server calls on them:
// decode_store_frame_length and decode_store_body with the server's limits, store_hello_limits()
// before the hello; every frame decoded must be its message's one encoding.
Outcome store_frames(Input input);

// The same bytes sent to a real TcpStoreServer (in this process, on loopback) that requires the
// token below; its replies must be well-formed frames and it must close the connection once the
// client has sent everything.
Outcome store_session(Input input);
inline constexpr std::string_view kStoreSessionToken = "fuzz-store-token";

// A JSONL dataset file: DatasetIndex and RecordReader find exactly the records a line split finds,
// at their lines, and parse_conversation turns each into a conversation or a rejection that
// names the record, never an exception. Records longer than the limit below are rejected unread,
// as RecordReader's max_record_bytes does in a pipeline; it is small, so that inputs reach it.
Outcome jsonl_records(Input input);
inline constexpr std::uint64_t kJsonlRecordLimit = 4096;

// A WebDataset tar shard: DatasetIndex finds disjoint samples inside the file, in order, and
// RecordReader turns each into a record located by its key or a rejection located in the shard,
// never an exception; parse_conversation's rejections name the sample.
Outcome tar_shard(Input input);

// A JPEG file under the pipeline's default limits and geometry: the header agrees with decode(),
// which returns an image of the promised geometry or an ImageError, the same on a second decode.
Outcome jpeg_image(Input input);

// A PNG file, and the same bytes with every chunk's CRC recomputed (so that mutations reach the
// decoding), through ImageDecoder under the pipeline's default limits and geometry: the format
// and header agree with decode(), which returns an image of the promised geometry or an
// ImageError, the same on a second decode.
Outcome png_image(Input input);

// A WebP file (still, lossless or lossy, with alpha, animated), with the PNG target's promises.
Outcome webp_image(Input input);

// Four sides and pixels for BicubicResampler: every SIMD level this CPU has gives the scalar
// kernels' bytes (image_resize_entry.cpp says how the bytes become sizes).
Outcome image_resize(Input input);

// A pipeline TOML file: PipelineConfig::from_toml returns a valid config or throws
// ConfigFileError, nothing else.
Outcome pipeline_toml(Input input);

// A chat template's text (then, after a NUL byte, its variables as a JSON object): jinja::Template
// parses it or throws a syntax JinjaError; render() returns text within kMaxTextBytes, its
// generation ranges inside it, or throws a render or raised JinjaError, its message within
// kMaxErrorTextBytes; never another exception, never past the budgets of jinja_budgets.hpp.
Outcome jinja_template(Input input);

// A model's tokenizer.json: parse_hf_tokenizer loads it or throws TokenizerModelError naming the
// file, nothing else (never std::bad_alloc: the file's limits come first); a loaded tokenizer
// encodes a short text, with and without offsets, and decodes its ids.
Outcome tokenizer_json(Input input);

// A tiktoken ranks file with cl100k_base's pattern and special tokens, with the promises of
// tokenizer_json.
Outcome tiktoken_ranks(Input input);

// A shard list file (`@list` in source.files) over a directory of a few shards:
// expand_dataset_paths returns existing files, none twice, or throws DatasetError saying which
// list, file or pattern; brace ranges are bounded before any name is made.
Outcome shard_list(Input input);

struct Target {
  std::string_view name;  // the fuzzer's name: tests/fuzz/<name>_fuzz.cpp
  Outcome (*entry)(Input);
};

// Every target, in the order tools/fuzz.sh runs them.
std::span<const Target> targets();

}  // namespace odbatch::fuzz
