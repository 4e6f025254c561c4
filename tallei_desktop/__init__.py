"""Tallei desktop: a local, encrypted memory layer shared by every AI assistant."""

__version__ = "0.1.0"
