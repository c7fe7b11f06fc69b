"""Pure parsers for KubeVirt evidence: bytes or objects in, records out.

Nothing in this package touches the network or the terminal.
"""

from parsers.records import LineTally, LogRecord, SourceInfo, Timestamp

__all__ = ["LineTally", "LogRecord", "SourceInfo", "Timestamp"]
