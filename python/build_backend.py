"""A PEP 517 build backend for memplan's Python package, the standard library alone.

build_wheel configures the checkout this folder belongs to (``..``) in its build folder (the
environment's MEMPLAN_BUILD_DIR, default ``../build``, the quick start's) with MEMPLAN_PYTHON=ON
for the Python that runs pip, builds only the module's target, and zips <build>/python/memplan/
(the .py files and _core*.so) with its .dist-info. A folder configured before keeps its other
settings; a new one is a Release build without tests.
"""

import base64
import hashlib
import os
import re
import subprocess
import sys
import sysconfig
import zipfile

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)
_NAME = "memplan"


def _version():
    with open(os.path.join(_ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        found = re.search(r"project\(memplan VERSION ([0-9.]+)", f.read())
    if not found:
        raise RuntimeError(f"memplan: {_ROOT}/CMakeLists.txt names no memplan version (not a memplan checkout?)")
    return found.group(1)


def _build_module():
    build = os.path.abspath(os.environ.get("MEMPLAN_BUILD_DIR") or os.path.join(_ROOT, "build"))
    configure = ["cmake", "-S", _ROOT, "-B", build, "-DMEMPLAN_PYTHON=ON", f"-DPython_EXECUTABLE={sys.executable}"]
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        configure += ["-DCMAKE_BUILD_TYPE=Release", "-DMEMPLAN_TESTS=OFF"]
    subprocess.run(configure, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", build, "--target", "memplan_python", "-j", str(os.cpu_count() or 1)],
                   check=True)
    return os.path.join(build, "python", _NAME)


def _tag():
    interpreter = f"{sys.implementation.name[:2]}{sys.version_info.major}{sys.version_info.minor}"
    platform = re.sub(r"[-.]", "_", sysconfig.get_platform())
    return f"{interpreter}-{interpreter}-{platform}"


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    package = _build_module()
    tag = _tag()
    dist_info = f"{_NAME}-{version}.dist-info"
    files = []
    for name in sorted(os.listdir(package)):
        if name.endswith(".py") or (name.startswith("_core") and name.endswith(".so")):
            with open(os.path.join(package, name), "rb") as f:
                files.append((f"{_NAME}/{name}", f.read()))
    if not any(path.endswith(".so") for path, _ in files):
        raise RuntimeError(f"memplan: no extension module in {package} after the build")
    files.append((f"{dist_info}/METADATA", (
        "Metadata-Version: 2.1\n"
        f"Name: {_NAME}\n"
        f"Version: {version}\n"
        "Summary: Will this fit? Memory planning for training and inference (memplan's command line from Python)\n"
        "Requires-Python: >=3.8\n").encode()))
    files.append((f"{dist_info}/WHEEL", (
        "Wheel-Version: 1.0\n"
        "Generator: memplan build_backend.py\n"
        "Root-Is-Purelib: false\n"
        f"Tag: {tag}\n").encode()))
    files.append((f"{dist_info}/top_level.txt", f"{_NAME}\n".encode()))
    record = [_record_line(path, data) for path, data in files] + [f"{dist_info}/RECORD,,"]
    files.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    wheel = f"{_NAME}-{version}-{tag}.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files:
            z.writestr(path, data)
    return wheel


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_sdist(sdist_directory, config_settings=None):
    raise RuntimeError("memplan: the Python package builds from a checkout (pip install ./python); no sdist")
