"""The built-in model of virt-controller (KubeVirt v1.9.0's code, applied per release from
v0.53.0): rules that explain, flag or cannot verify each step of a VM's timeline. Read
``rules.py`` as the table of contents."""
