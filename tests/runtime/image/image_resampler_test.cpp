#include "odbatch/image/bicubic_resampler.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace odbatch {
namespace {

using Bytes = std::vector<std::uint8_t>;

// A 13x9 source with detail in every channel: (37x + 91y + 53c + 7xy) mod 256.
constexpr std::uint32_t kSourceWidth = 13;
constexpr std::uint32_t kSourceHeight = 9;

Bytes detailed_source() {
  Bytes rgb;
  for (std::uint32_t y = 0; y < kSourceHeight; ++y)
    for (std::uint32_t x = 0; x < kSourceWidth; ++x)
      for (std::uint32_t c = 0; c < 3; ++c)
        rgb.push_back(static_cast<std::uint8_t>((37 * x + 91 * y + 53 * c + 7 * x * y) % 256));
  return rgb;
}

Bytes from_hex(std::string_view hex) {
  Bytes bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    const auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    bytes.push_back(static_cast<std::uint8_t>(nibble(hex[i]) * 16 + nibble(hex[i + 1])));
  }
  return bytes;
}

struct PillowResult {
  std::uint32_t width;
  std::uint32_t height;
  std::string_view rgb_hex;
};

// Pillow 9.4: Image.frombytes("RGB", (13, 9), detailed_source()).resize((w, h), Image.BICUBIC).
// Shrinking both ways, one axis only (each way), shrinking one while enlarging the other, and
// enlarging both.
constexpr PillowResult kPillowResults[] = {
    {5, 4,
     "65828f7a87937b7d86707e8b7693737e8580908c868b827a808181899191709a7a80806e92897e7d84698c68"
     "8283669685758c777a7d7f7c8681619c"},
    {6, 9,
     "174c8164a1d8bcaf6e423569508db8a5da2f7db8c1a76a46335fa59cc8af915454437eb9b677404b74b4b5aa"
     "695b508b91ba978e4f573671acb8b77b7d6b94a492525857979ed9a3a1aa6b7f6387a8a36476719ab69a5e6f"
     "78b2609c6b8b8b5780668f6ead766385638e4f5760959e5b9876a296669881649569699867a3935a8f7a679c"
     "795f9489598e88669b6f77ac855489a774ab659058649c7f6c8e8e874883"},
    {13, 4,
     "497e817376b26aa76a9c5e97538bc080b559aa4e834378b06da567995c99518d918285547aaf81619678967d"
     "738176a582a86aac6fa473a85eac6297659c5d9c618f659389978e6f9273b077b48177b48158867c9b907755"
     "9355a75a8f6ea359bf6da282a8694c7d6c9a8076947b498f659a795e8f8f5e968447836aa7aa98669f8a4f84"
     "73a84c656fa492558d7bb04d6d70ad945e968153887679ae"},
    {20, 6,
     "1b4e8e2b65a54989b46aa8838b92859a6ca66b87c666aba288bb53ad66698e478b396ca4498e7a6d8969885a"
     "8a6269b54c8aaa6bab478fc94ea6db6a8dcc57ac9178ba579563897066836e8e64866b74b06496977baf5aa5"
     "6e78945d985387a66d9e858e97859e74b47f9c71799f48ab497971579236759c336a97548381849a76a07ab2"
     "94979783be5fbd788faa77896ca1639877929a798670a544a26872a256885491697a7e7e9874a77797d38fc4"
     "a0a8de6aa7d56e74b5634a82618d6f8988846b6b9c3ea3657c996e806a9f609d7a95ab879583c161468d7e3e"
     "778f7d9f7aa3a042b4802fa83f65714f92446dac4489a66771a98f699b87b25e5dab6c3e769b8256948d7272"
     "72a752b6828cc163a08a5e7f688a49798f4bbe5992974b7e6a60806b95c7956fa5b74479c14a819b41766c49"
     "7f6190ce9488c5cc578e954b8c7b746c77ad453a82844360a790609996a36674b6663d80ad7578b6a862999e"
     "295e6e5c914893c8"},
    {17, 11,
     "002f6412477b30649e4d83c268a7dd8cc4ffabef9accca14e30e4326245e0246812d65a24988be6ea4e98cc1"
     "53a9de00c1f6213d70b85698e280cca3afc536d034624d47842a708e5984917880b5739fe288cd84b1ab32c3"
     "27633349952c788e60a29388bcb19bd966c5868da372795e8b4b8e44854e6db654a48c8ea358ae52875d73c2"
     "5cad9e93b282bd72a576a2438f5d547a3b912865bb7fbe2baf5953833b922f7db56cb68dab96bda6aa8897ae"
     "47c3457a5b71545e6270735eb2539dd58cda60ce866daf5a7b4b895a0f438e36799972a0c6a2b6ccafe835eb"
     "61569c457e3c7da37998cd94d53cce7533b326612862725b6fb070a2f298ddc0ceff3e699edf92d954d59920"
     "d81f633460955592da8fd382c6c519f2275c54538e468ad087c4b1b9e51cfa41518044864087bc7bb0e5cefe"
     "41548b522d51907085a994cd1bd94f44923c753b7ca281a0d5b6e64c568e540f4c9c5a9ea49fc214d0511f96"
     "276d1e6fa857895b4284ad6bb2a79ad84f3d744472679488997798ad45d4568b82a29462b847838026b73172"
     "518d6c849ca7b35e9a9e1045347fc68865aba6826f70b0533177b87857a085806887a559d56ba09a3d8f6e74"
     "5a849954cc5e978c3279577cb97592c6c853889995cab3396d7f2d6a3f79bf9e9ad0c1376f833d5a3b87945a"
     "a1d6b93972874c664494a367a6dcc63e74863166536fa46cb7ece4013663437846a2d7abb9eef521566d60a9"
     "75c26c93c71101366b4280cda7e1769fd32e184d8961b1e9c64b80a91d52286ba0"},
};

