#include "pooled_pixels.hpp"

#include <utility>

namespace odbatch::actors {

std::shared_ptr<DecodedImage> pooled_image(const std::shared_ptr<ImageBufferPool>& pool,
                                           DecodedImage&& image) {
  return {new DecodedImage(std::move(image)), [pool](DecodedImage* released) {
            pool->give_back(std::move(*released));
            delete released;
          }};
}

std::shared_ptr<SamplePayload> pooled_sample(const std::shared_ptr<ImageBufferPool>& pool,
                                             SamplePayload&& sample) {
  return {new SamplePayload(std::move(sample)), [pool](SamplePayload* released) {
            for (DecodedImage& image : released->images) pool->give_back(std::move(image));
            delete released;
          }};
}

}  // namespace odbatch::actors
