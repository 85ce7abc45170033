"""Where the inputs lie inside the extracted Debian packages (DEST/cache/extract/<package>/)."""

FAQ_GZ = "debian-faq/usr/share/doc/debian/FAQ/debian-faq.en.txt.gz"
FORTUNES = "fortunes/usr/share/games/fortunes"
FACES_DIR = "libdlib19.1/usr/share/doc/libdlib19.1/examples/faces"
WALLPAPER_COPYRIGHT = "lomiri-wallpapers-16.04/usr/share/doc/lomiri-wallpapers-16.04/copyright"
SKIMAGE_DATA = "python3-skimage/usr/lib/python3/dist-packages/skimage/data"
TRUNCATED_JPEG = f"{SKIMAGE_DATA}/truncated.jpg"  # corrupt on purpose, for scikit-image's tests