Bytes resize(BicubicResampler& resampler, const Bytes& source, std::uint32_t width,
             std::uint32_t height, std::uint32_t to_width, std::uint32_t to_height) {
  Bytes target(std::size_t{to_width} * to_height * 3);
  resampler.resize(source, width, height, target, to_width, to_height);
  return target;
}

}  // namespace

TEST_CASE("bicubic resizing reproduces Pillow's BICUBIC output byte for byte") {
  const Bytes source = detailed_source();
  BicubicResampler resampler;  // one resampler for all sizes: its reused buffers must not leak
  for (const auto& expected : kPillowResults) {
    CAPTURE(expected.width);
    CAPTURE(expected.height);
    const Bytes target =
        resize(resampler, source, kSourceWidth, kSourceHeight, expected.width, expected.height);
    CHECK(target == from_hex(expected.rgb_hex));
  }
}

TEST_CASE("resizing a constant image keeps it constant") {
  BicubicResampler resampler;
  Bytes source;
  for (int i = 0; i < 97 * 61; ++i) source.insert(source.end(), {17, 128, 250});
  for (const auto& [width, height] :
       {std::pair{40u, 25u}, std::pair{13u, 7u}, std::pair{200u, 150u}, std::pair{97u, 3u}}) {
    const Bytes target = resize(resampler, source, 97, 61, width, height);
    for (std::size_t i = 0; i < target.size(); i += 3) {
      REQUIRE(target[i] == 17);
      REQUIRE(target[i + 1] == 128);
      REQUIRE(target[i + 2] == 250);
    }
  }
}

TEST_CASE("a horizontal ramp stays monotone and spans its range after resizing") {
  constexpr std::uint32_t kWidth = 256;
  constexpr std::uint32_t kHeight = 4;
  Bytes source;
  for (std::uint32_t y = 0; y < kHeight; ++y)
    for (std::uint32_t x = 0; x < kWidth; ++x)
      source.insert(source.end(), 3, static_cast<std::uint8_t>(x));
  BicubicResampler resampler;
  for (const std::uint32_t width : {100u, 37u, 255u, 300u}) {
    CAPTURE(width);
    const Bytes target = resize(resampler, source, kWidth, kHeight, width, 3);
    for (std::uint32_t y = 0; y < 3; ++y) {
      const std::uint8_t* row = &target[std::size_t{y} * width * 3];
      for (std::uint32_t x = 1; x < width; ++x) REQUIRE(row[x * 3] >= row[(x - 1) * 3]);
      CHECK(row[0] <= 4);
      CHECK(row[(width - 1) * 3] >= 251);
    }
  }
}

TEST_CASE("a grey image resizes to the pixels its RGB copy resizes to") {
  const Bytes rgb = detailed_source();
  Bytes grey;
  Bytes grey_as_rgb;
  for (std::size_t i = 0; i < rgb.size(); i += 3) {
    grey.push_back(rgb[i + 1]);
    grey_as_rgb.insert(grey_as_rgb.end(), 3, rgb[i + 1]);
  }
  BicubicResampler resampler;
  for (const auto& expected : kPillowResults) {
    CAPTURE(expected.width);
    CAPTURE(expected.height);
    Bytes resized_grey(std::size_t{expected.width} * expected.height);
    resampler.resize(grey, kSourceWidth, kSourceHeight, resized_grey, expected.width,
                     expected.height, 1);
    const Bytes resized_rgb = resize(resampler, grey_as_rgb, kSourceWidth, kSourceHeight,
                                     expected.width, expected.height);
    for (std::size_t i = 0; i < resized_grey.size(); ++i) {
      REQUIRE(resized_rgb[3 * i] == resized_grey[i]);
      REQUIRE(resized_rgb[3 * i + 1] == resized_grey[i]);
      REQUIRE(resized_rgb[3 * i + 2] == resized_grey[i]);
    }
  }
}

TEST_CASE("resizing to the same size copies the image") {
  const Bytes source = detailed_source();
  BicubicResampler resampler;
  CHECK(resize(resampler, source, kSourceWidth, kSourceHeight, kSourceWidth, kSourceHeight) ==
        source);
}

TEST_CASE("buffers that do not match their sizes are refused") {
  BicubicResampler resampler;
  Bytes source(10 * 10 * 3);
  Bytes target(5 * 5 * 3);
  CHECK_THROWS_AS(resampler.resize(source, 10, 9, target, 5, 5), std::invalid_argument);
  CHECK_THROWS_AS(resampler.resize(source, 10, 10, target, 5, 4), std::invalid_argument);
  Bytes empty;
  CHECK_THROWS_AS(resampler.resize(empty, 0, 0, target, 5, 5), std::invalid_argument);
  Bytes four_channels(10 * 10 * 4);
  Bytes four_channel_target(5 * 5 * 4);
  CHECK_THROWS_AS(resampler.resize(four_channels, 10, 10, four_channel_target, 5, 5, 4),
                  std::invalid_argument);
}

}  // namespace odbatch
