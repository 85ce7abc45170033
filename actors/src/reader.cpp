#include "reader.hpp"

#include <chrono>
#include <deque>
#include <optional>
#include <span>

#include "odbatch/image/image_decoder.hpp"
#include "odbatch/image/image_file.hpp"
#include "odbatch/source/conversation_parser.hpp"
#include "odbatch/source/tar_sample.hpp"

namespace odbatch::actors {

struct ReaderState {
  EpochContextPtr context;
  std::uint64_t next_seq = 0;
  std::uint32_t capacity = 0;  // credits when nothing is in flight
  std::uint32_t credits = 0;
  // Since when the reader has had records left but no credit: it waits on the joiner.
  std::optional<std::chrono::steady_clock::time_point> starved_since;
  bool reading = false;
  std::deque<TextTask> text_tasks;
  std::deque<ImageTask> image_tasks;
  std::vector<tokenizer_worker_actor> idle_tokenizers;
  std::vector<image_decoder_worker_actor> idle_decoders;
  ImageDecoder header_reader;  // JPEG, PNG or WebP, told by the bytes
};

namespace {

// Records read per message to itself, so the reader never holds its scheduler thread for long.
constexpr int kRecordsPerTurn = 8;

Rejection rejection_of(SampleId id, std::string reason, std::string detail) {
  return Rejection{id, std::move(reason), std::move(detail)};
}

// The parser rejects bad content rather than throwing; should anything escape it all the same,
// it rejects this record too: a record's content must never end the epoch, which would abort
// every rank.
std::variant<Conversation, RecordRejection> parse_record(
    std::string_view text, const std::string& where, std::span<const std::string> default_images) {
  try {
    return parse_conversation(text, where, default_images);
  } catch (const std::exception& e) {
    return RecordRejection{RecordRejectReason::malformed_json,
                           where + ": cannot parse: " + e.what()};
  }
}

// The bytes of the tar sample's member that a record names as an image (tar_sample.hpp's
// find_member). Copied: a record may name one member twice.
ImageResult<std::vector<std::uint8_t>> member_image(const std::vector<TarMember>& members,
                                                    const std::string& name,
                                                    const ImageFileLimits& limits) {
  const auto* member = find_member(members, name);
  if (member == nullptr) {
    std::string names;
    for (const auto& m : members) names += (names.empty() ? "" : ", ") + m.path;
    return ImageError{ImageErrorKind::missing_file,
                      "image " + name + ": the sample has no such member (its other members: " +
                          (names.empty() ? "none" : names) + ")"};
  }
  if (member->bytes.size() > limits.max_file_bytes) {
    return ImageError{ImageErrorKind::pixel_bomb,
                      member->path + ": " + std::to_string(member->bytes.size()) +
                          " bytes, over the limit of " + std::to_string(limits.max_file_bytes)};
  }
  return member->bytes;
}

// Reads shard position `seq` into its work items, or the reason it cannot become a sample.
void read_record(ReaderState& s, std::uint64_t seq, SampleStart& start,
                 std::vector<ImageTask>& images, TextTask& text) {
  const auto& resources = s.context->resources();
  const SampleId id = s.context->shard()[seq];
  start.seq = seq;
  start.id = id;
  const auto location = resources.index->locate(id);
  start.source_file = location.file;
  start.line = location.line;

  auto record = resources.records->read(id);
  if (auto* rejected = std::get_if<RecordRejection>(&record)) {
    start.rejection = rejection_of(id, std::string(to_string(rejected->reason)), rejected->message);
    return;
  }
  const auto& r = std::get<Record>(record);
  const std::string where = r.where();
  const bool tar_sample = !r.key.empty();
  // A tar sample's image members are its images when its record names none.
  std::vector<std::string> member_images;
  if (tar_sample) {
    for (const auto* member : implicit_images(r.members))
      member_images.push_back(member->extension);
  }
  auto parsed = parse_record(r.text, where, member_images);
  if (auto* rejected = std::get_if<RecordRejection>(&parsed)) {
    start.rejection = rejection_of(id, std::string(to_string(rejected->reason)), rejected->message);
    return;
  }
  text.seq = seq;
  text.id = id;
  text.where = where;
  text.conversation = std::move(std::get<Conversation>(parsed));
  const auto& image_config = resources.config.images;
  for (std::uint32_t i = 0; i < text.conversation.images.size(); ++i) {
    const auto& path = text.conversation.images[i];
    auto fail = [&](const ImageError& e) {
      start.rejection = rejection_of(id, std::string(to_string(e.kind)),
                                     where + ": image " + path + ": " + e.message);
    };
    auto bytes = tar_sample ? member_image(r.members, path, image_config.file_limits)
                            : read_image_file(resources.config.source.image_root, path,
                                              image_config.file_limits);
    if (!bytes) {
      if (tar_sample && bytes.error().kind == ImageErrorKind::missing_file) {
        start.rejection = rejection_of(id, "missing_member", where + ": " + bytes.error().message);
        return;
      }
      return fail(bytes.error());
    }
    const auto header = s.header_reader.read_header(bytes.value());
    if (!header) return fail(header.error());
    const auto target =
        smart_resize(header.value().height, header.value().width, image_config.geometry);
    if (!target) return fail(target.error());
    text.visual_tokens.push_back(target.value().grid.tokens);
    ImageTask image;
    image.seq = seq;
    image.id = id;
    image.image = i;
    image.path = path;
    image.jpeg = std::make_shared<const std::vector<std::uint8_t>>(std::move(bytes).value());
    images.push_back(std::move(image));
  }
  start.parts = 1 + static_cast<std::uint32_t>(images.size());
}

void dispatch(reader_actor::stateful_pointer<ReaderState> self) {
  auto& s = self->state;
  while (!s.text_tasks.empty() && !s.idle_tokenizers.empty()) {
    self->send(s.idle_tokenizers.back(), std::move(s.text_tasks.front()));
    s.idle_tokenizers.pop_back();
    s.text_tasks.pop_front();
  }
  while (!s.image_tasks.empty() && !s.idle_decoders.empty()) {
    self->send(s.idle_decoders.back(), std::move(s.image_tasks.front()));
    s.idle_decoders.pop_back();
    s.image_tasks.pop_front();
  }
}

// Publishes the credits in use as the depth of the reader-to-joiner edge, and accounts the time
// spent without credit as the reader's blocked time.
void credits_changed(ReaderState& s) {
  auto& stats = s.context->stats();
  stats.reader_in_flight.depth.store(s.capacity - s.credits, std::memory_order_relaxed);
  const bool starved = s.credits == 0 && s.next_seq < s.context->shard().size();
  if (starved && !s.starved_since) {
    s.starved_since = std::chrono::steady_clock::now();
  } else if (!starved && s.starved_since) {
    stats.reader.blocked_ns.fetch_add(
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                       std::chrono::steady_clock::now() - *s.starved_since)
                                       .count()),
        std::memory_order_relaxed);
    s.starved_since.reset();
  }
}

