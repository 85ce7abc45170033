"""The dataset's images with the facts the image questions are answered from.

Facts come from the file itself (JPEG header: size, colour components, coding), from where it
lies (source package, the person named by a johns/<Name> directory) and from the packages' own
documentation: subjects stated by the file name or the package's docs, and the wallpapers'
authors and licenses from lomiri-wallpapers' copyright file.
"""

import re
from dataclasses import dataclass
from pathlib import Path

from jpeg_header import JpegHeader, read_jpeg_header

PACKAGE_BY_DIRECTORY = {
    "dlib": "libdlib19.1",
    "sklearn": "python3-sklearn",
    "skimage": "python3-skimage",
    "lomiri-wallpapers": "lomiri-wallpapers-16.04",
}
# Subjects stated by the file names, worded after the packages' documentation.
SUBJECTS = {
    "sklearn/china.jpg": "a view in China (scikit-learn ships it as its sample image china.jpg)",
    "sklearn/flower.jpg": "a flower (scikit-learn's sample image flower.jpg)",
    "skimage/rocket.jpg": "the launch of a SpaceX Falcon 9 rocket carrying the DSCOVR satellite",
    "skimage/retina.jpg": "a human retina: a fundus photograph of a normal left eye",
    "skimage/hubble_deep_field.jpg": "the Hubble eXtreme Deep Field, the Hubble Space Telescope's "
    "farthest view of the universe",
    "dlib/mmod_cars_test_image.jpg": "cars (dlib's test image for its car detector)",
    "dlib/mmod_cars_test_image2.jpg": "cars (dlib's second test image for its car detector)",
    "dlib/faces/dogs.jpg": "dogs",
    "dlib/faces/bald_guys.jpg": "bald men",
    "dlib/faces/Tom_Cruise_avp_2014_4.jpg": "the actor Tom Cruise",
}
_STANZA = re.compile(r"^Files: 16\.04/(\S+\.jpg)\nCopyright: (.+)\nLicense: (\S+)", re.M)


@dataclass(frozen=True)
class WallpaperCredit:
    title: str  # from the file name, e.g. "Bridge" from Bridge_by_Sander_Klootwijk.jpg
    author: str  # from the file name, e.g. "Sander Klootwijk"
    copyright: str  # as the copyright file states it
    license: str


@dataclass(frozen=True)
class CatalogImage:
    path: str  # relative to the images directory, with forward slashes
    package: str
    header: JpegHeader
    size_bytes: int
    subject: str | None
    person: str | None  # for johns/<Name> face crops
    wallpaper: WallpaperCredit | None

    @property
    def pixels(self) -> int:
        return self.header.width * self.header.height


def wallpaper_credits(copyright_file: Path) -> dict[str, WallpaperCredit]:
    credits = {}
    for name, holder, license_name in _STANZA.findall(copyright_file.read_text(encoding="utf-8")):
        title, _, author = name.removesuffix(".jpg").rpartition("_by_")
        credits[name] = WallpaperCredit(
            title.replace("_", " "), author.replace("_", " "), holder.strip(), license_name
        )
    return credits


def catalog(images_dir: Path, wallpaper_copyright: Path) -> list[CatalogImage]:
    credits = wallpaper_credits(wallpaper_copyright)
    images = []
    for path in sorted(images_dir.rglob("*.jpg")):
        relative = path.relative_to(images_dir).as_posix()
        top = relative.split("/")[0]
        person = path.parent.name.replace("_", " ") if "/johns/" in relative else None
        wallpaper = credits.get(path.name) if top == "lomiri-wallpapers" else None
        if top == "lomiri-wallpapers" and wallpaper is None:
            raise SystemExit(f"{wallpaper_copyright}: no stanza for {path.name}")
        images.append(
            CatalogImage(
                relative,
                PACKAGE_BY_DIRECTORY[top],
                read_jpeg_header(path),
                path.stat().st_size,
                SUBJECTS.get(relative),
                person,
                wallpaper,
            )
        )
    return images
