"""Builds odbatch's native module (odbatch._odbatch) with the project's CMake build, for
`pip install --no-build-isolation .` (pyproject.toml has the metadata).

ODBATCH_BUILD_DIR names an already configured build tree to build the module in (only the module
is compiled there); otherwise build-python/ is configured without tests and CUDA."""

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        given = os.environ.get("ODBATCH_BUILD_DIR")
        build_dir = Path(given).resolve() if given else ROOT / "build-python"
        if not given:
            subprocess.run(
                ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja",
                 "-DCMAKE_BUILD_TYPE=Release", "-DODBATCH_BUILD_TESTS=OFF",
                 "-DODBATCH_WITH_CUDA=OFF", f"-DPython3_EXECUTABLE={sys.executable}"],
                check=True,
            )
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "odbatch_python"], check=True)
        built = build_dir / "python" / "odbatch" / ("_odbatch" + sysconfig.get_config_var("EXT_SUFFIX"))
        if not built.exists():
            raise RuntimeError(f"{built} was not built: the build tree's Python is not {sys.executable}'s")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(
    ext_modules=[CMakeExtension("odbatch._odbatch")],
    cmdclass={"build_ext": CMakeBuild},
    # Clear of CMake's build/ tree.
    options={"build": {"build_base": str(ROOT / "build-python" / "setuptools")}},
)
