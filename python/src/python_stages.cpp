#include "python_stages.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <string>

#include "odbatch/core/config.hpp"
#include "odbatch/core/role_name.hpp"

namespace py = pybind11;

namespace odbatch::python {
namespace {

py::handle reject_type;

// A Python object that may outlive the interpreter's readiness: dropped with the GIL, or
// abandoned when the interpreter is going.
class PythonObject {
 public:
  explicit PythonObject(py::object object) : object_(std::move(object)) {}
  ~PythonObject() {
    if (Py_IsInitialized() == 0 || _Py_IsFinalizing()) {
      object_.release();
      return;
    }
    py::gil_scoped_acquire gil;
    object_ = py::object();
  }
  PythonObject(const PythonObject&) = delete;
  PythonObject& operator=(const PythonObject&) = delete;
  const py::object& get() const { return object_; }

 private:
  py::object object_;
};

Role role_of(const std::string& name) {
  if (const auto role = role_named(name)) return *role;
  throw std::invalid_argument("role \"" + name + "\": expected system, user, assistant or tool");
}

// Calls the stage's callable on `value`; a Reject becomes the stage's verdict, any other Python
// exception a C++ one with its message (the sample's rejection as "<stage>:exception").
template <class Apply>
StageVerdict call(const py::object& callable, py::object value, Apply&& apply) {
  try {
    py::object result = callable(std::move(value));
    if (!py::isinstance<py::dict>(result))
      throw std::invalid_argument("the stage returned " +
                                  std::string(py::str(result.get_type().attr("__name__"))) +
                                  ", not the dict it was given (or raise odbatch.Reject)");
    apply(result.cast<py::dict>());
    return keep();
  } catch (py::error_already_set& e) {
    if (e.matches(reject_type)) {
      const py::tuple args = e.value().attr("args");
      StageReject verdict;
      verdict.reason = args.size() > 0 ? std::string(py::str(args[0])) : "";
      verdict.detail = args.size() > 1 ? std::string(py::str(args[1])) : "";
      return verdict;
    }
    throw std::runtime_error(e.what());
  }
}

class PythonRecordStage final : public RecordStage {
 public:
  explicit PythonRecordStage(std::shared_ptr<const PythonObject> callable)
      : callable_(std::move(callable)) {}

