"""Copies the photos out of the extracted Debian packages into the dataset's images directory.

Layout (stable, relative to DEST/images): dlib/{faces,johns/<Name>,video_frames}/..., dlib/
mmod_cars_test_image*.jpg, sklearn/*.jpg, skimage/*.jpg, lomiri-wallpapers/*.jpg. A JPEG whose
markers do not check out is not copied; it is listed with the reason.

Usage: collect_images.py EXTRACT_DIR IMAGES_DIR
"""

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from jpeg_header import JpegError, read_jpeg_header


@dataclass(frozen=True)
class ImageSet:
    package: str
    root: str  # inside the package's extracted tree
    patterns: tuple[str, ...]
    destination: str  # inside the images directory


IMAGE_SETS = (
    ImageSet(
        "libdlib19.1",
        "usr/share/doc/libdlib19.1/examples",
        ("faces/*.jpg", "johns/*/*.jpg", "video_frames/*.jpg", "mmod_cars_test_image*.jpg"),
        "dlib",
    ),
    ImageSet(
        "python3-sklearn",
        "usr/lib/python3/dist-packages/sklearn/datasets/images",
        ("*.jpg",),
        "sklearn",
    ),
    ImageSet(
        "python3-skimage", "usr/lib/python3/dist-packages/skimage/data", ("*.jpg",), "skimage"
    ),
    ImageSet("lomiri-wallpapers-16.04", "usr/share/backgrounds", ("*.jpg",), "lomiri-wallpapers"),
)


def collect(extract_dir: Path, images_dir: Path) -> tuple[int, list[str]]:
    """Returns the number of images in place and one line per rejected file."""
    copied = 0
    rejected: list[str] = []
    for image_set in IMAGE_SETS:
        root = extract_dir / image_set.package / image_set.root
        if not root.is_dir():
            raise SystemExit(f"collect_images: no {root}: is {image_set.package} extracted?")
        for pattern in image_set.patterns:
            for source in sorted(root.glob(pattern)):
                try:
                    read_jpeg_header(source)
                except JpegError as error:
                    rejected.append(str(error))
                    continue
                target = images_dir / image_set.destination / source.relative_to(root)
                if not target.exists() or target.stat().st_size != source.stat().st_size:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(source, target)
                copied += 1
    return copied, rejected


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    count, rejected = collect(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"images: {count} JPEGs in {sys.argv[2]}")
    for line in rejected:
        print(f"images: not used: {line}")


if __name__ == "__main__":
    main()
