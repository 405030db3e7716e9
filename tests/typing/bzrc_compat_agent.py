"""A CS 470 agent on the drop-in ``compat.BZRC``, annotated for ``mypy --strict``."""

from __future__ import annotations

import math

from gamecodec.bzrc.compat import BZRC, Command, MyTankAnswer, OtherTankAnswer


def nearest_enemy(tank: MyTankAnswer, enemies: list[OtherTankAnswer]) -> OtherTankAnswer | None:
    """The closest live enemy, or None."""
    alive = [e for e in enemies if e.status == "alive"]
    return min(alive, key=lambda e: math.hypot(e.x - tank.x, e.y - tank.y), default=None)


def tick(bzrc: BZRC) -> list[tuple[bool, bool, bool]]:
    """One turn: every tank turns towards its nearest enemy and shoots."""
    team = bzrc.get_constants()["team"]
    mytanks, othertanks, _flags, _shots = bzrc.get_lots_o_stuff()
    enemies = [t for t in othertanks if t.color != team]
    commands = []
    for tank in mytanks:
        enemy = nearest_enemy(tank, enemies)
        if enemy is None:
            commands.append(Command(tank.index, 0, 0, False))
            continue
        angle = math.atan2(enemy.y - tank.y, enemy.x - tank.x) - tank.angle
        commands.append(Command(tank.index, 1, angle, tank.shots_avail > 0))
    return bzrc.do_commands(commands)


def scene(bzrc: BZRC) -> tuple[float, float, float, str]:
    """A few of the other answers, as an agent reads them."""
    flag = bzrc.get_flags()[0]
    shot_speed = max((math.hypot(s.vx, s.vy) for s in bzrc.get_shots()), default=0.0)
    base = bzrc.get_bases()[0]
    team = bzrc.get_teams()[0]
    width = base.corner3_x - base.corner1_x
    return flag.x, shot_speed, width * team.count, flag.poss_color