  StageVerdict process(StageRecord& record, StageContext& context) override {
    py::gil_scoped_acquire gil;
    py::dict value;
    value["id"] = record.id;
    value["where"] = record.where;
    value["source"] = record.source;
    value["seed"] = context.random()();
    // Each message as the record has it: role, content and its other keys (tool_calls, ...).
    const auto loads = py::module_::import("json").attr("loads");
    py::list messages;
    for (const auto& message : record.messages) {
      py::dict m;
      m["role"] = role_name(message.role);
      m["content"] = message.content;
      if (!message.fields_json.empty())
        for (const auto& [key, field] : loads(message.fields_json).cast<py::dict>()) m[key] = field;
      messages.append(std::move(m));
    }
    value["messages"] = std::move(messages);
    py::list images;
    for (const auto& image : record.images) {
      py::dict i;
      i["path"] = image.path;
      i["width"] = image.width;
      i["height"] = image.height;
      if (image.crop)
        i["crop"] =
            py::make_tuple(image.crop->x, image.crop->y, image.crop->width, image.crop->height);
      else
        i["crop"] = py::none();
      images.append(std::move(i));
    }
    value["images"] = std::move(images);
    py::dict fields;
    if (!record.fields.empty()) {
      for (const auto& [key, json] : record.fields) fields[py::str(key)] = loads(json);
    }
    value["fields"] = fields;
    value["template_variables"] = record.template_variables;
    value["tools"] =
        record.tools_json.empty() ? py::object(py::none()) : py::object(loads(record.tools_json));
    value["chat_template_kwargs"] = record.template_kwargs_json.empty()
                                        ? py::object(py::dict())
                                        : py::object(loads(record.template_kwargs_json));
    return call(callable_->get(), std::move(value), [&](const py::dict& result) {
      const auto dumps = py::module_::import("json").attr("dumps");
      std::vector<Message> changed;
      for (const auto& item : result["messages"]) {
        const auto m = item.cast<py::dict>();
        // A null content (an assistant message that only calls tools) stays a key of its own.
        py::dict other_keys;
        for (const auto& [key, field] : m)
          if (std::string(py::str(key)) != "role" &&
              (std::string(py::str(key)) != "content" || field.is_none()))
            other_keys[key] = field;
        changed.push_back(
            {role_of(m["role"].cast<std::string>()),
             m["content"].is_none() ? std::string() : m["content"].cast<std::string>(),
             other_keys.empty() ? std::string() : std::string(py::str(dumps(other_keys)))});
      }
      std::vector<StageImage> kept;
      for (const auto& item : result["images"]) {
        const auto i = item.cast<py::dict>();
        StageImage image;
        image.path = i["path"].cast<std::string>();
        // A path a stage names anew is read after the stages; its size is the header's then.
        for (const auto& known : record.images)
          if (known.path == image.path) image = known;
        image.crop.reset();
        if (i.contains("crop") && !i["crop"].is_none()) {
          const auto box =
              i["crop"]
                  .cast<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>>();
          image.crop =
              ImageCrop{std::get<0>(box), std::get<1>(box), std::get<2>(box), std::get<3>(box)};
        }
        kept.push_back(std::move(image));
      }
      record.messages = std::move(changed);
      record.images = std::move(kept);
      record.template_variables =
          result["template_variables"].cast<std::map<std::string, std::string>>();
      // A key the stage removed, set to None or emptied means none.
      const auto json_text = [&](const char* key) {
        if (!result.contains(key) || result[key].is_none() || py::len(result[key]) == 0)
          return std::string();
        return std::string(py::str(dumps(result[key])));
      };
      record.tools_json = json_text("tools");
      record.template_kwargs_json = json_text("chat_template_kwargs");
      const auto returned_fields = result["fields"].cast<py::dict>();
      if (!record.fields.empty() || !returned_fields.empty()) {
        std::map<std::string, std::string> out;
        for (const auto& [key, field] : returned_fields)
          out[std::string(py::str(key))] = std::string(py::str(dumps(field)));
        record.fields = std::move(out);
      }
    });
  }

 private:
  std::shared_ptr<const PythonObject> callable_;
};

// numpy's copy of `values`, of dtype T.
template <class T>
py::array_t<T> copy_of(std::span<const T> values) {
  py::array_t<T> array(static_cast<py::ssize_t>(values.size()));
  if (!values.empty()) std::memcpy(array.mutable_data(), values.data(), values.size_bytes());
  return array;
}

// Copies a returned array back into `into`, which it must match in length: the sample's shape
// fixed its cost, so any other length is the stage's error, never a silent change.
template <class T>
void copy_back(const py::handle& returned, std::span<T> into, const std::string& stage,
               const std::string& what, SampleId id) {
  const auto array = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(returned);
  if (!array)
    throw StageContractError("stage " + stage + ": " + what + " of sample " + std::to_string(id) +
                             " is not a numeric array");
  const auto size = static_cast<std::size_t>(array.size());
  if (size != into.size())
    throw StageContractError(
        "stage " + stage + " changed " + what + " of sample " + std::to_string(id) + " from " +
        std::to_string(into.size()) + " to " + std::to_string(size) +
        " values: a sample stage keeps each sample's cost (its tokens, its images and their "
        "grids), which the packer was given; change what decides the cost in a record stage");
  if (size) std::memcpy(into.data(), array.data(), size * sizeof(T));
}

class PythonSampleStage final : public SampleStage {
 public:
  PythonSampleStage(std::string name, std::shared_ptr<const PythonObject> callable)
      : name_(std::move(name)), callable_(std::move(callable)) {}

