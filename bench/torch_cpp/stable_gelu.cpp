// A probe, not a product: gelu_ext's GELU fast path (contiguous operand, exact
// or tanh, the four float dtypes) written against PyTorch's stable ABI only
// (TORCH_TARGET_VERSION 2.10: STABLE_TORCH_LIBRARY, torch::stable::Tensor,
// empty_like, parallel_for), as op gelu_ext_stable::gelu, so that its per-call
// cost can be timed beside gelu_ext/torch/csrc/ops.cpp's kernel (the
// unstable C++ API) in one process: bench/torch_cpp/stable_probe.py.
// The kernels are _ufuncs' own, through the capsule of src/gx_capi.h, as in
// ops.cpp; configure() takes the loop codes from Python (_ufuncs._loop_code).
#include <Python.h>

#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>

#include <algorithm>
#include <string_view>

#include "gx_capi.h"

namespace {

using torch::headeronly::ScalarType;

const gx_capi* capi = nullptr;
int64_t codes[2][4];  // [none, tanh][float16, bfloat16, float32, float64]

int slot(ScalarType t) {
  switch (t) {
    case ScalarType::Half: return 0;
    case ScalarType::BFloat16: return 1;
    case ScalarType::Float: return 2;
    case ScalarType::Double: return 3;
    default: return -1;
  }
}

// codes: the 8 loop codes, approximate-major, in slot order.
void configure(torch::headeronly::HeaderOnlyArrayRef<int64_t> c) {
  STD_TORCH_CHECK(c.size() == 8, "configure takes 8 loop codes, got ", c.size());
  PyGILState_STATE g = PyGILState_Ensure();
  auto* p = static_cast<const gx_capi*>(PyCapsule_Import("gelu_ext._ufuncs._gx_capi", 0));
  if (!p) PyErr_Clear();
  PyGILState_Release(g);
  STD_TORCH_CHECK(p && p->version == GX_CAPI_VERSION, "gelu_ext._ufuncs' capsule is missing or another version");
  capi = p;
  for (int i = 0; i < 8; i++) codes[i / 4][i % 4] = c[i];
}

torch::stable::Tensor gelu(const torch::stable::Tensor& x, std::string_view approximate) {
  STD_TORCH_CHECK(capi, "gelu_ext_stable::configure first");
  const int a = approximate == "tanh" ? 1 : 0;
  STD_TORCH_CHECK(a == 1 || approximate == "none", "approximate must be 'none' or 'tanh'");
  const int s = slot(x.scalar_type());
  STD_TORCH_CHECK(s >= 0 && x.is_contiguous(), "the probe takes contiguous float tensors only");
  torch::stable::Tensor out = torch::stable::empty_like(x);  // contiguous x: a contiguous output
  const int64_t n = x.numel();
  if (n == 0) return out;
  const ptrdiff_t code = codes[a][s];
  const gx_capi_kernel k = capi->kernel(code);
  const char* in = static_cast<const char*>(x.const_data_ptr());
  char* o = static_cast<char*>(out.mutable_data_ptr());
  const int64_t thr = capi->parallel_threshold(code), isz = capi->itemsize(code), block = 64;
  if (n < 2 * thr) {
    const void* p[1] = {in};
    k(p, o, n);
    return out;
  }
  torch::stable::parallel_for(0, (n + block - 1) / block, std::max<int64_t>(thr / block, 1),
                              [&](int64_t b, int64_t e) {
                                const int64_t lo = b * block, hi = std::min(e * block, n);
                                if (lo >= hi) return;
                                const void* p[1] = {in + lo * isz};
                                k(p, o + lo * isz, hi - lo);
                              });
  return out;
}

}  // namespace

STABLE_TORCH_LIBRARY(gelu_ext_stable, m) {
  m.def("configure(int[] codes) -> ()");
  m.def("gelu(Tensor x, str approximate='none') -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(gelu_ext_stable, CompositeExplicitAutograd, m) {
  m.impl("configure", TORCH_BOX(&configure));
}

STABLE_TORCH_LIBRARY_IMPL(gelu_ext_stable, CPU, m) {
  m.impl("gelu", TORCH_BOX(&gelu));
}
