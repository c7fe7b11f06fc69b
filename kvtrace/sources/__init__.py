"""Evidence sources: offline bundles, plain log files, stdin (and later a live cluster)."""
