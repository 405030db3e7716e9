"""Small vectors embedded from the recorded transcripts (so the suite runs
without ../shared)."""

from __future__ import annotations

MYTANKS = (
    b"ack 3.0761039257 mytanks\nbegin\n"
    b"mytank 0 red0 alive 10 1.694417 -                            -391 2 -1.56872419094"
    b" 0.0259016796372 -12.4999731641 0.25\n"
    b"mytank 2 red2 dead 10 0 -                            -999999 -999999 2.64471006072"
    b" -0.0 0.0 0\n"
    b"end\n"
)
TIMER = b"ack 1.1092338562 timer\ntimer 1.580439 300000\n"
SPEED_BAD = b"ack 2.78818297386 speed 0\nfail Invalid parameter(s)\nfail\n"
UNKNOWN = b"fail invalid command\n"
OCCGRID = b"ack 1.18974399567 occgrid\nbegin\nat -400,-19\nsize 3x4\n0000\n0110\n0001\nend\n"
TEAMS = (
    b"ack 0.382776021957 teams\nbegin\nteam blue 10\nteam purple 10\nteam green 10\n"
    b"team red 10\nend\n"
)
