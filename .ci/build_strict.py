"""Build as a frontend would, but fail on any deprecation warning (.ci/run).

Usage::

    python .ci/build_strict.py requires           # print [build-system] requires
    python .ci/build_strict.py sdist  OUTDIR      # from the source tree (cwd)
    python .ci/build_strict.py wheel  OUTDIR      # from the unpacked sdist (cwd)

Why not `pip install .` or `python -m build` and read the output: setuptools
announces a removal about a year ahead (``project.license`` as a TOML table:
builds unsupported from 2027-02-18) with a SetuptoolsDeprecationWarning, but a
frontend runs the backend in a subprocess that forwards only UserWarnings, as
an anonymous BuildBackendWarning among hundreds of lines, and drops a plain
DeprecationWarning altogether.  So this calls the backend hook itself, one hook
per process as a frontend does, records every deprecation it raises (setuptools',
Cython's, NumPy's, the stdlib's) and exits 1 listing them.  Run it in a fresh
environment holding only the build requires, as a build from an index would.
"""
import os
import sys
import warnings

DEPRECATIONS = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)


def requires():
    try:
        import tomllib
    except ImportError:         # Python < 3.11: mypy (the test extra) brings tomli
        import tomli as tomllib
    with open("pyproject.toml", "rb") as f:
        return tomllib.load(f)["build-system"]["requires"]


def build(kind, outdir):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from setuptools import build_meta
        from setuptools.warnings import SetuptoolsDeprecationWarning
        hook = build_meta.build_sdist if kind == "sdist" else build_meta.build_wheel
        name = hook(os.path.abspath(outdir))
    bad = [w for w in caught if issubclass(w.category, DEPRECATIONS + (SetuptoolsDeprecationWarning,))]
    for w in caught:            # all of them, as a plain build would show them
        print(f"{w.filename}:{w.lineno}: {w.category.__name__}: {w.message}", file=sys.stderr)
    if bad:
        print(f"build_strict: {len(bad)} deprecation warning(s) while building the {kind}", file=sys.stderr)
        return 1
    print(f"build_strict: {name}, no deprecation warnings")
    return 0


def main(argv):
    if argv[:1] == ["requires"]:
        print("\n".join(requires()))
        return 0
    if len(argv) == 2 and argv[0] in ("sdist", "wheel"):
        return build(*argv)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
