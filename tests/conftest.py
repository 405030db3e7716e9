"""Shared fixtures: the ``impl`` fixture runs every codec test on both twins.

``[py]`` imports a module's pure twin, ``[c]`` its compiled twin directly, so
a build without extensions fails the suite instead of testing Python twice.
``GAMECODEC_TEST_IMPLS=py`` restricts the run to the pure twin (the CI job
that installs without extensions sets it).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

IMPLS = [name for name in os.environ.get("GAMECODEC_TEST_IMPLS", "py,c").split(",") if name]

ROOT = Path(__file__).resolve().parents[1]
_SPEC = importlib.util.find_spec("gamecodec")  # found, not imported
assert _SPEC is not None and _SPEC.origin is not None, "gamecodec is not importable"
PACKAGE_ROOT = Path(_SPEC.origin).resolve().parents[1]
"""Where the gamecodec under test lives: the checkout's src/, or site-packages for an
installed copy (subprocesses put it on PYTHONPATH to test the same code)."""
DATA = ROOT / "tests" / "data"
MYPYPATH = str(PACKAGE_ROOT) if PACKAGE_ROOT == ROOT / "src" else None
"""What mypy needs on MYPYPATH to see the gamecodec under test: the checkout's src/,
or nothing for an installed copy (mypy finds it in site-packages, and refuses
site-packages on MYPYPATH)."""
SHARED = Path(os.environ.get("GAMECODEC_SHARED", ROOT.parent / "shared"))


def load_twin(package: str, module: str, impl: str) -> ModuleType:
    """Import ``package.module_<impl>``; a missing compiled twin fails the test."""
    name = f"{package}.{module}_{impl}"
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        pytest.fail(f"cannot import {name}: {exc} (build the extensions: pip install -e .)")


def data_path(protocol: str, *parts: str) -> Path:
    """A recorded file of ``protocol``: ``tests/data/<protocol>/...`` (in the
    repository), else the developers' corpus ``../shared/corpus/<protocol>/...``;
    skips the test when neither has it."""
    for path in (DATA.joinpath(protocol, *parts), SHARED.joinpath("corpus", protocol, *parts)):
        if path.exists():
            return path
    pytest.skip(f"no {'/'.join((protocol, *parts))} in tests/data or {SHARED / 'corpus'}")


def shared_path(*parts: str) -> Path:
    """A path under ../shared; ``corpus/<protocol>/...`` is looked up with
    :func:`data_path` (tests/data first). Skips the test when it is not there."""
    if len(parts) >= 2 and parts[0] == "corpus":
        return data_path(*parts[1:])
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not present (../shared is not beside this checkout)")
    return path


@pytest.fixture(scope="session", params=IMPLS)
def impl(request: pytest.FixtureRequest) -> str:
    """``"py"`` or ``"c"``: which twin the test exercises."""
    return str(request.param)


def twin_fixtures(package: str, module: str = "_codec") -> tuple[Any, Any, Any]:
    """``(codec, py_codec, c_codec)`` fixtures for ``package.module_{py,c}``.

    ``codec`` is the twin under test (both, through ``impl``); ``py_codec``
    and ``c_codec`` are both twins at once, for the parity tests (a missing
    compiled twin fails them). A protocol's conftest binds them::

        codec, py_codec, c_codec = twin_fixtures("gamecodec.avara")
    """

    @pytest.fixture(scope="session", name="codec")
    def codec(impl: str) -> ModuleType:
        return load_twin(package, module, impl)

    @pytest.fixture(scope="session", name="py_codec")
    def py_codec() -> ModuleType:
        return load_twin(package, module, "py")

    @pytest.fixture(scope="session", name="c_codec")
    def c_codec() -> ModuleType:
        if "c" not in IMPLS:
            pytest.skip("GAMECODEC_TEST_IMPLS excludes the compiled twin")
        return load_twin(package, module, "c")

    return codec, py_codec, c_codec
