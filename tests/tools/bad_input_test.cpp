// Every kind of bad record, image and dataset path through `odbatch run`, as a user meets them:
// each has exactly one named outcome. A bad record or image is rejected with its reason and its
// file:line (the run goes on, exit status 0, and `odbatch audit` finds every id emitted or
// rejected exactly once); a bad dataset path stops the run before it starts (exit status 2) with
// an error naming the path. Nothing may hang (each run has a deadline) or end the run.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using namespace odbatch::test;
using nlohmann::json;

// A run that outlives this is hung (on a FIFO, say).
constexpr int kRunDeadlineSeconds = 60;
constexpr std::uint64_t kMaxRecordBytes = 3'000'000;
constexpr std::size_t kMaxSeqLen = 512;

const fs::path kDataDir = ODBATCH_DATA_DIR;
// A 320x240 baseline JPEG of the dataset; its frame header (SOF0) starts at byte 89.
const fs::path kSmallJpeg = kDataDir / "images/dlib/video_frames/frame_000209.jpg";
constexpr std::size_t kFrameHeader = 89;

std::string read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& file, const std::string& bytes) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << bytes;
}

CliRun run_odbatch(const std::string& arguments) {
  return run_cli(arguments, kRunDeadlineSeconds);
}

std::string text_record(int n) {
  return json{{"id", "good-" + std::to_string(n)},
              {"conversations",
               {{{"from", "human"}, {"value", "Say hello, number " + std::to_string(n) + "."}},
                {{"from", "gpt"}, {"value", "Hello, number " + std::to_string(n) + "!"}}}}}
      .dump();
}

std::string image_record(const std::string& path) {
  return R"({"image": )" + json(path).dump() +
         R"(, "conversations": [{"from": "human", "value": "<image>\nWhat is this?"}, )"
         R"({"from": "gpt", "value": "A picture."}]})";
}

const std::string kTurns =
    R"("conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}])";

// "one two one two ..." (`count` words).
std::string words(std::size_t count) {
  std::string text;
  for (std::size_t i = 0; i < count; ++i) text += i % 2 == 0 ? "one " : "two ";
  return text;
}

std::string zeros_array(std::size_t size) {
  std::string array = "[0";
  array.reserve(2 * size + 1);
  for (std::size_t i = 1; i < size; ++i) array += ",0";
  return array + "]";
}

// Where a case's files go: records.jsonl, images/ (the image root), and dataset paths.
struct Workspace {
  fs::path dir;
  fs::path images() const { return dir / "images"; }
};

// One kind of bad input. A record case gives the record's line (it may first make image files);
// a dataset case gives the `files` entry (making what it names). `outcome` is the rejection
// reason of a record case; `detail` must appear in the rejection (after the record's file:line)
// or, for a dataset case, in the error.
struct BadInput {
  enum Kind { record, dataset } kind;
  std::string name;
  std::function<std::string(const Workspace&)> make;
  std::string outcome;  // the rejection reason; for a dataset case the exit status's meaning
  std::function<std::string(const Workspace&)> detail;
  bool needs_non_root = false;  // root reads files whatever their permissions
};

std::function<std::string(const Workspace&)> fixed(std::string text) {
  return [text](const Workspace&) { return text; };
}

