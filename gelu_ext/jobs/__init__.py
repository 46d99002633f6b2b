"""The ``python -m gelu_ext`` jobs, apart from the library.

``demo``, ``bench``, ``moons`` and ``bert`` are imported only when their
command runs (``gelu_ext.__main__``), so ``import gelu_ext`` never pays for
them and a missing optional extra affects only its job.  ``_common`` holds
the plumbing they share: progress lines, optional imports, timing, argument
checks, JSON output and the machine header.  ``bench/`` (the pytest-benchmark
suite and ``ratios.py``) imports ``gelu_ext.jobs.bench``.
"""
