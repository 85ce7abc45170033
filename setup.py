"""Builds odbatch's native module (odbatch._odbatch) and its CLI (odbatch/_bin/odbatch, run by the
`odbatch` console script) with the project's CMake build, for `pip install --no-build-isolation .`
and `python3 -m build --wheel --no-isolation` (pyproject.toml has the metadata), and bundles the
shared libraries they need beyond the C and C++ runtimes (bundle_libraries.py).

ODBATCH_BUILD_DIR names an already configured build tree to build them in (only they are compiled
there; a tree built already is packaged as it is); otherwise build-python/ is configured without
tests, and without CUDA unless ODBATCH_WITH_CUDA=ON. Progress goes to stderr, which pip shows with
`pip install -v`."""

import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "python"))
import bundle_libraries  # noqa: E402 (beside the package's sources, not part of it)


def progress(message):
    print(f"odbatch build: {message}", file=sys.stderr, flush=True)


def run(command):
    progress("$ " + " ".join(command))
    subprocess.run(command, check=True)


def copy_stripped(source, target):
    """The file without its debug sections (a RelWithDebInfo tree's are ~95% of it)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    subprocess.run(["strip", "--strip-debug", str(target)], check=True)
    os.chmod(target, 0o755)


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        given = os.environ.get("ODBATCH_BUILD_DIR")
        build_dir = Path(given).resolve() if given else ROOT / "build-python"
        start = time.monotonic()
        if not given:
            cuda = os.environ.get("ODBATCH_WITH_CUDA", "OFF")
            progress(f"configuring {build_dir} (CUDA {cuda}); a first build compiles the whole "
                     "project, minutes on a few cores")
            run(["cmake", "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja",
                 "-DCMAKE_BUILD_TYPE=Release", "-DODBATCH_BUILD_TESTS=OFF",
                 f"-DODBATCH_WITH_CUDA={cuda}", f"-DPython3_EXECUTABLE={sys.executable}"])
        progress(f"building the module and the CLI in {build_dir} (Ninja's [done/total] lines follow)")
        run(["cmake", "--build", str(build_dir), "--target", "odbatch_python", "odbatch"])
        built = build_dir / "python" / "odbatch" / ("_odbatch" + sysconfig.get_config_var("EXT_SUFFIX"))
        if not built.exists():
            raise RuntimeError(f"{built} was not built: the build tree's Python is not {sys.executable}'s")
        target = Path(self.get_ext_fullpath(ext.name))
        cli = target.parent / "_bin" / "odbatch"
        copy_stripped(built, target)
        copy_stripped(build_dir / "odbatch", cli)
        bundle_libraries.bundle(target.parent, [target, cli], progress)
        progress(f"done in {time.monotonic() - start:.0f} s")


# The package layout lives here rather than in pyproject.toml's [tool.setuptools], which
# Debian's setuptools warns is beta.
setup(
    package_dir={"": "python"},
    packages=["odbatch"],
    package_data={"odbatch": ["*.pyi", "py.typed"]},  # type stubs, for IDEs and type checkers
    ext_modules=[CMakeExtension("odbatch._odbatch")],
    cmdclass={"build_ext": CMakeBuild},
    # Clear of CMake's build/ tree.
    options={"build": {"build_base": str(ROOT / "build-python" / "setuptools")}},
)
