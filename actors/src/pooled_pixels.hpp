#pragma once
// Shared handles whose release gives decoded pixels back to the ImageBufferPool: an image on its
// way from a decoder worker to the joiner (given back whole if its sample is rejected), and a
// joined sample holding its images (given back once the collator has copied them and every
// holder has let go).
#include <memory>

#include "odbatch/image/image_buffer_pool.hpp"
#include "odbatch/proto_msgs/decoded_image.hpp"
#include "odbatch/proto_msgs/sample_payload.hpp"

namespace odbatch::actors {

std::shared_ptr<DecodedImage> pooled_image(const std::shared_ptr<ImageBufferPool>& pool,
                                           DecodedImage&& image);

std::shared_ptr<SamplePayload> pooled_sample(const std::shared_ptr<ImageBufferPool>& pool,
                                             SamplePayload&& sample);

}  // namespace odbatch::actors
