"""Facts about a JPEG file read from its markers alone, without decoding the image.

The start-of-frame (SOF) segment gives the dimensions and the number of colour components;
the SOF type tells baseline from progressive coding. A file whose segments run past its end,
or that ends before its entropy-coded data and end-of-image marker, is reported as corrupt.
"""

from dataclasses import dataclass
from pathlib import Path

SOI = b"\xff\xd8"
EOI = b"\xff\xd9"
# SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC), which share the range.
_FRAME_MARKERS = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
_PROGRESSIVE_MARKERS = {0xC2, 0xC6, 0xCA, 0xCE}
_START_OF_SCAN = 0xDA
# Markers that stand alone, without a length field.
_STANDALONE_MARKERS = {0x01, *range(0xD0, 0xD8)}


class JpegError(ValueError):
    """The bytes are not a complete JPEG file; the message says where and why."""


@dataclass(frozen=True)
class JpegHeader:
    width: int
    height: int
    components: int  # 1: greyscale, 3: YCbCr colour, 4: CMYK
    progressive: bool
    frame_offset: int  # file offset of the SOF marker's first byte

    @property
    def is_greyscale(self) -> bool:
        return self.components == 1

    @property
    def orientation(self) -> str:
        if self.width == self.height:
            return "square"
        return "landscape" if self.width > self.height else "portrait"


def parse_jpeg_header(data: bytes, name: str = "<bytes>") -> JpegHeader:
    """Reads the frame header, and checks that the file is complete up to its EOI marker."""
    if not data.startswith(SOI):
        raise JpegError(f"{name}: no JPEG start-of-image marker (first bytes {data[:2].hex()})")
    header = None
    pos = 2
    while True:
        if pos + 2 > len(data):
            raise JpegError(f"{name}: truncated at byte {pos}, before the start of scan")
        if data[pos] != 0xFF:
            raise JpegError(f"{name}: expected a marker at byte {pos}, found 0x{data[pos]:02x}")
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte before a marker
            pos += 1
            continue
        if marker in _STANDALONE_MARKERS:
            pos += 2
            continue
        if pos + 4 > len(data):
            raise JpegError(f"{name}: truncated in marker 0x{marker:02x}'s length at byte {pos}")
        length = int.from_bytes(data[pos + 2 : pos + 4], "big")
        end = pos + 2 + length
        if length < 2 or end > len(data):
            raise JpegError(
                f"{name}: segment 0x{marker:02x} at byte {pos} claims {length} bytes, "
                f"past the end of the file ({len(data)} bytes)"
            )
        if marker in _FRAME_MARKERS:
            if length < 8:
                raise JpegError(f"{name}: frame header at byte {pos} is {length} bytes, too short")
            height = int.from_bytes(data[pos + 5 : pos + 7], "big")
            width = int.from_bytes(data[pos + 7 : pos + 9], "big")
            header = JpegHeader(width, height, data[pos + 9], marker in _PROGRESSIVE_MARKERS, pos)
        if marker == _START_OF_SCAN:
            break
        pos = end
    if header is None:
        raise JpegError(f"{name}: start of scan at byte {pos} comes before any frame header")
    if not data.rstrip(b"\x00").endswith(EOI):
        raise JpegError(f"{name}: no end-of-image marker; the scan data is truncated")
    return header


def read_jpeg_header(path: Path) -> JpegHeader:
    return parse_jpeg_header(path.read_bytes(), str(path))
