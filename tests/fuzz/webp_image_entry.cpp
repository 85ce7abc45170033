// A WebP file as the pipeline takes it (ImageDecoder, default limits).
#include "image_decoder_contract.hpp"

namespace odbatch::fuzz {

Outcome webp_image(Input input) {
  return check_image_decoder("webp_image", input);
}

}  // namespace odbatch::fuzz
