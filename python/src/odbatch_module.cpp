// The Python binding's native part (module odbatch._odbatch): the C++ Pipeline, its batches as
// dicts of numpy arrays that are views of the batch's buffers, and StepInfo. The package
// (python/odbatch/__init__.py) wraps it into an iterator and adds torch tensors.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>

#include "batch_arrays.hpp"
#include "odbatch/actors/pipeline.hpp"
#include "odbatch/config/batching_settings.hpp"
#include "odbatch/config/checkpoint_file.hpp"
#include "odbatch/config/config_file_error.hpp"
#include "odbatch/config/pipeline_config.hpp"
#include "odbatch/core/config.hpp"
#include "odbatch/dist/collective.hpp"
#include "odbatch/dist/round_coordinator.hpp"
#include "odbatch/log/logger.hpp"
#include "odbatch/proto_msgs/checkpoint_codec.hpp"
#include "odbatch/source/dataset_error.hpp"
#include "odbatch/store/store.hpp"
#include "odbatch/version.hpp"
#include "python_stages.hpp"

namespace py = pybind11;

namespace odbatch {
namespace {

using python::BatchArrays;
using python::BatchConverter;
using python::pinning_available;
using python::TensorDtypes;

// The package's exception types (odbatch.ConfigError, ...), made once at import.
struct ErrorTypes {
  py::handle config, data, peer, checkpoint;
};
ErrorTypes error_types;

py::handle make_error(py::module_& m, const char* name, PyObject* base, const char* doc) {
  const std::string qualified = std::string("odbatch.") + name;
  py::handle type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, base, nullptr);
  if (!type) throw py::error_already_set();
  m.add_object(name, type);
  return type;
}

void raise(py::handle type, const char* message, const py::dict& attributes) {
  py::object error = type(message);
  for (const auto& [name, value] : attributes) py::setattr(error, name, value);
  PyErr_SetObject(type.ptr(), error.ptr());
}

py::object optional_string(const std::string& text) {
  return text.empty() ? py::object(py::none()) : py::object(py::str(text));
}

// "file", "file:line" or "file:line:column" (ConfigFileError::location) into its parts.
py::dict config_location(const std::string& location, const std::string& key) {
  std::string file = location;
  py::object line = py::none(), column = py::none();
  std::vector<long> numbers;
  while (numbers.size() < 2) {
    const auto colon = file.rfind(':');
    if (colon == std::string::npos || colon + 1 == file.size() ||
        file.find_first_not_of("0123456789", colon + 1) != std::string::npos)
      break;
    numbers.insert(numbers.begin(), std::stol(file.substr(colon + 1)));
    file.resize(colon);
  }
  if (!numbers.empty()) line = py::int_(numbers[0]);
  if (numbers.size() > 1) column = py::int_(numbers[1]);
  py::dict attributes;
  attributes["file"] = optional_string(file);
  attributes["line"] = line;
  attributes["column"] = column;
  attributes["key"] = optional_string(key);
  return attributes;
}

// The rank a peer failure's message blames: the first rank it names after the failing rank's own
// ("rank 0, epoch 3: coordinator: ... rank 1 is dead ..."); none when it names no other.
std::optional<long> failed_peer(const std::string& message) {
  static const std::regex rank_pattern("rank ([0-9]+)");
  std::optional<long> own;
  for (auto it = std::sregex_iterator(message.begin(), message.end(), rank_pattern);
       it != std::sregex_iterator(); ++it) {
    const long rank = std::stol((*it)[1].str());
    if (!own) {
      own = rank;
    } else if (rank != *own) {
      return rank;
    }
  }
  return std::nullopt;
}

void register_errors(py::module_& m) {
  error_types.config = make_error(
      m, "ConfigError", PyExc_ValueError,
      "A pipeline file or setting that cannot be used. file, line, column and key say where, "
      "where known (else None).");
  error_types.data = make_error(
      m, "DataError", PyExc_RuntimeError,
      "A dataset that cannot be used as given: a path that names no file, an unreadable or "
      "changed file, a record rejected under on_bad_record = \"fail\".");
  error_types.peer = make_error(
      m, "PeerFailure", PyExc_RuntimeError,
      "The ranks could not go on together: a rank failed, aborted, left or was not reached in "
      "time. rank and round name the rank and the alignment round where known (else None).");
  error_types.checkpoint = make_error(
      m, "CheckpointError", PyExc_ValueError,
      "A checkpoint that cannot be used: corrupt, incomplete, or made for another dataset or "
      "configuration.");
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const ConfigFileError& e) {
      raise(error_types.config, e.what(), config_location(e.location(), e.key()));
    } catch (const ConfigError& e) {
      raise(error_types.config, e.what(), config_location("", e.field()));
    } catch (const SettingError& e) {
      raise(error_types.config, e.what(), config_location("", ""));
    } catch (const DatasetError& e) {
      raise(error_types.data, e.what(), py::dict());
    } catch (const CheckpointError& e) {
      raise(error_types.checkpoint, e.what(), py::dict());
    } catch (const PipelineFailure& e) {
      switch (e.cause()) {
        case PipelineFailure::Cause::data:
          return raise(error_types.data, e.what(), py::dict());
        case PipelineFailure::Cause::peer: {
          py::dict attributes;
          const auto peer = failed_peer(e.what());
          attributes["rank"] = peer ? py::object(py::int_(*peer)) : py::object(py::none());
          attributes["round"] =
              e.round() ? py::object(py::int_(*e.round())) : py::object(py::none());
          return raise(error_types.peer, e.what(), attributes);
        }
        case PipelineFailure::Cause::aborted:
        case PipelineFailure::Cause::stalled:
        case PipelineFailure::Cause::internal:
          break;
      }
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const CollectiveError& e) {
      py::dict attributes;
      attributes["rank"] = py::none();
      attributes["round"] = py::none();
      raise(error_types.peer, e.what(), attributes);
    } catch (const RoundError& e) {
      py::dict attributes;
      attributes["rank"] = py::none();
      attributes["round"] = py::none();
      raise(error_types.peer, e.what(), attributes);
    } catch (const StoreError& e) {
      py::dict attributes;
      attributes["rank"] = py::none();
      attributes["round"] = py::none();
      raise(error_types.peer, e.what(), attributes);
    }
  });
}

