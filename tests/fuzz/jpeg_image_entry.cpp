// A JPEG file as the image-decoder workers take it, under the pipeline's default limits.
#include "fuzz_contract.hpp"
#include "fuzz_entries.hpp"
#include "odbatch/config/pipeline_config.hpp"
#include "odbatch/image/jpeg_decoder.hpp"

namespace odbatch::fuzz {
namespace {

constexpr std::string_view kTarget = "jpeg_image";

void expect_same_error(const ImageError& error, const ImageError& again) {
  expect(!error.message.empty(), kTarget, "an image error says what is wrong");
  expect(error.kind == again.kind, kTarget, "decoding the same bytes again fails the same way");
}

}  // namespace

Outcome jpeg_image(Input input) {
  const ImageStageConfig images;  // the [images] table's defaults
  // A decoder per input, so that every input is reproducible alone; a worker's decoder reuses
  // its handle and buffers, which the second decode below exercises.
  JpegDecoder decoder(images.decoder_limits);
  const auto header = decoder.read_header(input);
  DecodedImage image;
  const auto error = decoder.decode(input, images.geometry, image);
  DecodedImage again;
  const auto error_again = decoder.decode(input, images.geometry, again);
  if (error) {
    expect(error_again.has_value(), kTarget, "decoding the same bytes again fails too");
    expect_same_error(*error, *error_again);
    if (!header) expect_same_error(header.error(), *error);
    return Outcome::rejected;
  }
  expect(header.ok(), kTarget, "the header is read whenever decode() succeeds");
  expect(!error_again && again.rgb == image.rgb, kTarget,
         "decoding the same bytes again gives the same pixels");
  const auto target = smart_resize(header.value().height, header.value().width, images.geometry);
  expect(target.ok() && target.value().width == image.width &&
             target.value().height == image.height && target.value().grid == image.grid,
         kTarget, "the image has the geometry smart_resize gives for its header");
  expect(image.source_width == header.value().width && image.source_height == header.value().height,
         kTarget, "the image's source size is its header's");
  expect(image.rgb.size() == std::size_t{image.width} * image.height * 3, kTarget,
         "the pixels are height x width x 3 bytes");
  return Outcome::accepted;
}

}  // namespace odbatch::fuzz
