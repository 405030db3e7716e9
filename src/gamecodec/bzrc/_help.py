"""bzrflag's help texts (facts about the real program, kept as data).

bzrflag (``github:ricksmt/BZRFlag`` at ``37eb537``, ``bzrflag/server.py``,
``Handler.bzrc_help``, lines 207-229) answers ``help <command>`` with
``":%s\\n" % docstring.strip()`` and a bare ``help`` with one
``":<first docstring line>"`` line per ``bzrc_*`` method that has a
docstring, in ``dir()`` (sorted) order. Each text below is those bytes, one
string per line (without its ``\\n``), indentation exactly as the docstrings
have it. :class:`~gamecodec.bzrc.ServerSession` answers ``help`` from them.
"""

from __future__ import annotations

__all__ = ["LISTING", "TOPICS", "UNDOCUMENTED", "UNDOCUMENTED_FAIL", "unknown_fail"]

TOPICS: dict[str, tuple[str, ...]] = {
    "angvel": (
        ":angvel [tankid] [angular_velocity]",
        "",
        "        Sets the angular velocity of the tank.",
        "",
        "        The parameter is given as a multiple of maximum possible angular",
        "        velocity (1 is full speed), where positive values indicate counter-",
        "        clockwise motion, and negative values indicate clockwise motion. The",
        "        sign is consistent with the convention use in angles in the circle.",
        '        Returns a boolean ("ok" or "fail" as described under shoot).',
    ),
    "bases": (
        ":bases",
        "",
        "        Request a list of bases.",
        "",
        "        The response is a list, whose elements are of the form:",
        "            base [team color] [x1] [y1] [x2] [y2] ...",
        "        where (x1, y1), (x2, y2), etc. are the corners of the base in counter-",
        "        clockwise order and team color is the name of the owning team.",
    ),
    "constants": (
        ":constants",
        "",
        "        Request a list of constants.",
        "",
        "        These constants define the rules of the game and the behavior of the",
        "        world. The response is a list:",
        "            constant [name] [value]",
        "        Name is a string. Value may be a number or a string. Boolean values",
        "        are 0 or 1.",
    ),
    "flags": (
        ":flags",
        "",
        "        Request a list of visible flags.",
        "",
        "        The response is a list of flag elements:",
        "            flag [team color] [possessing team color] [x] [y]",
        "        The team color is the color of the owning team, and the possessing",
        "        team color is the color of the team holding the flag. If no tanks are",
        '        carrying the flag, the possessing team is "none". The coordinate',
        "        (x, y) is the current position of the flag. Note that the list may be",
        "        incomplete if visibility is limited.",
    ),
    "help": (
        ":help [command]",
        "",
        "        If no command is given, list the commands.  Otherwise, return specific",
        "        help for a command.",
    ),
    "mytanks": (
        ":mytanks",
        "",
        "        Request the status of the tanks controlled by this connection.",
        "",
        "        The response is a list of tanks:",
        "            mytank [index] [callsign] [status] [shots available]",
        "                [time to reload] [flag] [x] [y] [angle] [vx] [vy] [angvel]",
        "        Index is the 0 based index identifying this tank. This index is used",
        "        for instructions. The callsign is the tank's unique identifier within",
        '        the game. The status is a string like "alive," "dead," etc. Shots',
        "        available is the number of shots remaining before a reload delay. Flag",
        '        is the color/name of the flag being held, or "-" if none is held. The',
        "        coordinate (x, y) is the current position. Angle is the direction the",
        "        tank is pointed, between negative pi and pi. The vector (vx, vy) is",
        "        the current velocity of the tank, and angvel is the current angular",
        "        velocity of the tank (in radians per second).",
    ),
    "obstacles": (
        ":obstacles",
        "",
        "        Request a list of obstacles.",
        "",
        "        The response is a list, whose elements are of the form:",
        "            obstacle [x1] [y1] [x2] [y2] ...",
        "        where (x1, y1), (x2, y2), etc. are the corners of the obstacle in",
        "        counter-clockwise order.",
    ),
    "occgrid": (
        ":occgrid [tankid]",
        "",
        "        Request an occupancy grid.",
        "",
        "        Looks like:",
        "            100,430|20,20|####",
        "        #### = encoded 01 string",
    ),
    "othertanks": (
        ":othertanks",
        "",
        "        Request the status of other tanks in the game (those not",
        "        controlled by this connection.",
        "",
        "        The response is a list of tanks:",
        "            othertank [callsign] [color] [status] [flag] [x] [y] [angle]",
        "        where callsign, status, flag, x, y, and angle are as described under",
        "        mytanks and color is the name of the team color.",
    ),
    "quit": (
        ":quit",
        "",
        "        Disconnects the session.",
        "",
        "        This is technically an extension to the BZRC protocol.  We should",
        "        really backport this to BZFlag.",
    ),
    "scores": (
        ":scores",
        "",
        "        Request the scores of all teams.  The response is a list of scores,",
        "        one for each team pair:",
        "            score [team_i] [team_j] [score]",
        "",
        "        Notice that a team generates no score when compared against itself.",
    ),
    "shoot": (
        ":shoot [tankid]",
        "",
        "        Request the tank indexed by the given parameter to fire a shot.",
        "",
        "        Returns either:",
        "            ok [comment]",
        "        or:",
        "            fail [comment]",
        "        where the comment is optional.",
    ),
    "shots": (
        ":shots",
        "",
        "        Reports a list of shots.",
        "",
        "        The response is a list of shot lines:",
        "            shot [x] [y] [vx] [vy]",
        "        where (c, y) is the current position of the shot and (vx, vy) is the",
        "        current velocity.",
    ),
    "speed": (
        ":speed [tankid] [speed]",
        "",
        "        Request the tank to accelerate as quickly as possible to the",
        "        specified speed.",
        "",
        "        The speed is given as a multiple of maximum possible speed (1 is full",
        "        speed). A negative parameter will cause the tank to go in reverse.",
        '        Returns a boolean ("ok" or "fail" as described under shoot).',
        "",
        "        Mock objects needed?",
        "        >>> args = ['speed', '1', '1']",
        "        >>> Handler.bzrc_speed(Handler(), args)",
        "        fail",
    ),
    "teams": (
        ":teams",
        "        Request a list of teams.",
        "",
        "        The response will be a list, whose elements are of the form:",
        "            team [color] [playercount]",
        "        Color is the identifying team color/team name. Playercount is the",
        "        number of tanks on the team.",
    ),
    "timer": (
        ":timer",
        "",
        "        Requests how much time has passed and what time limit exists.",
        "",
        "            timer [time elapsed] [time limit]",
        "",
        "        Time elapsed is the number of seconds that the server has been alive,",
        "        while time limit is the given limit. Once the limit is reached, the",
        "        server will stop updating the game.",
    ),
}
"""``help <name>``: the lines bzrflag sends, in order."""