using BatchPtr = std::shared_ptr<const Batch>;

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

// A Python callable run from a loader thread: it takes the GIL, and is let go with the GIL held.
class PythonCallback {
 public:
  explicit PythonCallback(py::object callable) : callable_(std::move(callable)) {}
  ~PythonCallback() {
    if (Py_IsInitialized() == 0 || _Py_IsFinalizing()) {
      callable_.release();  // the interpreter is gone or going: nothing to hand back
      return;
    }
    py::gil_scoped_acquire gil;
    callable_ = py::object();
  }
  PythonCallback(const PythonCallback&) = delete;
  PythonCallback& operator=(const PythonCallback&) = delete;

  void operator()(const std::string& reason) const {
    if (Py_IsInitialized() == 0 || _Py_IsFinalizing()) return;
    py::gil_scoped_acquire gil;
    try {
      callable_(reason);
    } catch (py::error_already_set& e) {
      // Nobody could catch it on a loader thread: reported like an exception in __del__.
      e.discard_as_unraisable("odbatch on_abort hook");
    }
  }

 private:
  py::object callable_;
};

// The C++ Pipeline with the Python side's needs: an explicit close() that waits for the loader
// threads without the GIL (they may be waiting for it, in the abort hook), and a clear error
// when used after it.
class NativePipeline {
 public:
  NativePipeline(const PipelineConfig& config, std::optional<std::string> ledger,
                 std::optional<py::bytes> resume_from, py::object on_abort, TensorDtypes dtypes,
                 bool pin, const py::dict& stages)
      : converter_(dtypes, pin) {
    PipelineOptions options;
    options.stages = python::python_stages(config, stages);
    if (ledger) options.ledger = *ledger;
    if (!on_abort.is_none()) {
      auto hook = std::make_shared<PythonCallback>(std::move(on_abort));
      options.on_abort = [hook](const std::string& reason) { (*hook)(reason); };
    }
    std::optional<Checkpoint> checkpoint;
    if (resume_from) checkpoint = checkpoint_of(*resume_from);
    py::gil_scoped_release release;
    if (checkpoint) {
      pipeline_ = Pipeline::resume(config, DistEnv::from_env(), *checkpoint, std::move(options));
    } else {
      pipeline_ = std::make_unique<Pipeline>(config, DistEnv::from_env(), std::move(options));
    }
  }
  ~NativePipeline() { close(); }
  NativePipeline(const NativePipeline&) = delete;
  NativePipeline& operator=(const NativePipeline&) = delete;

