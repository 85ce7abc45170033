"""Makes a wheel's native files self-contained, as auditwheel does, from Debian's patchelf: every
shared library they load that is not part of the C and C++ runtimes is copied into the package's
_libs/ under a name of its own (so that a process which has already loaded another copy, e.g. by
torch, still gets this one), and the files' RUNPATHs point there, relative to $ORIGIN."""

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

# The C runtime (glibc) and GCC's C++ runtime: the interpreter and every other extension share
# them, and a second copy in one process breaks (two allocators, two sets of exception tables).
SYSTEM_LIBRARIES = re.compile(
    r"^(linux-vdso|ld-linux[-\w]*|libc|libm|libdl|librt|libpthread|libresolv|libutil|libnsl|"
    r"libanl|libstdc\+\+|libgcc_s)\.so[.\d]*$")

_LDD_LINE = re.compile(r"^\s*(\S+) => (\S+) \(0x[0-9a-f]+\)$")


def is_system(soname):
    return bool(SYSTEM_LIBRARIES.match(soname))


def _needed(path):
    out = subprocess.run(["patchelf", "--print-needed", str(path)], check=True,
                         capture_output=True, text=True).stdout
    return out.split()


def _resolved(path):
    """Every library `path` loads, directly or not, as ldd resolves it: soname -> file."""
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    out = subprocess.run(["ldd", str(path)], check=True, capture_output=True, text=True, env=env).stdout
    found = {}
    for line in out.splitlines():
        if "not found" in line:
            raise RuntimeError(f"{path}: {line.strip()}")
        match = _LDD_LINE.match(line)
        if match:
            found[match.group(1)] = Path(match.group(2))
    return found


def _bundled_name(soname, path):
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:8]
    stem, _, suffix = soname.partition(".so")
    return f"{stem}-{digest}.so{suffix}"


def bundle(package_dir, native_files, log):
    """Copies the non-system libraries of `native_files` (in `package_dir`) into
    `package_dir`/_libs and rewrites every native file's NEEDED entries and RUNPATH."""
    libs_dir = package_dir / "_libs"
    shutil.rmtree(libs_dir, ignore_errors=True)
    libs_dir.mkdir()
    sources = {}
    for native in native_files:
        sources.update({name: path for name, path in _resolved(native).items() if not is_system(name)})
    renamed = {name: _bundled_name(name, path) for name, path in sorted(sources.items())}
    for name, path in sorted(sources.items()):
        copy = libs_dir / renamed[name]
        shutil.copyfile(path, copy)
        os.chmod(copy, 0o755)
        _rewrite(copy, renamed, "$ORIGIN", soname=renamed[name])
    for native in native_files:
        origin = os.path.relpath(libs_dir, native.parent)
        _rewrite(native, renamed, "$ORIGIN" if origin == "." else f"$ORIGIN/{origin}")
    size = sum(f.stat().st_size for f in libs_dir.iterdir())
    log(f"bundled {len(renamed)} libraries ({size / 2**20:.1f} MiB) into {libs_dir}")
    return renamed


def _rewrite(path, renamed, runpath, soname=None):
    # One change a call: patchelf 0.14 mixes up NEEDED entries and their symbol versions when
    # --replace-needed shares a call with --set-rpath or --set-soname.
    replacements = []
    for needed in _needed(path):
        if needed in renamed:
            replacements += ["--replace-needed", needed, renamed[needed]]
    if replacements:
        subprocess.run(["patchelf", *replacements, str(path)], check=True)
    if soname:
        subprocess.run(["patchelf", "--set-soname", soname, str(path)], check=True)
    subprocess.run(["patchelf", "--set-rpath", runpath, str(path)], check=True)
