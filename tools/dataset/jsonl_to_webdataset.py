"""Converts a JSON Lines dataset and its images into WebDataset tar shards.

    python3 jsonl_to_webdataset.py INPUT.jsonl IMAGE_ROOT OUT_DIR
        [--samples-per-shard N] [--stride K] [--png-every M]

Sample n (of the kept records, in order) is keyed "%08d" % n and written to
OUT_DIR/shard-%06d.tar as the members webdataset writes: KEY.json (the record) and its images,
KEY.jpg for one image, KEY.0.jpg, KEY.1.png, ... for several. Even samples name their images in
the record by member extension ("image": "jpg", "images": ["0.jpg", "1.png"]); odd ones drop the
record's image fields, so the reader takes the sample's image members in order: both ways are
tested. With --png-every M, the images of every M-th image sample are re-encoded as PNG from
Pillow's decode of the JPEG, so shards hold JPEG and PNG members.

OUT_DIR/mirror.jsonl holds the same records as the shards with image paths relative to
OUT_DIR/images/ (links to the original JPEGs, and the PNG files), so a JSON Lines run of exactly
the shards' contents can be compared with the tar run. Shards are written as temporary files and
renamed; tar headers carry no time, user or group, so the output is the same on every run.
"""

import argparse
import io
import json
import os
import tarfile

from PIL import Image

from jsonl_records import records


def image_paths(record):
    if record.get("image") is not None:
        return [record["image"]]
    return list(record.get("images") or [])


def add_member(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 0
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def png_bytes(jpeg_path):
    with Image.open(jpeg_path) as image:
        out = io.BytesIO()
        image.convert("RGB").save(out, format="PNG")
        return out.getvalue()


class ShardWriter:
    def __init__(self, out_dir, per_shard):
        self.out_dir = out_dir
        self.per_shard = per_shard
        self.shard = -1
        self.count = 0
        self.tar = None
        self.temporary = None

    def start_sample(self):
        if self.tar is None or self.count == self.per_shard:
            self.close()
            self.shard += 1
            self.count = 0
            self.temporary = os.path.join(self.out_dir, f".shard-{self.shard:06d}.tar.tmp")
            self.tar = tarfile.open(self.temporary, "w", format=tarfile.USTAR_FORMAT)
        self.count += 1
        return self.tar

    def close(self):
        if self.tar is not None:
            self.tar.close()
            os.replace(self.temporary, os.path.join(self.out_dir, f"shard-{self.shard:06d}.tar"))
            self.tar = None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", help="JSON Lines file")
    parser.add_argument("image_root", help="directory the records' image paths are relative to")
    parser.add_argument("out_dir", help="directory for the shards, mirror.jsonl and images/")
    parser.add_argument("--samples-per-shard", type=int, default=1000)
    parser.add_argument("--stride", type=int, default=1, help="keep every K-th record")
    parser.add_argument("--png-every", type=int, default=0,
                        help="re-encode every M-th image sample's images as PNG (0: never)")
    args = parser.parse_args()
    if args.stride < 1 or args.samples_per_shard < 1 or args.png_every < 0:
        parser.error("--stride and --samples-per-shard must be at least 1, --png-every at least 0")

    images_dir = os.path.join(args.out_dir, "images")
    os.makedirs(images_dir, exist_ok=True)
    for name in os.listdir(args.out_dir):
        if name.startswith("shard-") and name.endswith(".tar"):
            os.unlink(os.path.join(args.out_dir, name))
    writer = ShardWriter(args.out_dir, args.samples_per_shard)
    image_samples = 0
    png_members = 0
    samples = 0
    mirror_path = os.path.join(args.out_dir, "mirror.jsonl")
    with open(mirror_path + ".tmp", "w", encoding="utf-8") as mirror:
        for n, record in enumerate(records(args.input, args.stride)):
            key = f"{n:08d}"
            paths = image_paths(record)
            as_png = bool(paths) and args.png_every > 0 and image_samples % args.png_every == 0
            image_samples += bool(paths)
            members = []
            mirrored = []
            for i, path in enumerate(paths):
                source = os.path.join(args.image_root, path)
                extension = "png" if as_png else os.path.splitext(path)[1].lstrip(".").lower()
                member = extension if len(paths) == 1 else f"{i}.{extension}"
                if as_png:
                    data = png_bytes(source)
                    png_members += 1
                else:
                    with open(source, "rb") as image:
                        data = image.read()
                members.append((member, data))
                copy = f"{key}.{member}"
                target = os.path.join(images_dir, copy)
                if os.path.lexists(target):
                    os.unlink(target)
                if as_png:
                    with open(target, "wb") as out:
                        out.write(data)
                else:
                    os.symlink(os.path.abspath(source), target)
                mirrored.append(copy)
            in_tar = {k: v for k, v in record.items() if k not in ("image", "images")}
            if paths and n % 2 == 0:
                if len(paths) == 1:
                    in_tar["image"] = members[0][0]
                else:
                    in_tar["images"] = [member for member, _ in members]
            tar = writer.start_sample()
            add_member(tar, f"{key}.json", json.dumps(in_tar, ensure_ascii=False).encode("utf-8"))
            for member, data in members:
                add_member(tar, f"{key}.{member}", data)
            in_mirror = {k: v for k, v in record.items() if k not in ("image", "images")}
            if len(mirrored) == 1:
                in_mirror["image"] = mirrored[0]
            elif mirrored:
                in_mirror["images"] = mirrored
            mirror.write(json.dumps(in_mirror, ensure_ascii=False) + "\n")
            samples += 1
    writer.close()
    os.replace(mirror_path + ".tmp", mirror_path)
    print(f"{args.out_dir}: {samples} samples in {writer.shard + 1} shards "
          f"({image_samples} with images, {png_members} PNG members) from {args.input}")


if __name__ == "__main__":
    main()
