"""Recompute virt-controller's memory overhead and launcher pod resources (launcher-pod.md)."""
