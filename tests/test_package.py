"""Package-level behaviour: implementation choice, the CLI, the README example."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import gamecodec
from gamecodec import cli
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


def test_public_api_is_the_active_twin() -> None:
    from gamecodec import avara

    impl = gamecodec.implementation()["avara"]
    assert avara.decode.__module__.endswith(f"_codec_{impl}")


@pytest.mark.parametrize("section", ["Avara", "LLUDP", "Archipelago", "BZRC", "ywindow"])
def test_readme_examples_run(section: str) -> None:
    text = (ROOT / "README.md").read_text()
    match = re.search(rf"## {section}\n\n```python\n(.*?)```", text, re.S)
    assert match, f"README has a {section} example"
    exec(compile(match.group(1), "README.md", "exec"), {})


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


def test_cli_decode(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["decode", "avara", "26081400"]) == 0
    assert "ack=20" in capsys.readouterr().out
    assert cli.main(["decode", "avara", "67891400040000101105"]) == 1
    assert "(at byte" in capsys.readouterr().err
    assert cli.main(["decode", "avara", "zz"]) == 2


def test_license_and_typing_marker() -> None:
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert (Path(gamecodec.__file__).parent / "py.typed").exists()


@pytest.mark.parametrize("section", ["Avara reliable connection", "LLUDP circuit"])
def test_readme_session_examples_run(section: str) -> None:
    text = (ROOT / "README.md").read_text()
    match = re.search(rf"### {section}.*?```python\n(.*?)```", text, re.S)
    assert match, f"README has the {section} example"
    exec(compile(match.group(1), "README.md", "exec"), {})
