"""The layers of src/ hold (the order is written at the top of src/gx_base.h):
no file includes, or uses a name defined only in, a file of a higher layer;
no function a header declares is defined in a higher layer's source; no
include circle.  Read from the sources as text, so it runs without a
build; ``python tests/test_layers.py`` prints the include graph by layer.
"""
import pathlib
import re
import sys

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"

# Lowest first; a file's layer is its folder's (the files at the top of src/
# are the base: the shared types and the op and ISA tables).  Layers in one
# tuple are side by side: either may reach the other's files (the generated
# tables are the formulas' data, included by math/).
LAYERS = (("base",), ("tables", "math", "runtime"), ("simd",), ("kernels",), ("isa",),
          ("dispatch", "testing"), ("python",))
RANK = {name: k for k, names in enumerate(LAYERS) for name in names}
# Names a lower layer reads as a parameter its includer defines first
# (GX_ISA: the row an ISA unit compiles, src/isa/<name>.c).
PARAMETERS = {"GX_ISA"}

_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"|^\s*cdef\s+extern\s+from\s+"([^"]+)"', re.M)


def _layer(path):
    rel = path.relative_to(SRC)
    return "base" if len(rel.parts) == 1 else rel.parts[0]


def _sources():
    if not SRC.is_dir():
        pytest.skip("src/ is not here (tests run outside the repository)")
    return sorted(p for p in SRC.rglob("*") if p.suffix in (".h", ".c", ".pyx"))


def _resolve(path, name):
    """The file an #include "name" in path names: beside it, else under src/
    (the build's include directory)."""
    for base in (path.parent, SRC):
        cand = (base / name).resolve()
        if cand.is_file() and SRC in cand.parents:
            return cand
    return None


def include_graph():
    """{file: [included file, ...]} over src/, paths relative to src/."""
    graph = {}
    for p in _sources():
        deps = []
        for m in _INCLUDE.finditer(p.read_text()):
            q = _resolve(p, m.group(1) or m.group(2))
            if q is not None:
                deps.append(q)
        graph[p] = deps
    return graph


def _code(text):
    """text without comments and string literals."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)


_DEFINED = [
    re.compile(r"^\s*#\s*define\s+(\w+)", re.M),                                   # macros
    re.compile(r"^\s*typedef\b[^;{#]*?(\w+)\s*(?:\[[^\]]*\])?\s*;", re.M),         # typedef ... name;
    re.compile(r"^\}\s*(\w+)\s*;", re.M),                                          # } name; (struct typedefs)
    re.compile(r"^(?!\s)(?:[\w\*]+\s+)+\**(\w+)\s*\([^;{]*?\)\s*\{", re.M),         # functions defined
    # and declared for another file to define (not a static forward declaration)
    re.compile(r"^(?!\s|static\b|GX_INLINE\b)(?:[\w\*]+\s+)+\**(\w+)\s*\([^;{]*?\)\s*;", re.M),
]


_KEYWORDS = set("""auto break case char const continue default do double else enum extern float
for goto if inline int long register restrict return short signed sizeof static struct switch
typedef union unsigned void volatile while""".split())


def definitions():
    """{name: {layer, ...}}: where each C name of src/ is declared or defined."""
    where = {}
    for p in _sources():
        if p.suffix == ".pyx":
            continue
        code = _code(p.read_text())
        for rx in _DEFINED:
            for m in rx.finditer(code):
                if m.group(1) not in _KEYWORDS:
                    where.setdefault(m.group(1), set()).add(_layer(p))
    return where


def upward_includes():
    return [(p.relative_to(SRC), q.relative_to(SRC)) for p, deps in include_graph().items()
            for q in deps if RANK[_layer(q)] > RANK[_layer(p)]]


def upward_uses():
    """(file, name, layer): a C file of a lower layer using a name that only
    higher layers define."""
    where = definitions()
    found = []
    for p in _sources():
        if p.suffix == ".pyx":
            continue
        r = RANK[_layer(p)]
        for name in sorted(set(re.findall(r"\b[A-Za-z_]\w*\b", _code(p.read_text())))):
            layers = where.get(name)
            if name in PARAMETERS or not layers or min(RANK[x] for x in layers) <= r:
                continue
            found.append((p.relative_to(SRC), name, min(layers, key=RANK.get)))
    return found


_DECLARED = re.compile(r"^(?!\s|static\b|GX_INLINE\b|typedef\b)(?:[\w\*]+\s+)+\**(\w+)\s*\([^;{]*?\)\s*;", re.M)
_DEFINED_FN = re.compile(r"^(?!\s|static\b)(?:[\w\*]+\s+)+\**(\w+)\s*\([^;{]*?\)\s*\{", re.M)


def defined_above_declared():
    """(function, header, source): a function a header declares for others to
    call, defined in a source file of a higher layer (the header's layer
    would need that layer to link)."""
    declared, defined = {}, {}
    for p in _sources():
        if p.suffix == ".pyx":
            continue
        code = _code(p.read_text())
        for m in _DECLARED.finditer(code):
            if p.suffix == ".h" and m.group(1) not in _KEYWORDS:
                declared.setdefault(m.group(1), p)
        if p.suffix == ".c":
            for m in _DEFINED_FN.finditer(code):
                defined[m.group(1)] = p
    return [(name, h.relative_to(SRC), defined[name].relative_to(SRC)) for name, h in sorted(declared.items())
            if name in defined and RANK[_layer(defined[name])] > RANK[_layer(h)]]


def circles():
    """Include circles, each as a list of files (relative to src/)."""
    graph = include_graph()
    state, stack, found = {}, [], []

    def visit(p):
        state[p] = 1
        stack.append(p)
        for q in graph.get(p, ()):
            if state.get(q) == 1:
                found.append([x.relative_to(SRC) for x in stack[stack.index(q):]] + [q.relative_to(SRC)])
            elif q not in state:
                visit(q)
        stack.pop()
        state[p] = 2

    for p in graph:
        if p not in state:
            visit(p)
    return found


def test_every_file_is_in_a_layer():
    assert {_layer(p) for p in _sources()} <= set(RANK)


def test_no_include_goes_up_a_layer():
    assert upward_includes() == []


def test_no_name_is_used_below_the_layer_that_defines_it():
    assert upward_uses() == []


def test_no_function_is_defined_above_the_header_that_declares_it():
    assert defined_above_declared() == []


def test_no_include_circle():
    assert circles() == []


# import statements of Python and Cython (cimport): the module each names
_IMPORT = re.compile(r"^\s*(?:from\s+(\S+)\s+c?import\b|c?import\s+([\w.]+))", re.M)


@pytest.mark.parametrize("name", ["_ufuncs.pyx", "_textbook.pyx"])
def test_the_compiled_core_imports_nothing_of_the_package(name):
    """The package imports these modules, never the reverse (gelu_ext._api
    takes fast_gelu from _ufuncs, which needs nothing of _api)."""
    _sources()
    text = _code((SRC / "python" / name).read_text())
    found = [m.group(1) or m.group(2) for m in _IMPORT.finditer(text)]
    assert found and [m for m in found if m.startswith((".", "gelu_ext"))] == []


if __name__ == "__main__":
    graph = include_graph()
    for layer in (name for names in LAYERS for name in names):
        for p in sorted(x for x in graph if _layer(x) == layer):
            deps = ", ".join(str(q.relative_to(SRC)) for q in graph[p])
            print(f"{layer:9s} {p.relative_to(SRC)}{' -> ' + deps if deps else ''}")
    bad = ([f"up: {a} -> {b}" for a, b in upward_includes()]
           + [f"use: {f} uses {n} ({layer})" for f, n, layer in upward_uses()]
           + [f"defined above its header: {n} ({h}, {c})" for n, h, c in defined_above_declared()]
           + [f"circle: {' -> '.join(map(str, c))}" for c in circles()])
    print("\n".join(bad) or "no upward arrow, no circle")
    sys.exit(1 if bad else 0)
