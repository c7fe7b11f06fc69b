"""Recompute virt-controller's memory overhead and launcher pod resources.

What is recomputed, term by term and check by check, with KubeVirt source positions:
docs/verify-overhead.md.
"""
