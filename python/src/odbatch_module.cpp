// The Python binding's native part (module odbatch._odbatch): the C++ Pipeline, its batches as
// dicts of numpy arrays that are views of the batch's buffers, and StepInfo. The package
// (python/odbatch/__init__.py) wraps it into an iterator and adds torch tensors.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "odbatch/actors/pipeline.hpp"
#include "odbatch/config/checkpoint_file.hpp"
#include "odbatch/config/pipeline_config.hpp"
#include "odbatch/proto_msgs/checkpoint_codec.hpp"
#include "odbatch/version.hpp"

namespace py = pybind11;

namespace odbatch {
namespace {

using BatchPtr = std::shared_ptr<const Batch>;

// A numpy array over one of the batch's buffers, without a copy: the array holds the batch, so
// the buffer lives as long as any array (or tensor) made from it. Writable: once emitted, a
// batch belongs to the trainer alone, and torch.from_numpy wants writable arrays.
template <typename T>
py::array view(const BatchPtr& batch, std::span<const T> data, std::vector<py::ssize_t> shape) {
  py::capsule owner(new BatchPtr(batch), [](void* held) { delete static_cast<BatchPtr*>(held); });
  return py::array_t<T>(std::move(shape), const_cast<T*>(data.data()), owner);
}

py::ssize_t length(std::size_t n) {
  return static_cast<py::ssize_t>(n);
}

py::bytes checkpoint_bytes(const Checkpoint& checkpoint) {
  const auto encoded = encode_checkpoint(checkpoint);
  return py::bytes(reinterpret_cast<const char*>(encoded.data()), encoded.size());
}

Checkpoint checkpoint_of(const py::bytes& bytes) {
  const std::string_view view = bytes;
  return decode_checkpoint(std::as_bytes(std::span(view.data(), view.size())), "checkpoint bytes");
}

// uint8: the bytes as they are, every image's HWC pixels one after another. float32: the
// (patches, values per patch) matrix. bfloat16, which numpy lacks: that matrix as uint16 bits,
// which the package views as torch.bfloat16 (tensors="torch").
py::array pixel_values(const BatchPtr& batch) {
  const auto bytes = batch->pixel_values();
  const auto [rows, columns] = batch->pixel_values_shape();
  const std::vector<py::ssize_t> shape{length(rows), length(columns)};
  switch (batch->pixel_dtype()) {
    case PixelDtype::float32:
      return view(batch, std::span(reinterpret_cast<const float*>(bytes.data()), bytes.size() / 4),
                  shape);
    case PixelDtype::bfloat16:
      return view(batch,
                  std::span(reinterpret_cast<const std::uint16_t*>(bytes.data()), bytes.size() / 2),
                  shape);
    case PixelDtype::uint8:
      break;
  }
  return view(batch, bytes, {length(bytes.size())});
}

py::dict batch_dict(const BatchPtr& batch) {
  py::dict out;
  const auto rows = length(batch->rows()), seq_len = length(batch->seq_len());
  if (batch->layout() == BatchLayout::padded) {
    out["input_ids"] = view(batch, batch->input_ids(), {rows, seq_len});
    out["labels"] = view(batch, batch->labels(), {rows, seq_len});
    out["attention_mask"] = view(batch, batch->attention_mask(), {rows, seq_len});
  } else {
    out["input_ids"] = view(batch, batch->input_ids(), {seq_len});
    out["labels"] = view(batch, batch->labels(), {seq_len});
    out["cu_seqlens"] = view(batch, batch->cu_seqlens(), {length(batch->cu_seqlens().size())});
    out["position_ids"] = view(batch, batch->position_ids(), {seq_len});
  }
  out["pixel_values"] = pixel_values(batch);
  out["image_grid_thw"] =
      view(batch, batch->image_grid_thw(), {length(batch->image_grid_thw().size() / 3), 3});
  out["step_info"] = batch->step_info();
  return out;
}

// Iterates the pipeline's current epoch in C++ with a busy step of `step_seconds` per batch, as
// a trainer written in C++ would: the baseline the Python iterator's overhead is measured on.
py::tuple iterate_in_cpp(Pipeline& pipeline, double step_seconds) {
  std::uint64_t batches = 0;
  const auto start = std::chrono::steady_clock::now();
  {
    py::gil_scoped_release release;
    const auto step = std::chrono::duration<double>(step_seconds);
    while (const auto batch = pipeline.next_batch()) {
      const auto until = std::chrono::steady_clock::now() + step;
      while (std::chrono::steady_clock::now() < until) {
      }
      ++batches;
    }
  }
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return py::make_tuple(batches, elapsed.count());
}

}  // namespace
}  // namespace odbatch

