"""One reader per bundle layout (inputs.md §3): each turns a :class:`BundleTree` into evidence."""