  StageVerdict process(StageSample& sample, StageContext& context) override {
    py::gil_scoped_acquire gil;
    py::dict value;
    value["id"] = sample.id;
    value["where"] = std::string(sample.where);
    value["source"] = sample.source;
    value["seed"] = context.random()();
    value["input_ids"] = copy_of<std::int32_t>(sample.input_ids);
    value["labels"] = copy_of<std::int32_t>(sample.labels);
    py::list spans;
    for (const auto& span : sample.image_spans)
      spans.append(py::make_tuple(span.offset, span.length));
    value["image_spans"] = std::move(spans);
    py::list images;
    for (const auto& image : sample.images) {
      py::array_t<std::uint8_t> pixels({static_cast<py::ssize_t>(image.height),
                                        static_cast<py::ssize_t>(image.width), py::ssize_t{3}});
      if (!image.rgb.empty())
        std::memcpy(pixels.mutable_data(), image.rgb.data(), image.rgb.size());
      py::dict i;
      i["pixels"] = std::move(pixels);
      i["grid"] = py::make_tuple(image.grid.grid_h, image.grid.grid_w);
      images.append(std::move(i));
    }
    value["images"] = std::move(images);
    return call(callable_->get(), std::move(value), [&](const py::dict& result) {
      copy_back<std::int32_t>(result["input_ids"], sample.input_ids, name_, "input_ids", sample.id);
      copy_back<std::int32_t>(result["labels"], sample.labels, name_, "labels", sample.id);
      const auto returned = result["images"].cast<py::list>();
      if (returned.size() != sample.images.size())
        throw StageContractError("stage " + name_ + " changed the number of images of sample " +
                                 std::to_string(sample.id) + " from " +
                                 std::to_string(sample.images.size()) + " to " +
                                 std::to_string(returned.size()));
      for (std::size_t i = 0; i < returned.size(); ++i) {
        const auto image = returned[i].cast<py::dict>();
        const auto pixels = py::array_t<std::uint8_t>::ensure(image["pixels"]);
        auto& target = sample.images[i];
        if (!pixels || pixels.ndim() != 3 || pixels.shape(0) != target.height ||
            pixels.shape(1) != target.width || pixels.shape(2) != 3)
          throw StageContractError(
              "stage " + name_ + " changed image " + std::to_string(i) + " of sample " +
              std::to_string(sample.id) + ": expected uint8 pixels of shape (" +
              std::to_string(target.height) + ", " + std::to_string(target.width) +
              ", 3), its grid's; crop or resize in a record stage");
        copy_back<std::uint8_t>(pixels, target.rgb, name_, "image " + std::to_string(i), sample.id);
      }
    });
  }

 private:
  std::string name_;
  std::shared_ptr<const PythonObject> callable_;
};

}  // namespace

void register_reject(py::module_& m) {
  reject_type = PyErr_NewExceptionWithDoc(
      "odbatch.Reject",
      "Raised by a stage to reject the record or sample: Reject(reason, detail=\"\"). The reason "
      "(letters, digits, '_', '-', '.') is counted as \"<stage>:<reason>\"; the detail goes to "
      "the log and the ledger.",
      PyExc_Exception, nullptr);
  if (!reject_type) throw py::error_already_set();
  m.add_object("Reject", reject_type);
}

StageRegistry python_stages(const PipelineConfig& config, const py::dict& stages) {
  StageRegistry registry;
  for (const auto& [key, value] : stages) {
    const std::string name = py::str(key);
    if (!PyCallable_Check(value.ptr()))
      throw ConfigError(
          "stages[" + name + "]",
          "expected a callable, got " + std::string(py::str(value.get_type().attr("__name__"))));
    const StageConfig* entry = nullptr;
    for (const auto& stage : config.stages)
      if (stage.plugin.empty() && stage.type_name() == name) entry = &stage;
    if (!entry)
      throw ConfigError("stages[" + name + "]",
                        "no [[stage]] without a plugin names \"" + name + "\" as its type or name");
    auto callable = std::make_shared<const PythonObject>(py::reinterpret_borrow<py::object>(value));
    if (entry->kind == StageKind::record) {
      registry.add_record_stage(name, "python", [callable](const StageParams&) {
        return std::make_unique<PythonRecordStage>(callable);
      });
    } else {
      registry.add_sample_stage(name, "python", [name, callable](const StageParams&) {
        return std::make_unique<PythonSampleStage>(name, callable);
      });
    }
  }
  return registry;
}

}  // namespace odbatch::python
