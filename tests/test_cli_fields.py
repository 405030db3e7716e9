"""``gamecodec fields lludp [NAME]``: the template's messages and fields (issue 35 item 6)."""

from __future__ import annotations

import pytest

from gamecodec.cli import main
from gamecodec.lludp import default_template, opensim_template


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(["fields", *argv]) == 0
    return capsys.readouterr().out.splitlines()


def test_one_message(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _run(capsys, "lludp", "ChatFromSimulator")
    assert lines == default_template()["ChatFromSimulator"].show().splitlines()
    assert lines[1] == "  ChatData  Single"
    assert "    Message     Variable 2    2-byte length, then the data" in lines


def test_every_message_of_either_template(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _run(capsys, "lludp")
    assert lines[0] == "<Template secondlife, version 2.0, 483 messages>"
    assert len(lines) == 1 + len(default_template())
    assert max(map(len, lines)) <= 100
    opensim = _run(capsys, "lludp", "--template", "opensim")
    assert opensim == opensim_template().show().splitlines()


def test_an_unknown_name_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["fields", "lludp", "ChatFromSimulatr"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "no message 'ChatFromSimulatr'" in err and "did you mean ChatFromSimulator" in err
