"""pip install ./python: the dlconv package, with its own copy of libdlconv when it can build one.

When this folder sits in the libdlconv source tree and meson and ninja are found, the shared
library is built (release, no tests, no bench) and shipped inside the package as
dlconv/_lib/libdlconv.so. DLCONV_PIP_BUILD=0 skips that: the package then loads the library
named by DLCONV_LIBRARY, or the installed one (see README, "Python API").
"""
import glob
import os
import shutil
import subprocess
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def build_library(dest):
    if os.environ.get("DLCONV_PIP_BUILD", "1") == "0":
        return False
    if not os.path.isfile(os.path.join(ROOT, "meson.build")) or not shutil.which("meson") or not shutil.which("ninja"):
        print("dlconv: no libdlconv source tree or no meson/ninja: the package will use an installed libdlconv")
        return False
    tmp = tempfile.mkdtemp(prefix="dlconv-pip-")
    try:
        subprocess.run(["meson", "setup", tmp, ROOT, "-Dbuildtype=release", "-Dtests=false", "-Dbench=false"],
                       check=True)
        subprocess.run(["meson", "compile", "-C", tmp, "dlconv:shared_library"], check=True)
        libs = [p for p in glob.glob(os.path.join(tmp, "libdlconv.so*"))
                if os.path.isfile(p) and not os.path.islink(p)]
        if not libs:
            return False
        os.makedirs(dest, exist_ok=True)
        shutil.copyfile(libs[0], os.path.join(dest, "libdlconv.so"))
        return True
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class BuildPy(build_py):
    def run(self):
        super().run()
        if build_library(os.path.join(self.build_lib, "dlconv", "_lib")):
            self.distribution.has_lib = True


class BinaryDistribution(Distribution):
    def has_ext_modules(self):  # a platform wheel: it may carry the shared library
        return True


setup(cmdclass={"build_py": BuildPy}, distclass=BinaryDistribution)
