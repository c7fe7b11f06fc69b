"""Evidence sources: offline bundles, plain log files, stdin, and a live cluster
(:mod:`kvtrace.sources.live`, collected into a bundle and read back like one);
:mod:`kvtrace.sources.opener` picks one for every command."""
