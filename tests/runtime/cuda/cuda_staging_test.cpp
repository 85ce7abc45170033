// Staging batches to the GPU. The block layout's cases run anywhere; the others need a GPU and
// report Skipped without one (tools/gpu-check.sh requires them to run, on a machine with GPUs).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <random>
#include <span>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpu_test_support.hpp"
#include "odbatch/batch/batch_collator.hpp"
#include "odbatch/cuda/batch_block_layout.hpp"
#include "odbatch/cuda/cuda_error.hpp"
#include "odbatch/cuda/cuda_stager.hpp"
#include "odbatch/cuda/cuda_stream.hpp"
#include "odbatch/cuda/device_batch.hpp"
#include "odbatch/cuda/pinned_buffer_pool.hpp"

namespace odbatch {
namespace {

using namespace std::chrono_literals;

struct BatchShape {
  BatchLayout layout = BatchLayout::padded;
  std::uint32_t rows = 4;
  std::uint32_t max_row_tokens = 300;
  std::uint32_t images = 1;
  std::uint32_t image_side = 56;  // pixels; a multiple of the 14-pixel patch
};

// A batch collated from random rows; `seed` makes every batch's contents its own.
std::shared_ptr<Batch> make_batch(const BatchShape& shape, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<SamplePayload> samples(shape.rows);
  for (std::uint32_t row = 0; row < shape.rows; ++row) {
    SamplePayload& sample = samples[row];
    sample.id = seed * 1000u + row;
    const auto length = static_cast<std::uint32_t>(1 + rng() % shape.max_row_tokens);
    for (std::uint32_t t = 0; t < length; ++t) {
      const auto token = static_cast<std::int32_t>(rng() % 32000);
      sample.input_ids.push_back(token);
      sample.labels.push_back(t % 3 == 0 ? -100 : token);
    }
    if (row < shape.images) {
      const std::uint32_t grid = shape.image_side / 14;
      DecodedImage image;
      image.grid = {grid, grid, grid * grid / 4};
      image.width = image.height = shape.image_side;
      image.rgb.resize(std::size_t{shape.image_side} * shape.image_side * 3);
      for (auto& byte : image.rgb) byte = static_cast<std::uint8_t>(rng());
      sample.images.push_back(std::move(image));
    }
  }
  std::vector<const SamplePayload*> rows;
  StepInfo info;
  for (const auto& sample : samples) {
    rows.push_back(&sample);
    info.sample_ids.push_back(sample.id);
  }
  info.step = seed;
  info.loss_scale = 0.25;
  auto batch = std::make_shared<Batch>();
  BatchCollator({.layout = shape.layout}).collate(rows, info, *batch);
  return batch;
}

template <typename T>
std::vector<T> as_vector(std::span<const T> values) {
  return {values.begin(), values.end()};
}

// Copies a device field back, in order with the work on `stream`.
template <typename T>
std::vector<T> copy_back(const DeviceSpan<T>& field, const CudaStream& stream) {
  std::vector<T> host(field.size);
  if (!field.empty())
    check_cuda_call(cudaMemcpyAsync(host.data(), field.data, field.size_bytes(),
                                    cudaMemcpyDeviceToHost, stream.get()),
                    "cudaMemcpyAsync (copy back)");
  stream.synchronize();
  return host;
}

void check_same(const DeviceBatch& device, const Batch& host, const CudaStream& stream) {
  CHECK(device.layout == host.layout());
  CHECK(device.rows == host.rows());
  CHECK(device.seq_len == host.seq_len());
  CHECK(copy_back(device.input_ids, stream) == as_vector(host.input_ids()));
  CHECK(copy_back(device.labels, stream) == as_vector(host.labels()));
  CHECK(copy_back(device.attention_mask, stream) == as_vector(host.attention_mask()));
  CHECK(copy_back(device.cu_seqlens, stream) == as_vector(host.cu_seqlens()));
  CHECK(copy_back(device.position_ids, stream) == as_vector(host.position_ids()));
  CHECK(copy_back(device.pixel_values, stream) == as_vector(host.pixel_values()));
  CHECK(copy_back(device.image_grid_thw, stream) == as_vector(host.image_grid_thw()));
  CHECK(device.step_info.step == host.step_info().step);
  CHECK(device.step_info.loss_scale == host.step_info().loss_scale);
  CHECK(device.step_info.sample_ids == host.step_info().sample_ids);
}

TEST_CASE("a block layout aligns every field, in the batch's order, without overlap") {
  for (const auto layout_kind : {BatchLayout::padded, BatchLayout::packed}) {
    BatchShape shape;
    shape.layout = layout_kind;
    shape.images = 2;
    const auto batch = make_batch(shape, 3);
    const auto layout = BatchBlockLayout::of(*batch);
    const std::vector<std::pair<BlockField, std::size_t>> fields{
        {layout.input_ids, 4},     {layout.labels, 4},       {layout.attention_mask, 1},
        {layout.cu_seqlens, 4},    {layout.position_ids, 4}, {layout.pixel_values, 1},
        {layout.image_grid_thw, 4}};
    std::size_t end = 0;
    for (const auto& [field, element_bytes] : fields) {
      CHECK(field.offset % BatchBlockLayout::kFieldAlignment == 0);
      CHECK(field.offset >= end);
      end = field.offset + field.count * element_bytes;
    }
    CHECK(layout.total_bytes == end);
    CHECK(layout.input_ids.count == batch->input_ids().size());
    CHECK(layout.pixel_values.count == batch->pixel_values().size());
    CHECK(layout.image_grid_thw.count == 6);
  }
}

TEST_CASE("a written block holds every field at its offset and describes a device batch") {
  BatchShape shape;
  shape.layout = BatchLayout::packed;
  const auto batch = make_batch(shape, 4);
  const auto layout = BatchBlockLayout::of(*batch);
  std::vector<std::byte> block(layout.total_bytes);
  write_batch_block(*batch, layout, block.data());
  // A host block stands in for the device's: describing only computes pointers.
  DeviceBatch described;
  describe_device_batch(*batch, layout, block.data(), described);
  const auto read = [](const auto& field) {
    using T = std::remove_pointer_t<decltype(field.data)>;
    std::vector<T> values(field.size);
    if (!values.empty()) std::memcpy(values.data(), field.data, field.size_bytes());
    return values;
  };
  CHECK(read(described.input_ids) == as_vector(batch->input_ids()));
  CHECK(read(described.labels) == as_vector(batch->labels()));
  CHECK(read(described.cu_seqlens) == as_vector(batch->cu_seqlens()));
  CHECK(read(described.position_ids) == as_vector(batch->position_ids()));
  CHECK(read(described.pixel_values) == as_vector(batch->pixel_values()));
  CHECK(read(described.image_grid_thw) == as_vector(batch->image_grid_thw()));
  CHECK(described.attention_mask.data == nullptr);  // packed: no mask
  CHECK(described.attention_mask.empty());
  CHECK(described.layout == BatchLayout::packed);
  CHECK(described.seq_len == batch->seq_len());
  CHECK(described.step_info.sample_ids == batch->step_info().sample_ids);
}

TEST_CASE("a padded batch arrives on the device byte for byte") {
  ODBATCH_REQUIRE_GPUS(1);
  const CudaStream compute;
  CudaStager stager;
  const auto batch = make_batch({}, 1);
  stager.stage(batch);
  CHECK(stager.staged() == 1);
  const DeviceBatch& device = stager.wait(compute.get());
  CHECK(stager.held() == 1);
  check_same(device, *batch, compute);
  CHECK(!device.attention_mask.empty());
  stager.release(device, compute.get());
  CHECK(stager.held() == 0);
}

TEST_CASE("a packed batch with images arrives on the device byte for byte") {
  ODBATCH_REQUIRE_GPUS(1);
  const CudaStream compute;
  CudaStager stager;
  BatchShape shape;
  shape.layout = BatchLayout::packed;
  shape.rows = 7;
  shape.images = 3;
  shape.image_side = 224;
  const auto batch = make_batch(shape, 2);
  stager.stage(*batch);
  const DeviceBatch& device = stager.wait(compute.get());
  check_same(device, *batch, compute);
  CHECK(!device.cu_seqlens.empty());
  stager.release(device, compute.get());
}

TEST_CASE("batches in flight come out in staging order, each with its own bytes") {
  ODBATCH_REQUIRE_GPUS(1);
  const CudaStream compute;
  CudaStager stager({.slots = 3, .initial_slot_bytes = 0});
  std::vector<std::shared_ptr<Batch>> batches;
  for (std::uint32_t seed = 10; seed < 13; ++seed) {
    batches.push_back(make_batch({}, seed));
    stager.stage(batches.back());
  }
  CHECK(stager.staged() == 3);
  CHECK_THROWS_AS(stager.stage(make_batch({}, 99)), std::logic_error);
  for (const auto& batch : batches) {
    const DeviceBatch& device = stager.wait(compute.get());
    check_same(device, *batch, compute);
    stager.release(device, compute.get());
  }
  // Steady state as a trainer runs it: the next batch is staged while the current one is held.
  auto current = make_batch({}, 100);
  stager.stage(current);
  for (std::uint32_t seed = 101; seed < 131; ++seed) {
    auto next = make_batch({}, seed);
    stager.stage(next);
    const DeviceBatch& device = stager.wait(compute.get());
    check_same(device, *current, compute);
    stager.release(device, compute.get());
    current = std::move(next);
  }
  const DeviceBatch& last = stager.wait(compute.get());
  check_same(last, *current, compute);
  stager.release(last, compute.get());
  CHECK(stager.stats().batches_staged == 34);
}

TEST_CASE("a slot is refilled only after the compute stream's work on it has run") {
  ODBATCH_REQUIRE_GPUS(1);
  const CudaStream compute;
  CudaStager stager({.slots = 1, .initial_slot_bytes = 0});
  const auto first = make_batch({}, 20);
  const auto second = make_batch({}, 21);
  REQUIRE(first->input_ids().size_bytes() > 0);
  stager.stage(first);
  const DeviceBatch& device = stager.wait(compute.get());

  // Pinned memory first: cudaHostAlloc may wait for the device, which the parked stream below
  // would hold up.
  PinnedBufferPool copies(1);
  const PinnedBuffer seen = copies.acquire(device.input_ids.size_bytes());

  // The compute stream stalls on a host function until the gate opens (or 10 s pass), then copies
  // the slot's input_ids into pinned memory, so that the host never waits on the copy. `finished`
  // tells whether anything the host did meanwhile had to wait for the stall to end.
  struct Gate {
    std::atomic<bool> open{false};
    std::atomic<bool> finished{false};
  } gate;
  // Opens the gate on every way out, so that the host function never outlives `gate`.
  struct OpenOnExit {
    Gate& gate;
    const CudaStream& stream;
    ~OpenOnExit() {
      gate.open = true;
      cudaStreamSynchronize(stream.get());
    }
  };
  const OpenOnExit open_on_exit{gate, compute};
  check_cuda_call(cudaLaunchHostFunc(
                      compute.get(),
                      [](void* data) {
                        auto& state = *static_cast<Gate*>(data);
                        const auto deadline = std::chrono::steady_clock::now() + 10s;
                        while (!state.open.load() && std::chrono::steady_clock::now() < deadline)
                          std::this_thread::sleep_for(1ms);
                        state.finished = true;
                      },
                      &gate),
                  "cudaLaunchHostFunc");
  check_cuda_call(cudaMemcpyAsync(seen.data(), device.input_ids.data, device.input_ids.size_bytes(),
                                  cudaMemcpyDeviceToHost, compute.get()),
                  "cudaMemcpyAsync");
  const std::size_t ids = device.input_ids.size;
  stager.release(device, compute.get());

  // Fits the slot's block and pinned buffer: nothing is allocated, so the host does not wait.
  stager.stage(second);
  CHECK(!gate.finished.load());
  gate.open = true;
  compute.synchronize();
  CHECK(gate.finished.load());
  std::vector<std::int32_t> first_ids(ids);
  std::memcpy(first_ids.data(), seen.data(), ids * sizeof(std::int32_t));
  CHECK(first_ids == as_vector(first->input_ids()));

  const DeviceBatch& refilled = stager.wait(compute.get());
  check_same(refilled, *second, compute);
  stager.release(refilled, compute.get());
}

TEST_CASE("a batch larger than its slot grows the slot") {
  ODBATCH_REQUIRE_GPUS(1);
  const CudaStream compute;
  CudaStager stager({.slots = 1, .initial_slot_bytes = 1});
  CHECK(stager.stats().device_allocations == 1);
  const auto small = make_batch({}, 30);
  stager.stage(small);
  const DeviceBatch& small_device = stager.wait(compute.get());
  check_same(small_device, *small, compute);
  stager.release(small_device, compute.get());
  CHECK(stager.stats().device_allocations == 1);

  BatchShape shape;
  shape.images = 4;
  shape.image_side = 560;  // 3.6 MiB of pixels: more than the 1 MiB slot
  const auto large = make_batch(shape, 31);
  REQUIRE(BatchBlockLayout::of(*large).total_bytes > (std::size_t{1} << 20));
  stager.stage(large);
  const DeviceBatch& large_device = stager.wait(compute.get());
  check_same(large_device, *large, compute);
  stager.release(large_device, compute.get());
  CHECK(stager.stats().device_allocations == 2);

  stager.stage(small);  // a smaller batch keeps the grown slot
  stager.release(stager.wait(compute.get()), compute.get());
  CHECK(stager.stats().device_allocations == 2);
}

TEST_CASE("pinned buffers are reused, and at most max_buffers exist") {
  ODBATCH_REQUIRE_GPUS(1);
  PinnedBufferPool pool(1);
  PinnedBuffer buffer = pool.acquire(1000);
  std::byte* const first = buffer.data();
  CHECK(buffer.capacity() >= 1000);
  buffer.reset();
  CHECK(!buffer);
  buffer = pool.acquire(500);
  CHECK(buffer.data() == first);
  CHECK(pool.host_allocations() == 1);

  // The one buffer is held: a second acquire waits until it comes back.
  auto waiting = std::async(std::launch::async, [&pool] { return pool.acquire(10); });
  CHECK(waiting.wait_for(100ms) == std::future_status::timeout);
  buffer.reset();
  const PinnedBuffer returned = waiting.get();
  CHECK(returned.data() == first);
  CHECK(pool.buffers() == 1);
}

TEST_CASE("a free buffer too small for a request is reallocated larger") {
  ODBATCH_REQUIRE_GPUS(1);
  PinnedBufferPool pool(1);
  std::size_t small_capacity = 0;
  {
    const PinnedBuffer small = pool.acquire(100);
    small_capacity = small.capacity();
  }
  const PinnedBuffer large = pool.acquire(small_capacity + 1);
  CHECK(large.capacity() > small_capacity);
  CHECK(pool.host_allocations() == 2);
  CHECK(pool.buffers() == 1);
}

TEST_CASE("a steady stream of batches allocates nothing once warm") {
  ODBATCH_REQUIRE_GPUS(1);
  const CudaStream compute;
  CudaStager stager;
  for (std::uint32_t seed = 40; seed < 80; ++seed) {
    stager.stage(make_batch({}, seed));
    stager.release(stager.wait(compute.get()), compute.get());
  }
  compute.synchronize();
  const CudaStagerStats stats = stager.stats();
  CHECK(stats.batches_staged == 40);
  CHECK(stats.host_allocations <= stager.slots());
  CHECK(stats.device_allocations <= stager.slots());
}

TEST_CASE("misuse is reported as a logic error") {
  ODBATCH_REQUIRE_GPUS(1);
  const CudaStream compute;
  CudaStager stager;
  CHECK_THROWS_AS(stager.wait(compute.get()), std::logic_error);
  stager.stage(make_batch({}, 50));
  DeviceBatch& device = stager.wait(compute.get());
  const DeviceBatch stranger;
  CHECK_THROWS_AS(stager.release(stranger, compute.get()), std::logic_error);
  stager.release(device, compute.get());
  CHECK_THROWS_AS(stager.release(device, compute.get()), std::logic_error);
  CHECK_THROWS_AS(stager.stage(std::shared_ptr<const Batch>()), std::invalid_argument);
}

}  // namespace
}  // namespace odbatch
