#include "reader.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <optional>
#include <span>
#include <unordered_map>

#include "odbatch/image/image_crop.hpp"
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
  // Tar samples' members while their records are in the record stages, which may name another.
  std::unordered_map<std::uint64_t, std::vector<TarMember>> staged_members;
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
    std::string_view text, const std::string& where, std::span<const std::string> default_images,
    std::map<std::string, std::string>* other_fields) {
  try {
    return parse_conversation(text, where, default_images, other_fields);
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

// Image `path` of a record, read with its header: a tar sample's member (`members`) or a file
// under the image root. On failure, the record's rejection.
std::optional<LoadedImage> load_image(ReaderState& s, SampleId id, const std::string& where,
                                      const std::vector<TarMember>* members,
                                      const std::string& path,
                                      std::optional<Rejection>& rejection) {
  const auto& config = s.context->config();
  const auto& limits = config.images.file_limits;
  auto fail = [&](const ImageError& e) {
    rejection = rejection_of(id, std::string(to_string(e.kind)),
                             where + ": image " + path + ": " + e.message);
    return std::nullopt;
  };
  auto bytes = members ? member_image(*members, path, limits)
                       : read_image_file(config.source.image_root, path, limits);
  if (!bytes) {
    if (members && bytes.error().kind == ImageErrorKind::missing_file) {
      rejection = rejection_of(id, "missing_member", where + ": " + bytes.error().message);
      return std::nullopt;
    }
    return fail(bytes.error());
  }
  const auto header = s.header_reader.read_header(bytes.value());
  if (!header) return fail(header.error());
  LoadedImage image;
  image.path = path;
  image.width = header.value().width;
  image.height = header.value().height;
  image.bytes = std::make_shared<const std::vector<std::uint8_t>>(std::move(bytes).value());
  return image;
}

// Reads and parses shard position `seq` with its images' headers: the record as record stages
// see it, or (in `start`) the reason it cannot become a sample. A tar sample's members (its
// images can only be those) are put in `members`.
std::optional<RecordWork> read_parsed(ReaderState& s, std::uint64_t seq, SampleStart& start,
                                      std::optional<std::vector<TarMember>>& members) {
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
    return std::nullopt;
  }
  auto& r = std::get<Record>(record);
  RecordWork work;
  work.seq = seq;
  auto& staged = work.record;
  staged.id = id;
  staged.where = r.where();
  staged.source = source_of(resources.mix, id);
  const bool tar_sample = !r.key.empty();
  // A tar sample's image members are its images when its record names none.
  std::vector<std::string> member_images;
  if (tar_sample) {
    for (const auto* member : implicit_images(r.members))
      member_images.push_back(member->extension);
  }
  // Only record stages see the record's other fields.
  auto parsed = parse_record(r.text, staged.where, member_images,
                             resources.stages.record.empty() ? nullptr : &staged.fields);
  if (auto* rejected = std::get_if<RecordRejection>(&parsed)) {
    start.rejection = rejection_of(id, std::string(to_string(rejected->reason)), rejected->message);
    return std::nullopt;
  }
  auto& conversation = std::get<Conversation>(parsed);
  staged.messages = std::move(conversation.messages);
  staged.tools_json = std::move(conversation.tools_json);
  staged.template_kwargs_json = std::move(conversation.template_variables_json);
  for (const auto& path : conversation.images) {
    auto image =
        load_image(s, id, staged.where, tar_sample ? &r.members : nullptr, path, start.rejection);
    if (!image) return std::nullopt;
    staged.images.push_back({path, image->width, image->height});
    work.loaded.push_back(std::move(*image));
  }
  if (tar_sample) members.emplace(std::move(r.members));
  return work;
}

// Turns a record (after its record stages) into its work items: its images sized to their
// visual-token grids, read now if a stage named them, or the reason it cannot become a sample.
void finalize(ReaderState& s, RecordWork& work, const std::vector<TarMember>* members,
              SampleStart& start, std::vector<ImageTask>& images, TextTask& text) {
  auto& record = work.record;
  start.seq = work.seq;
  start.id = record.id;
  const auto location = s.context->resources().index->locate(record.id);
  start.source_file = location.file;
  start.line = location.line;
  const auto& geometry = s.context->config().images.geometry;
  text.seq = work.seq;
  text.id = record.id;
  text.source = record.source;
  text.where = record.where;
  text.template_variables = std::move(record.template_variables);
  for (std::uint32_t i = 0; i < record.images.size(); ++i) {
    const auto& path = record.images[i].path;
    auto loaded = std::find_if(work.loaded.begin(), work.loaded.end(),
                               [&](const LoadedImage& image) { return image.path == path; });
    if (loaded == work.loaded.end()) {
      auto image = load_image(s, record.id, record.where, members, path, start.rejection);
      if (!image) return;
      work.loaded.push_back(std::move(*image));
      loaded = std::prev(work.loaded.end());
    }
    // A stage's crop decides the grid; the stage worker checked it against the header's size,
    // but an image a stage named anew is known only now.
    const auto& crop = record.images[i].crop;
    if (crop)
      if (const auto problem = crop_problem(*crop, loaded->width, loaded->height)) {
        start.rejection = rejection_of(record.id, std::string(to_string(problem->kind)),
                                       record.where + ": image " + path + ": " + problem->message);
        return;
      }
    const auto target = crop ? smart_resize(crop->height, crop->width, geometry)
                             : smart_resize(loaded->height, loaded->width, geometry);
    if (!target) {
      start.rejection =
          rejection_of(record.id, std::string(to_string(target.error().kind)),
                       record.where + ": image " + path + ": " + target.error().message);
      return;
    }
    text.visual_tokens.push_back(target.value().grid.tokens);
    ImageTask image;
    image.seq = work.seq;
    image.id = record.id;
    image.image = i;
    image.path = path;
    image.jpeg = loaded->bytes;
    image.crop = crop;
    images.push_back(std::move(image));
    text.conversation.images.push_back(path);
  }
  text.conversation.messages = std::move(record.messages);
  text.conversation.tools_json = std::move(record.tools_json);
  text.conversation.template_variables_json = std::move(record.template_kwargs_json);
  start.parts = 1 + static_cast<std::uint32_t>(images.size());
}

// Sends the record's announcement to the joiner and queues its work for the pools.
void hand_on(ReaderState& s, reader_actor::stateful_pointer<ReaderState> self, SampleStart start,
             std::vector<ImageTask>& images, TextTask& text) {
  // A record rejected part way (e.g. at its second image) has no work left to do.
  if (!start.rejection) {
    s.text_tasks.push_back(std::move(text));
    for (auto& image : images) s.image_tasks.push_back(std::move(image));
  }
  self->send(s.context->wiring().joiner, std::move(start));
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
        const auto& record_stages = s.context->wiring().record_stages;
        for (int n = 0; n < kRecordsPerTurn && can_read(s); ++n) {
          StageTimer timer(s.context->stats().reader);
          SampleStart start;
          std::vector<ImageTask> images;
          TextTask text;
          std::optional<std::vector<TarMember>> members;
          auto work = read_parsed(s, s.next_seq++, start, members);
          --s.credits;
          s.context->stats().records_read.fetch_add(1, std::memory_order_relaxed);
          if (work && !record_stages.empty()) {
            if (members) s.staged_members.emplace(work->seq, std::move(*members));
            self->send(record_stages.front().dispatcher, std::move(*work));
            continue;
          }
          if (work) finalize(s, *work, members ? &*members : nullptr, start, images, text);
          hand_on(s, self, std::move(start), images, text);
        }
        credits_changed(s);
        dispatch(self);
        keep_reading(self);
      },
      [=](RecordWork& work) {
        auto& s = self->state;
        StageTimer timer(s.context->stats().reader, 0);
        SampleStart start;
        std::vector<ImageTask> images;
        TextTask text;
        std::optional<std::vector<TarMember>> members;
        if (const auto kept = s.staged_members.find(work.seq); kept != s.staged_members.end()) {
          members.emplace(std::move(kept->second));
          s.staged_members.erase(kept);
        }
        if (work.rejection) {
          start.seq = work.seq;
          start.id = work.record.id;
          start.rejection = std::move(work.rejection);
        } else {
          finalize(s, work, members ? &*members : nullptr, start, images, text);
        }
        hand_on(s, self, std::move(start), images, text);
        dispatch(self);
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
