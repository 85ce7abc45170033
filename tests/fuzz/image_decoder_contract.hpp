#pragma once
// What ImageDecoder promises for any bytes, checked by the png_image and webp_image targets: the
// format read from the bytes is the one the header names, the header agrees with decode(), which
// returns an image of the promised geometry or an ImageError, the same on a second decode.
#include <string_view>

#include "fuzz_contract.hpp"
#include "fuzz_entries.hpp"
#include "odbatch/config/pipeline_config.hpp"
#include "odbatch/image/image_decoder.hpp"

namespace odbatch::fuzz {

inline Outcome check_image_decoder(std::string_view target, Input input) {
  const ImageStageConfig images;  // the [images] table's defaults
  // A decoder per input, so that every input is reproducible alone; the second decode below
  // exercises the buffers a worker's decoder reuses.
  ImageDecoder decoder(images.decoder_limits);
  const auto format = detect_image_format(input);
  const auto header = decoder.read_header(input);
  DecodedImage image;
  const auto error = decoder.decode(input, images.geometry, image);
  DecodedImage again;
  const auto error_again = decoder.decode(input, images.geometry, again);
  if (error) {
    expect(!error->message.empty(), target, "an image error says what is wrong");
    expect(error_again.has_value() && error_again->kind == error->kind, target,
           "decoding the same bytes again fails the same way");
    if (!header)
      expect(header.error().kind == error->kind, target,
             "a header error is the error decode() gives");
    return Outcome::rejected;
  }
  expect(format.ok() && header.ok() && header.value().format == format.value(), target,
         "the header is read, in the format of the bytes, whenever decode() succeeds");
  expect(!error_again && again.rgb == image.rgb, target,
         "decoding the same bytes again gives the same pixels");
  const auto resize_target =
      smart_resize(header.value().height, header.value().width, images.geometry);
  expect(resize_target.ok() && resize_target.value().width == image.width &&
             resize_target.value().height == image.height &&
             resize_target.value().grid == image.grid,
         target, "the image has the geometry smart_resize gives for its header");
  expect(image.source_width == header.value().width && image.source_height == header.value().height,
         target, "the image's source size is its header's");
  expect(image.rgb.size() == std::size_t{image.width} * image.height * 3, target,
         "the pixels are height x width x 3 bytes");
  return Outcome::accepted;
}

}  // namespace odbatch::fuzz
