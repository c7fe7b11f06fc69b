"""kvtrace: forensics for KubeVirt's virt-controller."""

__version__ = "0.1.0"
