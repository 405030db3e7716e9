"""The list of compiled extensions; everything else is in pyproject.toml.

GAMECODEC_NO_EXTENSIONS=1: build a pure-Python install (no compiler needed).
GAMECODEC_REQUIRE_EXTENSIONS=1: fail the build if an extension cannot be
compiled (CI and cibuildwheel set it, so a wheel is never silently pure).
"""

import os
import sys
from pathlib import Path

from setuptools import Extension, setup

NO_EXTENSIONS = bool(os.environ.get("GAMECODEC_NO_EXTENSIONS"))
REQUIRE_EXTENSIONS = os.environ.get("GAMECODEC_REQUIRE_EXTENSIONS") == "1"

SRC = Path(__file__).resolve().parent / "src"
# Every compiled twin is a ``*_c.pyx`` beside its pure ``*_py.py``.
MODULES = sorted(
    ".".join(path.relative_to(SRC).with_suffix("").parts)
    for path in SRC.glob("gamecodec/**/*_c.pyx")
)


def extensions() -> list[Extension]:
    if NO_EXTENSIONS:
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        if REQUIRE_EXTENSIONS:
            raise
        return []
    exts = [
        Extension(
            name,
            [os.path.join("src", *name.split(".")) + ".pyx"],
            include_dirs=[os.path.join("src", "gamecodec")],  # _tuples.h
            optional=not REQUIRE_EXTENSIONS,
            # the same float results as the pure twins (no fused multiply-add)
            extra_compile_args=[] if sys.platform == "win32" else ["-ffp-contract=off"],
        )
        for name in MODULES
    ]
    try:
        return cythonize(
            exts,
            compiler_directives={
                "language_level": "3",
                "freethreading_compatible": True,
                "embedsignature": True,
            },
        )
    except Exception:
        if REQUIRE_EXTENSIONS:
            raise
        return []


setup(ext_modules=extensions())