LISTING: tuple[str, ...] = (
    ":angvel [tankid] [angular_velocity]",
    ":bases",
    ":constants",
    ":flags",
    ":help [command]",
    ":mytanks",
    ":obstacles",
    ":occgrid [tankid]",
    ":othertanks",
    ":quit",
    ":scores",
    ":shoot [tankid]",
    ":shots",
    ":speed [tankid] [speed]",
    ":teams",
    ":timer",
)
"""Bare ``help``: one line per documented command (``taunt`` and ``endgame`` have no docstring)."""

UNDOCUMENTED: frozenset[str] = frozenset({"endgame", "taunt"})
"""Commands bzrflag has without a docstring (``bzrc_endgame``, ``bzrc_taunt``):
not listed, and ``help`` of one fails (:data:`UNDOCUMENTED_FAIL`)."""

UNDOCUMENTED_FAIL = "fail 'NoneType' object has no attribute 'strip'"
"""``help taunt`` / ``help endgame``: ``None.strip()`` raises, and the server's
exception handler (``found_terminator``, ``server.py:155-166``) sends
``fail <message>`` without an ack (in GUI mode; ``--test`` mode sends nothing)."""


def unknown_fail(name: str) -> str:
    """``help <name>`` for a command bzrflag does not have: an ack-less ``fail``."""
    return f'fail invalid command "{name}"'