  Pipeline& get() const {
    if (!pipeline_) throw std::logic_error("the pipeline is closed");
    return *pipeline_;
  }
  bool closed() const { return !pipeline_; }

  void close() {
    if (!pipeline_) return;
    std::unique_ptr<Pipeline> closing = std::move(pipeline_);
    py::gil_scoped_release release;
    closing.reset();
  }

  // (dict of arrays, StepInfo), or None at the end of the epoch.
  py::object next_batch() {
    auto& pipeline = get();
    std::optional<BatchArrays> arrays;
    {
      py::gil_scoped_release release;
      if (auto batch = pipeline.next_batch()) arrays = converter_.convert(std::move(batch));
    }
    if (!arrays) return py::none();
    return py::make_tuple(arrays->to_dict(), py::cast(arrays->take_step_info()));
  }

  bool pinned() const { return converter_.pinned(); }

 private:
  BatchConverter converter_;
  std::unique_ptr<Pipeline> pipeline_;
};

// Iterates the pipeline's current epoch in C++ with a busy step of `step_seconds` per batch, as
// a trainer written in C++ would: the baseline the Python iterator's overhead is measured on.
py::tuple iterate_in_cpp(NativePipeline& native, double step_seconds) {
  auto& pipeline = native.get();
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
      .def(
          "to_dict",
          [](const StepInfo& info) {
            py::dict out;
            out["epoch"] = info.epoch;
            out["step"] = info.step;
            out["round"] = info.round;
            out["idle"] = info.idle;
            out["over_budget"] = info.over_budget;
            out["loss_scale"] = info.loss_scale;
            out["samples"] = info.samples;
            out["tokens"] = info.tokens;
            out["labels"] = info.labels;
            out["samples_this_step"] = info.global.samples;
            out["global_tokens"] = info.global.tokens;
            out["global_labels"] = info.global.labels;
            out["global_samples_consumed"] = info.global_samples_consumed;
            out["global_tokens_consumed"] = info.global_tokens_consumed;
            out["sample_ids"] = py::cast(info.sample_ids);
            out["source_files"] = py::cast(info.source_files);
            return out;
          },
          "every field as plain Python values (lists for sample_ids and source_files): "
          "json.dumps(info.to_dict()) works")
      .def("__repr__", [](const StepInfo& info) {
        return "StepInfo(epoch=" + std::to_string(info.epoch) +
               ", step=" + std::to_string(info.step) + ", idle=" + (info.idle ? "True" : "False") +
               ", samples=" + std::to_string(info.samples) +
               ", samples_this_step=" + std::to_string(info.global.samples) +
               ", loss_scale=" + std::to_string(info.loss_scale) + ")";
      });

  py::class_<PipelineConfig>(m, "Config", "A pipeline file, read and checked.")
      .def(py::init([](const std::string& file) { return PipelineConfig::from_toml_file(file); }),
           py::arg("file"))
      .def_property_readonly(
          "pixel_dtype",
          [](const PipelineConfig& config) {
            return std::string(to_string(config.images.pixel_values.dtype));
          },
          "what batches' pixel_values hold: uint8, float32 or bfloat16 ([images] pixel_values)")
      .def_property_readonly("layout", [](const PipelineConfig& config) {
        return std::string(to_string(config.flow.layout));
      });

  m.def("pinning_available", &pinning_available,
        "Whether pinned batches can be made here (a CUDA build and a CUDA device).");

  m.def(
      "set_log_level",
      [](const std::string& name) {
        const auto level = parse_log_level(name);
        if (!level)
          throw py::value_error("log level " + name +
                                ": expected trace, debug, info, warn, error or off");
        set_log_level(*level);
      },
      py::arg("level"),
      "odbatch's diagnostics on stderr from this level up (unset: ODBATCH_LOG_LEVEL, else warn).");
  m.def(
      "log_level", [] { return std::string(to_string(log_level())); },
      "The level set_log_level() or ODBATCH_LOG_LEVEL chose.");

  py::class_<NativePipeline>(m, "Pipeline")
      .def(py::init([](const PipelineConfig& config, std::optional<std::string> ledger,
                       std::optional<py::bytes> resume_from, py::object on_abort,
                       const std::map<std::string, std::string>& dtypes, bool pin_memory,
                       const py::dict& stages) {
             return std::make_unique<NativePipeline>(
                 config, std::move(ledger), std::move(resume_from), std::move(on_abort),
                 TensorDtypes::from(dtypes), pin_memory, stages);
           }),
           py::arg("config"), py::arg("ledger") = std::nullopt,
           py::arg("resume_from") = std::nullopt, py::arg("on_abort") = py::none(),
           py::arg("dtypes") = std::map<std::string, std::string>{}, py::arg("pin_memory") = false,
           py::arg("stages") = py::dict())
      .def("state",
           [](const NativePipeline& native) { return checkpoint_bytes(native.get().state()); })
      .def(
          "start_epoch",
          [](NativePipeline& native, std::uint64_t epoch) {
            auto& pipeline = native.get();
            py::gil_scoped_release release;
            pipeline.start_epoch(epoch);
          },
          py::arg("epoch"))
      .def("next_batch", &NativePipeline::next_batch)
      .def("depart",
           [](NativePipeline& native) {
             auto& pipeline = native.get();
             py::gil_scoped_release release;
             pipeline.depart();
           })
      .def(
          "abort",
          [](NativePipeline& native, const std::string& reason) {
            auto& pipeline = native.get();
            py::gil_scoped_release release;
            pipeline.abort(reason);
          },
          py::arg("reason"))
      .def("close", &NativePipeline::close)
      .def_property_readonly("closed", &NativePipeline::closed)
      .def_property_readonly("pinned", &NativePipeline::pinned)
      .def("stats_json", [](const NativePipeline& native) { return native.get().stats_json(); })
      .def_property_readonly(
          "metrics_port", [](const NativePipeline& native) { return native.get().metrics_port(); })
      .def_property_readonly("vocab_size",
                             [](const NativePipeline& native) { return native.get().vocab_size(); })
      .def_property_readonly(
          "epoch_steps", [](const NativePipeline& native) { return native.get().epoch_steps(); },
          "the current epoch's steps once its last round is planned, else None")
      .def_property_readonly("rank",
                             [](const NativePipeline& native) { return native.get().rank(); })
      .def_property_readonly("world_size",
                             [](const NativePipeline& native) { return native.get().world_size(); })
      .def_property_readonly(
          "dataset_records",
          [](const NativePipeline& native) { return native.get().dataset_records(); })
      .def_property_readonly("shard_records", [](const NativePipeline& native) {
        return native.get().shard_records();
      });

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
      "checkpoint_summary",
      [](const py::bytes& bytes) {
        const auto checkpoint = checkpoint_of(bytes);
        py::dict summary;
        summary["epoch"] = checkpoint.epoch;
        summary["steps_taken"] = checkpoint.steps_taken;
        summary["world_size"] = checkpoint.world_size;
        py::list ranks;
        for (const auto& part : checkpoint.ranks) ranks.append(part.rank);
        summary["ranks"] = ranks;
        return summary;
      },
      py::arg("checkpoint"),
      "A checkpoint's epoch, steps taken, world size and the ranks it holds.");
  m.def(
      "load_state",
      [](const std::string& file) { return checkpoint_bytes(read_checkpoint_file(file)); },
      py::arg("file"));
  register_errors(m);
  python::register_reject(m);
  m.def("iterate_in_cpp", &iterate_in_cpp, py::arg("pipeline"), py::arg("step_seconds"),
        "Runs the current epoch in C++ with a busy step per batch; returns (batches, seconds).");
  m.attr("__version__") = std::string(kHeaderVersion);
}
