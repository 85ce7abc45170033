"""The package as pip and wheel users get it, made from the build tree's artefacts
(ODBATCH_BUILD_DIR, so nothing is compiled again): `pip install -v .` shows the build's progress
and installs the `odbatch` command; the wheel, installed with --no-index into a fresh virtual
environment, runs an epoch (text and images) loading no shared library from outside the package
but the C and C++ runtimes (and what the interpreter and numpy had loaded before)."""

import json
import os
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from support import ScratchTestCase, records

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
from bundle_libraries import is_system  # noqa: E402

BUILD_DIR = os.environ.get("ODBATCH_BUILD_DIR")
PYTHON = "/usr/bin/python3"  # Debian's, whose numpy the environments see

EPOCH = """
import json, sys
import numpy

def mapped():
    with open("/proc/self/maps") as maps:
        return {line.split()[-1] for line in maps if ".so" in line.split()[-1]}

before = mapped()
import odbatch
pipe = odbatch.Pipeline(sys.argv[1])
steps = sum(1 for _ in pipe)
print(json.dumps({"package": odbatch.__file__, "steps": steps, "loaded": sorted(mapped() - before)}))
"""


def environment():
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
    env["ODBATCH_BUILD_DIR"] = BUILD_DIR
    return env


def run(command, **kwargs):
    done = subprocess.run(command, env=environment(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, **kwargs)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, command))} exited {done.returncode}:\n{done.stdout}")
    return done.stdout


def venv(directory):
    run([PYTHON, "-m", "venv", "--system-site-packages", str(directory)])
    return directory / "bin"


@unittest.skipUnless(BUILD_DIR, "needs ODBATCH_BUILD_DIR, a built tree (ctest sets it)")
class WheelTest(ScratchTestCase):
    @classmethod
    def setUpClass(cls):
        cls._dist = tempfile.TemporaryDirectory(prefix="odbatch-wheel-")
        start = time.monotonic()
        run([PYTHON, "-m", "build", "--wheel", "--no-isolation", "--outdir", cls._dist.name, str(ROOT)])
        (cls.wheel,) = Path(cls._dist.name).glob("odbatch-*.whl")
        print(f"\nwheel: {cls.wheel.name}, {cls.wheel.stat().st_size / 2**20:.1f} MiB, built in "
              f"{time.monotonic() - start:.1f} s", file=sys.stderr)

    @classmethod
    def tearDownClass(cls):
        cls._dist.cleanup()

    def test_the_wheel_runs_an_epoch_on_its_bundled_libraries(self):
        bin_dir = venv(self.dir / "venv")
        start = time.monotonic()
        run([bin_dir / "pip", "install", "--no-index", "--quiet", self.wheel])
        print(f"wheel installed in {time.monotonic() - start:.1f} s", file=sys.stderr)
        self.assertEqual(run([bin_dir / "odbatch", "--version"]).strip(), "odbatch 0.1.0")

        config = self.write_config(records(text=200, images=20))
        report = json.loads(run([bin_dir / "python", "-c", EPOCH, config], cwd=self.dir).splitlines()[-1])
        package = Path(report["package"]).parent
        self.assertTrue(package.is_relative_to(self.dir / "venv"), report["package"])
        self.assertGreater(report["steps"], 0)
        outside = [lib for lib in report["loaded"]
                   if not Path(lib).is_relative_to(package) and not is_system(Path(lib).name)]
        self.assertEqual(outside, [], "libraries loaded from outside the package")
        self.assertTrue(any("/_libs/libcaf_core-" in lib for lib in report["loaded"]), report["loaded"])

        # The CLI and every bundled library resolve their libraries the same way.
        for native in [package / "_bin/odbatch", *package.glob("_odbatch*.so"), *package.glob("_libs/*")]:
            for line in run(["ldd", native]).splitlines():
                self.assertNotIn("not found", line, native)
                if "=>" in line and not is_system(line.split()[0]):
                    resolved = Path(os.path.normpath(line.split("=>")[1].split()[0]))
                    self.assertTrue(resolved.is_relative_to(package / "_libs"), f"{native}: {line}")

    def test_pip_install_shows_progress_and_installs_the_command(self):
        bin_dir = venv(self.dir / "venv")
        output = run([bin_dir / "pip", "install", "-v", "--no-build-isolation", "--no-index", str(ROOT)])
        self.assertIn("odbatch build: building the module and the CLI in", output)
        self.assertRegex(output, r"odbatch build: bundled \d+ libraries")
        self.assertIn("odbatch build: done in", output)
        self.assertEqual(run([bin_dir / "odbatch", "--version"]).strip(), "odbatch 0.1.0")


if __name__ == "__main__":
    unittest.main()
