"""Pure parsers for KubeVirt evidence: bytes or objects in, records out.

Nothing in this package touches the network or the terminal.
"""

from parsers.logstream import LogParser
from parsers.paths import source_from_path
from parsers.records import LineTally, LogRecord, ParseError, SourceInfo, Timestamp
from parsers.timestamps import parse_klog_time, parse_time

__all__ = [
    "LineTally",
    "LogParser",
    "LogRecord",
    "ParseError",
    "SourceInfo",
    "Timestamp",
    "parse_klog_time",
    "parse_time",
    "source_from_path",
]