PYBIND11_MODULE(_odbatch, m) {
  using namespace odbatch;
  m.doc() = "odbatch's native module: use the odbatch package instead.";

  py::class_<StepInfo>(m, "StepInfo", "What the trainer should know about a step.")
      .def_readonly("epoch", &StepInfo::epoch)
      .def_readonly("step", &StepInfo::step, "step within the epoch: equal on every rank")
      .def_readonly("round", &StepInfo::round, "alignment round that planned the step")
      .def_readonly("idle", &StepInfo::idle, "a dummy step: run it, its loss_scale is 0")
      .def_readonly("over_budget", &StepInfo::over_budget)
      .def_readonly("loss_scale", &StepInfo::loss_scale,
                    "multiply the rank's mean loss by it before backward")
      .def_readonly("samples", &StepInfo::samples, "this rank's samples in the step")
      .def_readonly("tokens", &StepInfo::tokens)
      .def_readonly("labels", &StepInfo::labels, "this rank's supervised targets")
      .def_property_readonly(
          "samples_this_step", [](const StepInfo& info) { return info.global.samples; },
          "samples of the step over all ranks")
      .def_property_readonly("global_tokens",
                             [](const StepInfo& info) { return info.global.tokens; })
      .def_property_readonly("global_labels",
                             [](const StepInfo& info) { return info.global.labels; })
      .def_readonly("global_samples_consumed", &StepInfo::global_samples_consumed)
      .def_readonly("global_tokens_consumed", &StepInfo::global_tokens_consumed)
      .def_property_readonly("sample_ids",
                             [](const StepInfo& info) {
                               return py::array_t<std::uint64_t>(length(info.sample_ids.size()),
                                                                 info.sample_ids.data());
                             })
      .def_property_readonly("source_files",
                             [](const StepInfo& info) {
                               return py::array_t<std::uint32_t>(length(info.source_files.size()),
                                                                 info.source_files.data());
                             })
      .def("__repr__", [](const StepInfo& info) {
        return "StepInfo(epoch=" + std::to_string(info.epoch) +
               ", step=" + std::to_string(info.step) + ", idle=" + (info.idle ? "True" : "False") +
               ", samples=" + std::to_string(info.samples) +
               ", samples_this_step=" + std::to_string(info.global.samples) +
               ", loss_scale=" + std::to_string(info.loss_scale) + ")";
      });

  py::class_<Pipeline>(m, "Pipeline")
      .def(py::init([](const std::string& config, std::optional<std::string> ledger,
                       std::optional<py::bytes> resume_from) {
             PipelineOptions options;
             if (ledger) options.ledger = *ledger;
             auto parsed = PipelineConfig::from_toml_file(config);
             std::optional<Checkpoint> checkpoint;
             if (resume_from) checkpoint = checkpoint_of(*resume_from);
             py::gil_scoped_release release;
             if (checkpoint)
               return Pipeline::resume(std::move(parsed), DistEnv::from_env(), *checkpoint,
                                       std::move(options));
             return std::make_unique<Pipeline>(std::move(parsed), DistEnv::from_env(),
                                               std::move(options));
           }),
           py::arg("config"), py::arg("ledger") = std::nullopt,
           py::arg("resume_from") = std::nullopt)
      .def("state", [](const Pipeline& pipeline) { return checkpoint_bytes(pipeline.state()); })
      .def("start_epoch", &Pipeline::start_epoch, py::arg("epoch"),
           py::call_guard<py::gil_scoped_release>())
      .def("next_batch",
           [](Pipeline& pipeline) -> py::object {
             BatchPtr batch;
             {
               py::gil_scoped_release release;
               batch = pipeline.next_batch();
             }
             if (!batch) return py::none();
             return batch_dict(batch);
           })
      .def("depart", &Pipeline::depart, py::call_guard<py::gil_scoped_release>())
      .def("abort", &Pipeline::abort, py::arg("reason"), py::call_guard<py::gil_scoped_release>())
      .def("stats_json", &Pipeline::stats_json)
      .def_property_readonly("metrics_port", &Pipeline::metrics_port)
      .def_property_readonly("vocab_size", &Pipeline::vocab_size)
      .def_property_readonly(
          "pixel_dtype",
          [](const Pipeline& pipeline) {
            return std::string(to_string(pipeline.config().images.pixel_values.dtype));
          },
          "what batches' pixel_values hold: uint8, float32 or bfloat16 ([images] pixel_values)")
      .def_property_readonly("dataset_records", &Pipeline::dataset_records)
      .def_property_readonly("shard_records", &Pipeline::shard_records);

  m.def(
      "join_states",
      [](const std::vector<py::bytes>& parts) {
        std::vector<Checkpoint> decoded;
        for (const auto& part : parts) decoded.push_back(checkpoint_of(part));
        return checkpoint_bytes(join_checkpoint_parts(std::move(decoded)));
      },
      py::arg("parts"), "Joins every rank's state() into one checkpoint.");
  m.def(
      "save_state",
      [](const std::string& file, const py::bytes& part, double timeout_seconds) {
        const auto decoded = checkpoint_of(part);
        py::gil_scoped_release release;
        save_checkpoint(file, decoded,
                        std::chrono::milliseconds(static_cast<long long>(timeout_seconds * 1000)));
      },
      py::arg("file"), py::arg("part"), py::arg("timeout_seconds") = 600.0,
      "Every rank calls it with its state(); rank 0 writes the joined checkpoint to `file`.");
  m.def(
      "load_state",
      [](const std::string& file) { return checkpoint_bytes(read_checkpoint_file(file)); },
      py::arg("file"));
  py::register_exception<CheckpointError>(m, "CheckpointError", PyExc_ValueError);
  m.def("iterate_in_cpp", &iterate_in_cpp, py::arg("pipeline"), py::arg("step_seconds"),
        "Runs the current epoch in C++ with a busy step per batch; returns (batches, seconds).");
  m.attr("__version__") = std::string(kHeaderVersion);
}
