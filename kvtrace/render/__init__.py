"""Renderers: shaping (rows to plain data) is separate from serialising (table, JSON, YAML, CSV)."""
