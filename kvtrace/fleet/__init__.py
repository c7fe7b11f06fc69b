"""``kvtrace check`` over many bundles — a fleet — here or as Dask tasks (docs/fleet.md).

``discover`` names the bundles, ``plan`` makes one task per bundle (per partition of a big
one), ``tasks`` checks one in this process or on a worker and returns ``results`` (findings and
latency samples, never timelines), ``run`` and ``on_dask`` run them, ``frames`` (pandas) turns
them into tables and statistics, ``report`` and ``html`` write them, ``command`` is what the
``check`` command calls.
"""
