"""One reader per bundle layout: each turns a :class:`BundleTree` into evidence."""
