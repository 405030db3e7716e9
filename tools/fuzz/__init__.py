"""Fuzz targets of every decoder entry point and session, on both twins.

``python -m tools.fuzz --help`` runs them; :mod:`tools.fuzz.driver` is the
shared driver, one module per protocol holds its targets, and ``corpus/``
the seed inputs (rebuilt by ``python -m tools.fuzz corpus``).
"""
