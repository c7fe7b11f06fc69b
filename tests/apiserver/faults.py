"""Injectable faults and the request record of the test API server."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field


@dataclass
class Fault:
    """Answer matching requests badly.

        ``path`` is a regular expression searched in the request path. ``times`` limits how many
        matching requests are hit (None: all). ``status`` answers with that code (``retry_after``
        adds the header); ``delay`` sleeps first (slow responses); ``drop`` is ``"before"`` (close the
        connection without an answer) or ``"midway"`` (send part of the body, then close);
        ``on_continue`` hits only requests that carry a ``continue`` token.

        Hostile modes (tests/apiserver/hostile.py): ``body_bytes`` answers a list body of that size
        (with a Content-Length when ``declare_length``, else chunked); ``log_bytes`` answers a log of
        that size; ``drip`` sends the body one byte every ``drip`` seconds, ``drip_head`` the whole
    answer from its status line on; ``continue_token`` makes
        every list page carry that same token.
    """

    path: str
    status: int | None = None
    times: int | None = 1
    retry_after: str | None = None
    delay: float = 0.0
    drop: str | None = None
    on_continue: bool = False
    body_bytes: int | None = None
    declare_length: bool = False
    log_bytes: int | None = None
    drip: float = 0.0
    drip_head: float = 0.0
    continue_token: str | None = None
    hits: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def take(self, path: str, query: dict[str, list[str]]) -> bool:
        if not re.search(self.path, path):
            return False
        if self.on_continue and not query.get("continue"):
            return False
        with self._lock:
            if self.times is not None and self.hits >= self.times:
                return False
            self.hits += 1
            return True


@dataclass
class Recorded:
    """One request as received: method, path, query, headers (no token), and the status it got
    (0 until answered, and for dropped connections). Recorded on arrival."""

    method: str
    path: str
    query: dict[str, list[str]]
    status: int
    headers: dict[str, list[str]]

    def param(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[0] if values else None
