"""Offline analysis of played or published games: figures and log importers.

Reads records and logs, never plays: it may import the core and the games, not the runner or the
CLI (``docs/design.md``, "Layers"). Its modules may use heavy libraries such as matplotlib.
"""