std::vector<BadInput> bad_inputs() {
  const std::string jpeg = read_bytes(kSmallJpeg);
  std::string bomb = jpeg;  // the frame header claims 60000 x 60000
  for (const std::size_t at : {kFrameHeader + 5, kFrameHeader + 7}) {
    bomb[at] = static_cast<char>(0xEA);
    bomb[at + 1] = static_cast<char>(0x60);
  }
  const auto image_file = [](const std::string& name, std::string bytes) {
    return [name, bytes](const Workspace& w) {
      write_bytes(w.images() / name, bytes);
      return image_record(name);
    };
  };
  const auto image_path = [](const std::string& name, const std::string& problem) {
    return [name, problem](const Workspace& w) {
      return "image " + name + ": " + (w.images() / name).string() + ": " + problem;
    };
  };
  return {
      {BadInput::record, "malformed JSON", fixed(R"({"conversations": [)"), "malformed_json",
       fixed("malformed JSON at byte 20: syntax error")},
      {BadInput::record, "a number out of range", fixed(R"({"x": 1e400, )" + kTurns + "}"),
       "malformed_json", fixed("malformed JSON: number overflow parsing '1e400'")},
      {BadInput::record, "a fuzzer's overflow before a syntax error", fixed("99777891e891essa "),
       "malformed_json", fixed("number overflow parsing '99777891e891'")},
      {BadInput::record, "invalid UTF-8",
       fixed("{\"conversations\": [{\"from\": \"human\", \"value\": \"caf\xe9\"}]}"),
       "invalid_utf8", fixed("invalid UTF-8 at byte 51 (0xe9)")},
      {BadInput::record, "a raw NUL inside a string",
       fixed(std::string(R"({"conversations": [{"from": "human", "value": "a)") + '\0' +
             R"(b"}, {"from": "gpt", "value": "a"}]})"),
       "malformed_json", fixed("control character U+0000 (NUL) must be escaped")},
      {BadInput::record, "an escaped NUL inside an image path",
       fixed(R"({"image": "a\u0000.jpg", )" + kTurns + "}"), "bad_image_path",
       fixed("image path contains a NUL character")},
      {BadInput::record, "100k unclosed '['", fixed(std::string(100'000, '[')), "malformed_json",
       fixed("JSON nested deeper than 64 levels")},
      {BadInput::record, "100k levels of nesting under a key",
       fixed(R"({"x": )" + std::string(100'000, '[') + std::string(100'000, ']') + ", " + kTurns +
             "}"),
       "malformed_json", fixed("JSON nested deeper than 64 levels")},
      {BadInput::record, "an array of 1.1 million values",
       fixed(R"({"x": )" + zeros_array(1'100'000) + ", " + kTurns + "}"), "malformed_json",
       fixed("JSON with more than 1048576 values")},
      {BadInput::record, "an empty object", fixed("{}"), "missing_field",
       fixed("record: has neither `conversations` (ShareGPT) nor `messages` (OpenAI)")},
      {BadInput::record, "an empty conversation", fixed(R"({"conversations": []})"),
       "empty_conversation", fixed("conversations: no messages")},
      {BadInput::record, "not an object", fixed("[]"), "not_an_object",
       fixed("record is a JSON array, not an object")},
      {BadInput::record, "a record over max_record_bytes",
       fixed(R"({"x": ")" + std::string(kMaxRecordBytes, 'x') + R"(", )" + kTurns + "}"),
       "record_too_long", fixed(", over the limit of " + std::to_string(kMaxRecordBytes))},
      {BadInput::record, "a sample over max_seq_len, with over_length = \"reject\"",
       fixed(json{{"conversations",
                   {{{"from", "human"}, {"value", "Count."}},
                    {{"from", "gpt"}, {"value", words(4 * kMaxSeqLen)}}}}}
                 .dump()),
       "over_length", fixed("")},
      {BadInput::record, "a missing image", fixed(image_record("missing.jpg")), "missing_file",
       image_path("missing.jpg", "no such file")},
      {BadInput::record, "a JPEG cut inside its frame header",
       image_file("cut_header.jpg", jpeg.substr(0, kFrameHeader + 6)), "corrupt",
       fixed("image cut_header.jpg: ")},
      // Found by the image decoder, not the reader: its rejection names file:line all the same.
      {BadInput::record, "a JPEG cut inside its entropy-coded data",
       image_file("cut_data.jpg", jpeg.substr(0, jpeg.size() / 2)), "corrupt",
       fixed("image cut_data.jpg: ")},
      {BadInput::record, "a pixel bomb: a JPEG header claiming 60000x60000",
       image_file("bomb.jpg", bomb), "pixel_bomb", fixed("image bomb.jpg: ")},
      {BadInput::record, "an image path leaving the root with '..'",
       fixed(image_record("../records.jsonl")), "bad_image_path",
       fixed("image: image path '../records.jsonl' leaves the image root")},
      {BadInput::record, "an absolute image path", fixed(image_record("/etc/passwd")),
       "bad_image_path", fixed("image: absolute image path '/etc/passwd'")},
      {BadInput::record, "a symlink loop as image",
       [](const Workspace& w) {
         fs::create_symlink("loop.jpg", w.images() / "loop.jpg");
         return image_record("loop.jpg");
       },
       "unreadable", image_path("loop.jpg", "cannot open: Too many levels of symbolic links")},
      {BadInput::record, "a FIFO as image",
       [](const Workspace& w) {
         REQUIRE(::mkfifo((w.images() / "fifo.jpg").c_str(), 0600) == 0);
         return image_record("fifo.jpg");
       },
       "unreadable", image_path("fifo.jpg", "not a regular file (a FIFO)")},
      {BadInput::record, "a directory as image",
       [](const Workspace& w) {
         fs::create_directories(w.images() / "folder.jpg");
         return image_record("folder.jpg");
       },
       "unreadable", image_path("folder.jpg", "not a regular file (a directory)")},
      {BadInput::record, "an image nobody may read",
       [jpeg](const Workspace& w) {
         write_bytes(w.images() / "secret.jpg", jpeg);
         fs::permissions(w.images() / "secret.jpg", fs::perms::none);
         return image_record("secret.jpg");
       },
       "unreadable", image_path("secret.jpg", "cannot open: Permission denied"), true},

      {BadInput::dataset, "a FIFO as dataset",
       [](const Workspace& w) {
         REQUIRE(::mkfifo((w.dir / "fifo.jsonl").c_str(), 0600) == 0);
         return (w.dir / "fifo.jsonl").string();
       },
       "bad configuration",
       [](const Workspace& w) {
         return (w.dir / "fifo.jsonl").string() + ": not a regular file (a FIFO)";
       }},
      {BadInput::dataset, "a directory as dataset",
       [](const Workspace& w) {
         fs::create_directories(w.dir / "folder.jsonl");
         return (w.dir / "folder.jsonl").string();
       },
       "bad configuration",
       [](const Workspace& w) {
         return (w.dir / "folder.jsonl").string() + ": not a regular file (a directory)";
       }},
      {BadInput::dataset, "a missing dataset file",
       [](const Workspace& w) { return (w.dir / "missing.jsonl").string(); }, "bad configuration",
       [](const Workspace& w) {
         return "dataset file '" + (w.dir / "missing.jsonl").string() + "' does not exist";
       }},
      {BadInput::dataset, "a pattern matching nothing",
       [](const Workspace& w) { return (w.dir / "none-*.jsonl").string(); }, "bad configuration",
       [](const Workspace& w) {
         return "dataset pattern '" + (w.dir / "none-*.jsonl").string() + "' matches no file";
       }},
      {BadInput::dataset, "an empty dataset",
       [](const Workspace& w) {
         write_bytes(w.dir / "empty.jsonl", "\n  \n");
         return (w.dir / "empty.jsonl").string();
       },
       "bad configuration",
       [](const Workspace& w) {
         return "dataset file '" + (w.dir / "empty.jsonl").string() + "' holds no records";
       }},
      {BadInput::dataset, "a dataset file nobody may read",
       [](const Workspace& w) {
         write_bytes(w.dir / "secret.jsonl", text_record(0) + "\n");
         fs::permissions(w.dir / "secret.jsonl", fs::perms::none);
         return (w.dir / "secret.jsonl").string();
       },
       "bad configuration",
       [](const Workspace& w) {
         return (w.dir / "secret.jsonl").string() + ": cannot open: Permission denied";
       },
       true},
  };
}

std::string pipeline_toml(const std::string& files_entry, const Workspace& w,
                          const std::string& on_bad_record = "skip") {
  return "[source]\nfiles = [" + json(files_entry).dump() +
         "]\nimage_root = " + json(w.images().string()).dump() +
         "\nmax_record_bytes = " + std::to_string(kMaxRecordBytes) + "\non_bad_record = \"" +
         on_bad_record + "\"\n[tokenizer]\nmodel = " +
         json((kDataDir / "tokenizer/odbatch-unigram-8k.model").string()).dump() +
         "\nworkers = 1\n[batching]\nmax_seq_len = " + std::to_string(kMaxSeqLen) +
         "\nover_length = \"reject\"\n";
}

Workspace fresh_workspace(const std::string& name) {
  Workspace w{scratch().path(name)};
  fs::remove_all(w.dir);
  fs::create_directories(w.images());
  return w;
}

bool running_as_root() {
  return ::geteuid() == 0;
}

}  // namespace

TEST_CASE("every kind of bad input has exactly one named outcome, and nothing is lost") {
  if (!fs::exists(kSmallJpeg) || !fs::exists(kDataDir / "tokenizer/odbatch-unigram-8k.model")) {
    FAIL("the dataset is missing: build it with tools/prepare-data.sh (" << kDataDir.string()
                                                                         << ")");
  }
  const auto cases = bad_inputs();

  // Every record case in one dataset, between good records, in one run.
  const Workspace records = fresh_workspace("bad_records");
  const auto dataset = records.dir / "records.jsonl";
  std::map<std::uint64_t, const BadInput*> bad_on_line;  // line -> case
  std::set<std::uint64_t> good_lines;
  {
    std::ofstream out(dataset, std::ios::binary);
    std::uint64_t line = 0;
    const auto good = [&] {
      out << text_record(static_cast<int>(line)) << '\n';
      good_lines.insert(++line);
    };
    good();
    write_bytes(records.images() / "good.jpg", read_bytes(kSmallJpeg));
    out << image_record("good.jpg") << '\n';
    good_lines.insert(++line);
    for (const auto& bad : cases) {
      if (bad.kind != BadInput::record) continue;
      if (bad.needs_non_root && running_as_root()) {
        MESSAGE("skipped, running as root (which reads any file): " << bad.name);
        continue;
      }
      out << bad.make(records) << '\n';
      bad_on_line[++line] = &bad;
      good();
    }
  }
  const auto config = records.dir / "pipeline.toml";
  write_bytes(config, pipeline_toml(dataset.string(), records));
  const auto ledger = records.dir / "ledger.jsonl";
  const auto run = run_odbatch("run --no-progress --ledger " + shell_quoted(ledger) + " " +
                               shell_quoted(config));
  INFO("odbatch run: " << run.err);
  CHECK(run.status != kTimedOutStatus);
  CHECK(run.status == 0);

  // Each bad line rejected once, with its reason and file:line; each good line emitted once.
  std::map<std::uint64_t, std::vector<json>> rejections_on_line;
  std::multiset<std::uint64_t> emitted;
  std::ifstream in(ledger);
  // The dataset has no blank line, so a record's line is its id + 1.
  for (std::string text; std::getline(in, text);) {
    const auto entry = json::parse(text);
    if (entry.at("kind") == "step")
      for (const auto& id : entry.at("ids")) emitted.insert(id.get<std::uint64_t>() + 1);
    if (entry.at("kind") == "rejected")
      rejections_on_line[entry.at("id").get<std::uint64_t>() + 1].push_back(entry);
  }
  for (const auto& [line, bad] : bad_on_line) {
    CAPTURE(bad->name);
    CAPTURE(line);
    CHECK(emitted.count(line) == 0);
    const auto& rejected = rejections_on_line[line];
    CHECK(rejected.size() == 1);
    if (rejected.empty()) continue;
    CHECK(rejected.front().at("reason") == bad->outcome);
    const std::string detail = rejected.front().at("detail");
    CAPTURE(detail);
    CHECK(detail.starts_with(dataset.string() + ":" + std::to_string(line) + ": "));
    CHECK(detail.find(bad->detail(records)) != std::string::npos);
  }
  for (const auto line : good_lines) {
    CAPTURE(line);
    CHECK(emitted.count(line) == 1);
    CHECK(rejections_on_line.count(line) == 0);
  }
  const auto audit =
      run_odbatch("audit --config " + shell_quoted(config) + " " + shell_quoted(ledger));
  CHECK_MESSAGE(audit.status == 0, audit.out, audit.err);

  // Under on_bad_record = "fail", the first bad record in shard order ends the run, named.
  write_bytes(config, pipeline_toml(dataset.string(), records, "fail"));
  const auto failed = run_odbatch("run --no-progress " + shell_quoted(config));
  CHECK(failed.status == 1);
  CHECK_MESSAGE(failed.err.find("odbatch run: pipeline failed: ") != std::string::npos, failed.err);
  CHECK_MESSAGE(failed.err.find(dataset.string() + ":") != std::string::npos, failed.err);

  // Each dataset case in a run of its own, which never starts.
  for (const auto& bad : cases) {
    if (bad.kind != BadInput::dataset) continue;
    CAPTURE(bad.name);
    if (bad.needs_non_root && running_as_root()) {
      MESSAGE("skipped, running as root (which reads any file): " << bad.name);
      continue;
    }
    const Workspace w = fresh_workspace("bad_dataset");
    const auto toml = w.dir / "pipeline.toml";
    write_bytes(toml, pipeline_toml(bad.make(w), w));
    const auto refused =
        run_odbatch("run --no-progress --ledger " + shell_quoted(w.dir / "ledger.jsonl") + " " +
                    shell_quoted(toml));
    CHECK(refused.status == 2);
    CHECK_MESSAGE(refused.err.starts_with("odbatch run: "), refused.err);
    CHECK_MESSAGE(refused.err.find(bad.detail(w)) != std::string::npos, refused.err);
    CHECK(std::count(refused.err.begin(), refused.err.end(), '\n') == 1);
  }
}
