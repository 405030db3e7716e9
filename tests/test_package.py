"""Package-level behaviour: implementation choice, the CLI, the README example."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
import sysconfig
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import gamecodec
from gamecodec import _accel, cli
from tests.conftest import IMPLS, ROOT


def _run(code: str, **env: str) -> str:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("GAMECODEC_")}
    environment.update(env)
    out = subprocess.run(
        [sys.executable, "-c", code], env=environment, check=True, capture_output=True, text=True
    )
    return out.stdout.strip()


def test_no_extensions_env_selects_pure() -> None:
    code = "import gamecodec; print(gamecodec.implementation()['avara'])"
    assert _run(code, GAMECODEC_NO_EXTENSIONS="1") == "py"


@pytest.mark.skipif("c" not in IMPLS, reason="compiled twins excluded")
def test_compiled_is_the_default() -> None:
    code = "import gamecodec; print(gamecodec.implementation()['avara'])"
    assert _run(code) == "c"


@pytest.mark.skipif("c" not in IMPLS, reason="compiled twins excluded")
@pytest.mark.parametrize("value", ["0", "", "false", "No", "OFF"])
def test_no_extensions_env_off_values_keep_compiled(value: str) -> None:
    code = "import gamecodec; print(gamecodec.implementation()['avara'])"
    assert _run(code, GAMECODEC_NO_EXTENSIONS=value) == "c"


def test_require_extensions_env_fails_without_compiled_twin() -> None:
    # a compiled twin that cannot be imported: an error with the variable set,
    # the pure twin without it
    code = (
        "import sys; sys.modules['gamecodec.avara._codec_c'] = None\n"
        "import gamecodec.avara, gamecodec; print(gamecodec.implementation()['avara'])"
    )
    assert _run(code, GAMECODEC_REQUIRE_EXTENSIONS="0") == "py"
    with pytest.raises(subprocess.CalledProcessError) as failed:
        _run(code, GAMECODEC_REQUIRE_EXTENSIONS="yes")
    assert "gamecodec.avara._codec_c" in failed.value.stderr.splitlines()[-1]
    # asking for the pure twins wins over requiring the compiled ones
    assert _run(code, GAMECODEC_REQUIRE_EXTENSIONS="1", GAMECODEC_NO_EXTENSIONS="1") == "py"


def _setup_env_flag() -> Callable[[str], bool]:
    """setup.py's env_flag, with the imports and constants it uses (importing
    setup.py would run setup() and needs setuptools)."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    wanted = [
        node
        for node in tree.body
        if isinstance(node, ast.Import)
        or (isinstance(node, ast.FunctionDef) and node.name == "env_flag")
        or (
            isinstance(node, ast.Assign)
            and all(isinstance(t, ast.Name) and t.id in {"_YES", "_NO"} for t in node.targets)
        )
    ]
    namespace: dict[str, Any] = {}
    exec(compile(ast.Module(body=wanted, type_ignores=[]), "setup.py", "exec"), namespace)
    env_flag: Callable[[str], bool] = namespace["env_flag"]
    return env_flag


FLAG_VALUES = {
    **dict.fromkeys(["1", "true", "TRUE", "yes", "Yes", "on", " on "], True),
    **dict.fromkeys(["", "0", "false", "False", "no", "off", "OFF"], False),
}


@pytest.mark.parametrize("side", ["setup.py", "_accel"])
def test_env_flag_values(side: str, monkeypatch: pytest.MonkeyPatch) -> None:
    env_flag: Callable[[str], bool] = _setup_env_flag() if side == "setup.py" else _accel.env_flag
    monkeypatch.delenv("GAMECODEC_TEST_FLAG", raising=False)
    assert env_flag("GAMECODEC_TEST_FLAG") is False
    for value, expected in FLAG_VALUES.items():
        monkeypatch.setenv("GAMECODEC_TEST_FLAG", value)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert env_flag("GAMECODEC_TEST_FLAG") is expected, value
    monkeypatch.setenv("GAMECODEC_TEST_FLAG", "2")
    with pytest.warns(RuntimeWarning, match="GAMECODEC_TEST_FLAG='2'"):
        assert env_flag("GAMECODEC_TEST_FLAG") is False


def test_public_api_is_the_active_twin() -> None:
    from gamecodec import avara

    impl = gamecodec.implementation()["avara"]
    assert avara.decode.__module__.endswith(f"_codec_{impl}")


