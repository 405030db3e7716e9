"""The list of compiled extensions; everything else is in pyproject.toml.

GAMECODEC_NO_EXTENSIONS=1: build a pure-Python install (no compiler needed).
GAMECODEC_REQUIRE_EXTENSIONS=1: fail the build if an extension cannot be
compiled (CI and cibuildwheel set it, so a wheel is never silently pure).
GAMECODEC_PGO=0: build the LLUDP extensions without profile-guided
optimisation (see :class:`PgoBuildExt`; it is on wherever the compiler is GCC >= 10).
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

NO_EXTENSIONS = bool(os.environ.get("GAMECODEC_NO_EXTENSIONS"))
REQUIRE_EXTENSIONS = os.environ.get("GAMECODEC_REQUIRE_EXTENSIONS") == "1"

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

# Profile-guided: the LLUDP circuit runs encode and decode interleaved and is
# bound by instruction-cache misses; GCC's PGO lays hot and cold code apart.
PGO_EXTENSIONS = ("gamecodec.lludp._codec_c", "gamecodec.lludp._circuit_c")
PGO_TRAINING = Path(__file__).resolve().parent / "tools" / "pgo_lludp.py"
PGO_TIMEOUT = 600  # seconds for the training run, so a build never hangs on it
PGO_MIN_GCC = 10  # -fprofile-partial-training


class PgoBuildExt(build_ext):
    """``build_ext`` with a profile-guided (GCC PGO) build of :data:`PGO_EXTENSIONS`.

    The other extensions build as usual; those two are deferred to the end and
    built three times: instrumented (``-fprofile-generate``), then trained
    by running ``tools/pgo_lludp.py`` in a subprocess against a staging copy
    of the package (the pure sources plus the instrumented builds, so it works
    for in-place, editable and wheel builds alike), then rebuilt with
    ``-fprofile-use``. Off unless the compiler is GCC >= 10 on a non-Windows
    platform, and off with ``GAMECODEC_PGO=0``. Any failure on the way prints
    a warning and builds them normally: PGO never fails a build and never
    leaves an instrumented module behind.
    """

    def build_extensions(self) -> None:
        self._deferred: list[Extension] = []
        self._pgo = self._pgo_wanted()
        super().build_extensions()
        if self._deferred:
            self._build_pgo(self._deferred)

    def build_extension(self, ext: Extension) -> None:
        if self._pgo and ext.name in PGO_EXTENSIONS and self._needs_build(ext):
            self._deferred.append(ext)
            return
        super().build_extension(ext)

    def _needs_build(self, ext: Extension) -> bool:
        """As ``build_ext`` decides: forced, or a source newer than the module."""
        target = Path(self.get_ext_fullpath(ext.name))
        if self.force or not target.exists():
            return True
        built = target.stat().st_mtime
        return any(Path(dep).stat().st_mtime > built for dep in [*ext.sources, *ext.depends])

    def _pgo_wanted(self) -> bool:
        """PGO is on: GAMECODEC_PGO is not "0" and the compiler is GCC >= 10."""
        if os.environ.get("GAMECODEC_PGO") == "0" or sys.platform == "win32":
            return False
        if self.compiler.compiler_type != "unix":
            return False
        try:
            macros = subprocess.run(
                [*self.compiler.compiler_so, "-dM", "-E", "-x", "c", os.devnull],
                capture_output=True,
                text=True,
                check=True,
                timeout=60,
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return False
        found = dict(line.split(" ", 2)[1:] for line in macros.splitlines() if line.count(" ") >= 2)
        if "__clang__" in found or "__GNUC__" not in found:
            return False
        if int(found["__GNUC__"]) < PGO_MIN_GCC:
            self.warn(f"GCC {found['__GNUC__']} is too old for the LLUDP PGO build; plain build")
            return False
        return True

    def _build_pgo(self, exts: list[Extension]) -> None:
        """Instrumented build, training run, optimised rebuild; else a plain build."""
        profile = tempfile.mkdtemp(prefix="gamecodec-pgo-")
        force = self.force
        self.force = True  # each phase rebuilds over the previous one
        try:
            try:
                self._build_with(exts, [f"-fprofile-generate={profile}", "-fprofile-update=single"])
                self._train(exts, profile)
                self._build_with(
                    exts,
                    [f"-fprofile-use={profile}", "-fprofile-partial-training"],
                    ("-Wno-missing-profile",),
                )
            except Exception as exc:  # any failure: the plain build, as without PGO
                self.warn(f"LLUDP PGO build failed ({exc}); building them without PGO")
                for ext in exts:
                    Path(self.get_ext_fullpath(ext.name)).unlink(missing_ok=True)
                    try:
                        super().build_extension(ext)
                    except Exception as plain_exc:
                        if not ext.optional:
                            raise
                        self.warn(f'building extension "{ext.name}" failed: {plain_exc}')
            else:
                print(f"built {', '.join(e.name for e in exts)} with PGO", file=sys.stderr)
        finally:
            self.force = force
            shutil.rmtree(profile, ignore_errors=True)

    def _build_with(
        self, exts: list[Extension], flags: list[str], compile_only: tuple[str, ...] = ()
    ) -> None:
        """Build ``exts`` with ``flags`` added to compile and link (and
        ``compile_only`` to compile), leaving their own arguments as they were."""
        for ext in exts:
            compile_args, link_args = ext.extra_compile_args, ext.extra_link_args
            ext.extra_compile_args = [*compile_args, *flags, *compile_only]
            ext.extra_link_args = [*link_args, *flags]
            try:
                super().build_extension(ext)
            finally:
                ext.extra_compile_args, ext.extra_link_args = compile_args, link_args

    def _train(self, exts: list[Extension], profile: str) -> None:
        """Run the training workload on the instrumented builds, in a staging copy."""
        if not PGO_TRAINING.exists():
            raise RuntimeError(f"{PGO_TRAINING} is missing")
        with tempfile.TemporaryDirectory(prefix="gamecodec-pgo-stage-") as stage:
            shutil.copytree(
                SRC / "gamecodec",
                Path(stage, "gamecodec"),
                ignore=shutil.ignore_patterns("*.so", "*.pyd", "*.c", "*.html", "__pycache__"),
            )
            for ext in exts:
                shutil.copy2(
                    self.get_ext_fullpath(ext.name), Path(stage, self.get_ext_filename(ext.name))
                )
            # -I: no PYTHONPATH, no user site; the staged package comes first on sys.path
            # and must be the one imported (not an installed gamecodec).
            runner = (
                "import runpy, sys; stage, script = sys.argv[1:]; sys.path.insert(0, stage)\n"
                "from gamecodec.lludp import _circuit_c, _codec_c\n"
                "for m in (_circuit_c, _codec_c):\n"
                "    assert m.__file__.startswith(stage), f'{m.__file__} is not the staged build'\n"
                "sys.argv = [script]; runpy.run_path(script, run_name='__main__')\n"
            )
            done = subprocess.run(
                [sys.executable, "-I", "-c", runner, stage, str(PGO_TRAINING)],
                cwd=stage,
                check=False,
                capture_output=True,
                text=True,
                timeout=PGO_TIMEOUT,
            )
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise RuntimeError(f"the training run failed: {' | '.join(tail)}")
        if not any(Path(profile).rglob("*.gcda")):
            raise RuntimeError("the training run wrote no profile")
        print(done.stdout.strip(), file=sys.stderr)


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
            optional=not REQUIRE_EXTENSIONS,
            # the same float results as the pure twins (no fused multiply-add)
            extra_compile_args=[] if sys.platform == "win32" else ["-ffp-contract=off"],
        )
        for name, source in TWINS.items()
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


setup(ext_modules=extensions(), cmdclass={"build_ext": PgoBuildExt})
