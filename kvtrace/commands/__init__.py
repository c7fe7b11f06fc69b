"""One module per command; each parses options, calls the library, renders."""