def _readme_examples() -> list[Any]:
    spec = importlib.util.spec_from_file_location(
        "readme_examples", ROOT / "tools" / "readme_examples.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["readme_examples"] = module
    spec.loader.exec_module(module)
    return list(module.examples((ROOT / "README.md").read_text()))


README_EXAMPLES = _readme_examples()


def test_readme_has_an_example_per_protocol() -> None:
    text = (ROOT / "README.md").read_text()
    for name in ("Avara", "LLUDP", "Archipelago", "BZRC", "ywindow"):
        assert re.search(rf"^## {name}\n(?:(?!^## ).)*?```python", text, re.S | re.M), name


@pytest.mark.parametrize("example", README_EXAMPLES, ids=lambda e: f"line{e.line}")
def test_readme_examples_run(example: Any) -> None:
    """Each README example runs on its own, on the active twins."""
    exec(compile(example.code, "README.md", "exec"), {"__name__": "readme_example"})


def test_readme_has_both_commands() -> None:
    text = (ROOT / "README.md").read_text()
    assert "gamecodec bench" in text
    assert re.search(r"<!-- test-command -->\n```sh\n.*pytest.*\n```", text)


def test_cli_info_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["info", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["gamecodec"] == gamecodec.__version__
    # every protocol, plus the session twins listed as "<protocol>.<module>"
    assert set(gamecodec.PROTOCOLS) <= set(data["protocols"])
    assert {name.split(".")[0] for name in data["protocols"]} == set(gamecodec.PROTOCOLS)


def test_license_and_typing_marker() -> None:
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert (Path(gamecodec.__file__).parent / "py.typed").exists()


@pytest.mark.skipif(
    not sysconfig.get_config_var("Py_GIL_DISABLED"), reason="not a free-threaded Python"
)
@pytest.mark.skipif("c" not in IMPLS, reason="compiled twins excluded")
def test_compiled_twins_keep_the_gil_off_on_free_threaded_python() -> None:
    # an extension not marked free-threading compatible turns the GIL back on
    # at import, with a RuntimeWarning naming it
    code = (
        "import importlib, pathlib, sys, warnings\n"
        "warnings.simplefilter('error', RuntimeWarning)\n"
        "import gamecodec\n"
        "root = pathlib.Path(gamecodec.__file__).parent\n"
        "names = sorted({\n"
        "    '.'.join((*p.relative_to(root.parent).parent.parts, p.name.split('.')[0]))\n"
        "    for p in root.rglob('*_c.*') if p.suffix in ('.so', '.pyd')})\n"
        "import importlib.util\n"
        "if importlib.util.find_spec('msgspec') is None:  # 3.13t: no msgspec, no Archipelago\n"
        "    names = [n for n in names if not n.startswith('gamecodec.archipelago.')]\n"
        "for name in names:\n"
        "    importlib.import_module(name)\n"
        "from gamecodec import avara, lludp  # the sessions, loaded on first use\n"
        "avara.Connection(now=0.0), lludp.Circuit(now=0.0)\n"
        "assert not sys._is_gil_enabled()\n"
        "print(len(names))\n"
    )
    assert int(_run(code)) >= len(gamecodec.PROTOCOLS)


_NO_COMPILED = """
import sys
for name in ("gamecodec.avara._codec_c", "gamecodec.ywindow._codec_c"):
    sys.modules[name] = None  # as if built without a C compiler: the import fails
import gamecodec
from gamecodec import avara, ywindow
print(gamecodec.implementation()["avara"], gamecodec.implementation()["ywindow"])
"""


@pytest.mark.parametrize("no_extensions", ["", "1"])
def test_a_fallback_to_the_pure_twins_says_so_once(no_extensions: str) -> None:
    # pip hides a build's output: an install made without a C compiler ran the pure
    # twins without a word
    env = {
        **os.environ,
        "GAMECODEC_NO_EXTENSIONS": no_extensions,
        "GAMECODEC_REQUIRE_EXTENSIONS": "",
    }
    done = subprocess.run(
        [sys.executable, "-c", _NO_COMPILED], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.split() == ["py", "py"]
    if no_extensions:  # the pure twins chosen: nothing to tell
        assert done.stderr == ""
    else:
        (line,) = done.stderr.splitlines()
        assert line.startswith("gamecodec: the compiled twins are not installed")
        assert "(gamecodec.avara._" in line and "GAMECODEC_NO_EXTENSIONS=1" in line


def _public_modules() -> list[str]:
    # every module whose dotted name has no _-private part (a new one is covered)
    import pkgutil

    import gamecodec

    found = pkgutil.walk_packages(gamecodec.__path__, "gamecodec.")
    public = sorted(m.name for m in found if not any(p.startswith("_") for p in m.name.split(".")))
    return ["gamecodec", *public]


def test_the_public_modules_are_found() -> None:
    names = _public_modules()
    for expected in (
        "gamecodec.avara",
        "gamecodec.lludp.template",
        "gamecodec.archipelago.testing",
    ):
        assert expected in names
    assert "gamecodec.avara._session_py" not in names


@pytest.mark.parametrize("name", _public_modules())
def test_dir_of_a_public_module_is_its_api(name: str) -> None:
    # dir() listed Any, annotations (from __future__) and TYPE_CHECKING beside the API
    import importlib

    module = importlib.import_module(name)
    listed = dir(module)
    assert not {"Any", "annotations", "TYPE_CHECKING", "public_dir"} & set(listed)
    assert set(module.__all__) <= set(listed)
    assert all(hasattr(module, n) for n in listed)
    assert not [n for n in listed if n.startswith("_") and not n.startswith("__")]
    if name == "gamecodec":
        import gamecodec.avara  # noqa: F401

        assert "avara" in dir(module)  # an imported subpackage is listed
