"""The kernels' speed rests on the compiler vectorising the scalar formulas of
src/math/gx_math.h (and on the intrinsics of src/kernels/gx_loop_f32.h and src/simd/): if a change makes
GCC fall back to scalar code, every result is still right and nothing else
would notice.  This reads the compiled extension back with objdump and counts,
per kernel function and ISA path, the instructions on that path's vector
registers (the VREG column of src/gx_isas.h, a regular expression: ymm for
AVX2, zmm for AVX-512, v0.4s for NEON).
A row compiled with the build's own flags (no target of its own: NEON on
aarch64, like its baseline) may have kernels identical to the baseline's,
which the compiler's identical-code folding merges: such a kernel is read
where it was folded to (a jump to the baseline's copy, or no symbol at all).
Skipped where objdump is missing or the build has no vector path."""
import re
import shutil
import subprocess
from collections import Counter

import pytest

from gelu_ext import _ufuncs

# kernel (without the ISA suffix) -> minimum vector-register instructions.
# The formulas are long, so a vectorised body has hundreds; a handful means
# the loop went scalar.  The 16-bit and split drivers are left out: they
# only move data and call these.
FORMULAS = {
    "gelu_erf_grad_f64": 50, "gelu_tanh_grad_f64": 50,
    "gelu_erf_f64_full": 50, "gelu_tanh_f64_full": 50,
    "gelu_erf_f32_full": 50, "gelu_tanh_f32_full": 50,
    "gelu_erf_grad_f32_full": 50, "gelu_tanh_grad_f32_full": 50,
    "lut_fwd": 40, "lut_grad": 40, "lut64_fwd": 30,
    "relu_f32": 2, "relu_f64": 2, "relu_grad_f32": 2, "relu_grad_f64": 2,
    "h2f": 2, "f2h": 2, "b2f": 2, "f2b": 2,
}
# the vector paths of src/gx_isas.h and the registers objdump shows for them
REGISTER = {name: vreg for name, (_, _, vreg) in _ufuncs._isa_table().items() if vreg}
BASELINE = _ufuncs.ISA_NAMES[0]
# rows whose kernels may be folded into the baseline's (no target flags of their own)
FOLDABLE = {name for name, (level, target, _) in _ufuncs._isa_table().items() if level > 0 and not target}


@pytest.fixture(scope="module")
def disassembly():
    """(counts, folded): counts[(kernel, isa)] is 0 for every kernel found and
    counts[(kernel, isa, vreg)] its instructions on vreg's registers;
    folded[(kernel, isa)] = (kernel2, isa2) for a kernel whose body is one
    jump to gx_k_<kernel2>_<isa2>."""
    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.skip("objdump not installed")
    if not REGISTER:
        pytest.skip("this build has no vector path (src/gx_isas.h)")
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", _ufuncs.__file__],
                         capture_output=True, text=True, check=True).stdout
    counts = Counter()
    folded = {}
    name = None
    first = False
    names = "|".join(map(re.escape, _ufuncs.ISA_NAMES))
    head = re.compile(rf"^[0-9a-f]+ <gx_k_(\w+?)_({names})(?:\.[\w.]+)?>:$")
    # a folded copy: its whole body one jump to another kernel (aarch64 b, x86 jmp)
    jump = re.compile(rf"^\s*[0-9a-f]+:\s+(?:b|jmp)\s+[0-9a-f]+ <gx_k_(\w+?)_({names})(?:\.[\w.]+)?>")
    for line in out.splitlines():
        m = head.match(line)
        if m:
            name = (m.group(1), m.group(2))
            counts[name] += 0
            first = True
        elif not line.strip():
            name = None
        elif name is not None:
            j = jump.match(line) if first else None
            first = False
            if j:
                folded[name] = (j.group(1), j.group(2))
            for reg in REGISTER.values():
                if re.search(reg, line):
                    counts[name + (reg,)] += 1
    return counts, folded


@pytest.fixture(scope="module")
def counts(disassembly):
    return disassembly[0]


def _vector_count(counts, folded, kernel, isa):
    """Instructions on isa's vector registers in gx_k_<kernel>_<isa>, read
    where the compiler folded it (FOLDABLE rows only); None if not found."""
    if isa in FOLDABLE:
        where = folded.get((kernel, isa))
        if where is None and (kernel, isa) not in counts:
            where = (kernel, BASELINE)          # merged away: the baseline's copy is it
        if where is not None:
            kernel, isa_ = where
            return counts[(kernel, isa_, REGISTER[isa])] if (kernel, isa_) in counts else None
    return counts[(kernel, isa, REGISTER[isa])] if (kernel, isa) in counts else None


@pytest.mark.parametrize("isa", sorted(REGISTER) or ["no vector path"])
@pytest.mark.parametrize("kernel", sorted(FORMULAS))
def test_kernel_is_vectorised(disassembly, kernel, isa):
    if isa not in REGISTER:
        pytest.skip(f"{isa} path not compiled")
    n = _vector_count(*disassembly, kernel, isa)
    assert n is not None, f"gx_k_{kernel}_{isa} not found in {_ufuncs.__file__}"
    assert n >= FORMULAS[kernel], (
        f"gx_k_{kernel}_{isa} has {n} instructions on {REGISTER[isa]} registers, expected >= "
        f"{FORMULAS[kernel]}: the loop no longer vectorises")


def test_the_check_sees_a_scalar_kernel(counts):
    """The count is not vacuous: the baseline path has none of the vector
    paths' registers, so every baseline kernel counts 0.  (Not on aarch64,
    whose baseline has NEON too: GCC vectorises its plain loops.)"""
    if "neon" in REGISTER:
        pytest.skip("aarch64's baseline is vectorised with NEON as well")
    assert ("gelu_erf_f64", BASELINE) in counts
    for reg in REGISTER.values():
        assert all(counts[(k, BASELINE, reg)] == 0 for k in FORMULAS), reg
