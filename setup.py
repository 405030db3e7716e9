"""The list of compiled extensions; everything else is in pyproject.toml.

GAMECODEC_NO_EXTENSIONS=1: build a pure-Python install (no compiler needed).
GAMECODEC_REQUIRE_EXTENSIONS=1: fail the build if an extension cannot be
compiled (CI and cibuildwheel set it, so a wheel is never silently pure).
Each takes 1/true/yes/on for yes and 0/false/no/off or empty for no (any case);
gamecodec._accel reads the variables at run time the same way.
"""

import glob
import os
import sys
import warnings
from pathlib import Path

from setuptools import Extension, setup

_YES = frozenset({"1", "true", "yes", "on"})
_NO = frozenset({"", "0", "false", "no", "off"})


def env_flag(name: str) -> bool:
    """Read a yes/no environment variable (unset means no; an unknown value
    warns and means no). Keep in step with ``gamecodec._accel.env_flag``."""
    value = os.environ.get(name, "").strip().lower()
    if value not in _YES and value not in _NO:
        warnings.warn(
            f"{name}={value!r} is not one of 1/true/yes/on or 0/false/no/off: read as off",
            RuntimeWarning,
            stacklevel=2,
        )
    return value in _YES


NO_EXTENSIONS = env_flag("GAMECODEC_NO_EXTENSIONS")
REQUIRE_EXTENSIONS = env_flag("GAMECODEC_REQUIRE_EXTENSIONS")

SRC = Path(__file__).resolve().parent / "src"


def _twins() -> dict[str, str]:
    """Map each compiled twin's module name to its Cython source.

    A twin is either hand-written (``X_c.pyx`` beside the pure ``X_py.py``)
    or the pure source itself compiled (``X_c.pxd`` beside ``X_py.py`` and no
    ``X_c.pyx``: Cython's augmenting .pxd types the pure code, as aiohttp's
    ``reader_c.pxd`` does), so both twins run one source.
    """
    found = {}
    for path in SRC.glob("gamecodec/**/*_c.pyx"):
        found[path.with_suffix("")] = path
    for path in SRC.glob("gamecodec/**/*_c.pxd"):
        pure = path.with_name(path.name[: -len("_c.pxd")] + "_py.py")
        if path.with_suffix("") not in found and pure.exists():
            found[path.with_suffix("")] = pure
    return {
        ".".join(stem.relative_to(SRC).parts): str(source.relative_to(SRC.parent))
        for stem, source in sorted(found.items())
    }


TWINS = _twins()


def _drop_stale_c(twins: dict[str, str]) -> None:
    """Delete the generated C of a pure source whose augmenting ``X_c.pxd`` is
    newer: cythonize() compares the C with the ``.py`` only, and would keep
    C generated with the old types."""
    for source in twins.values():
        if not source.endswith("_py.py"):
            continue
        pure = SRC.parent / source
        pxd = pure.with_name(pure.name[: -len("_py.py")] + "_c.pxd")
        generated = pure.with_suffix(".c")
        if generated.exists() and pxd.stat().st_mtime > generated.stat().st_mtime:
            generated.unlink()


def _debug_requested() -> bool:
    """CFLAGS asks for debug info (say, a sanitizer build): keep it."""
    return any(
        flag.startswith("-g") and flag != "-g0" for flag in os.environ.get("CFLAGS", "").split()
    )


def _compile_args() -> list[str]:
    if sys.platform == "win32":
        return []
    # the same float results as the pure twins (no fused multiply-add)
    args = ["-ffp-contract=off"]
    if not _debug_requested():
        # Python's own CFLAGS carry -g: its DWARF made up over 80% of each .so
        args.append("-g0")
    return args


def _link_args() -> list[str]:
    if sys.platform == "win32" or _debug_requested():
        return []
    # strip what debug info the linked objects still hold (GNU ld and ld64 alike)
    return ["-Wl,-S"]


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
            [source],
            include_dirs=[os.path.join("src", "gamecodec")],  # _capi.h
            # a changed header rebuilds the modules that include it
            depends=sorted(
                glob.glob(os.path.join("src", "gamecodec", "*.h"))
                + glob.glob(os.path.join(os.path.dirname(source), "*.h"))
            ),
            optional=not REQUIRE_EXTENSIONS,
            extra_compile_args=_compile_args(),
            extra_link_args=_link_args(),
        )
        for name, source in TWINS.items()
    ]
    _drop_stale_c(TWINS)
    try:
        built = cythonize(
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
    # cythonize() makes new Extension objects without `optional`: without it a
    # machine with no C compiler could not install the pure package
    for ext in built:
        ext.optional = not REQUIRE_EXTENSIONS
    return built


setup(
    ext_modules=extensions(),
    # compile the extensions side by side (a -j/--parallel given to build_ext wins)
    options={"build_ext": {"parallel": min(len(TWINS), os.cpu_count() or 1)}},
)