bool can_read(const ReaderState& s) {
  return s.credits > 0 && s.next_seq < s.context->shard().size() && !s.context->failed();
}

void keep_reading(reader_actor::stateful_pointer<ReaderState> self) {
  auto& s = self->state;
  if (!s.reading && can_read(s)) {
    s.reading = true;
    self->send(caf::actor_cast<reader_actor>(self), read_atom::value);
  }
}

}  // namespace

reader_actor::behavior_type reader_behavior(reader_actor::stateful_pointer<ReaderState> self,
                                            EpochContextPtr context) {
  report_exceptions_to(self, context, "reader");
  self->state.context = context;
  self->state.capacity =
      context->config().flow.reader_capacity + reader_lookahead(context->config());
  self->state.credits = self->state.capacity;
  context->stats().reader_in_flight.capacity.store(self->state.capacity, std::memory_order_relaxed);
  credits_changed(self->state);
  self->state.header_reader = ImageDecoder(context->config().images.decoder_limits);
  return {
      [=](read_atom) {
        auto& s = self->state;
        s.reading = false;
        const auto& joiner = s.context->wiring().joiner;
        for (int n = 0; n < kRecordsPerTurn && can_read(s); ++n) {
          StageTimer timer(s.context->stats().reader);
          SampleStart start;
          std::vector<ImageTask> images;
          TextTask text;
          read_record(s, s.next_seq++, start, images, text);
          --s.credits;
          s.context->stats().records_read.fetch_add(1, std::memory_order_relaxed);
          // A record rejected part way (e.g. at its second image) has no work left to do.
          if (!start.rejection) {
            s.text_tasks.push_back(std::move(text));
            for (auto& image : images) s.image_tasks.push_back(std::move(image));
          }
          self->send(joiner, std::move(start));
        }
        credits_changed(s);
        dispatch(self);
        keep_reading(self);
      },
      [=](text_demand_atom, const tokenizer_worker_actor& worker) {
        self->state.idle_tokenizers.push_back(worker);
        dispatch(self);
        keep_reading(self);
      },
      [=](image_demand_atom, const image_decoder_worker_actor& worker) {
        self->state.idle_decoders.push_back(worker);
        dispatch(self);
        keep_reading(self);
      },
      [=](credit_atom, std::uint32_t returned) {
        self->state.credits += returned;
        credits_changed(self->state);
        keep_reading(self);
      },
  };
}

reader_actor spawn_reader(caf::actor_system& system, EpochContextPtr context) {
  return system.spawn(reader_behavior, std::move(context));
}

}  // namespace odbatch::actors
