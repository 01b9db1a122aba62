"""Tiny, deterministic training runs the lessons show (seconds on a CPU, never on import)."""
