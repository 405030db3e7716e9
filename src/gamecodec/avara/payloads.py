"""Payload helpers for the Avara commands that matter (spec §5)."""
