// The CPU kernels of the gelu_ext:: torch ops in C++ (gelu_ext.torch._cpp
// puts them in: built at install next to torch, or on first use).
//
// Design:
// * The ops, their schemas, fake kernels, autograd and vmap rules stay where
//   gelu_ext/torch/_ops.py defines them; this file replaces the kernel at
//   the CPU key, and puts a C++ gate in front of the Python autograd at
//   AutogradCPU (see "the autograd gate").  Its one table -- which ufunc loops each op runs over which
//   of its tensors, per approximate and dtype -- comes from _ops (_OPS and the
//   loop codes of _ufuncs._loop_code) through register_ops(), not spelled here.
// * The kernels are _ufuncs' own, reached through the PyCapsule
//   "gelu_ext._ufuncs._gx_capi" (src/dispatch/gx_capi.h): compiled once, the ISA path
//   chosen by gelu_ext at run time and looked up per call, so the bits are the
//   ufuncs' by construction.
// * Outputs come from torch's CPU allocator (at::detail::empty_cpu, the layout _ops'
//   _new_output gives, so the fake kernel's strides still agree; a large
//   one through the kept block, below, so a model's layers reuse it); threads
//   from torch's intra-op pool (torch_parallel_for: at::parallel_for compiled
//   inside libtorch, so it runs on torch's own OpenMP or native pool without
//   this file being built with -fopenmp), torch.get_num_threads() of them,
//   each thread running the single-threaded kernel over its share -- or,
//   for a while after a threaded call stalled on a descheduled thread, the
//   caller alone (see "the back-off").
// * A boxed kernel: calls from Python reach the dispatcher boxed, so reading
//   the IValues directly skips an unboxing; one functor per op holds its row.
// * Two paths, as in _ops: operands of one dtype, one shape, contiguous --
//   the kernel straight over their memory; everything else (broadcasting,
//   strides, mixed dtypes) promoted as torch promotes, then a
//   TensorIterator whose inner runs go to the same kernel (strided runs
//   gathered into a stack buffer first, as the ufunc loop does).
// The headers this file uses, not torch/extension.h: that one brings the
// whole C++ frontend (modules, optimisers) and doubles the compile time
// (26 CPU-s against 15 on a Zen 4), which every install next to torch pays.
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <ATen/EmptyTensor.h>
#include <ATen/ExpandUtils.h>
#include <ATen/TensorIterator.h>
#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <c10/core/CPUAllocator.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/stable/c/shim.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gx_capi.h"

namespace py = pybind11;

namespace {

const gx_capi* capi = nullptr;

constexpr int kMaxIn = 3;
// Elements a parallel share starts on: whole cache lines of float64.
constexpr int64_t kBlock = 64;
// Elements gathered at a time for a strided run (the ufunc loop's _CHUNK).
constexpr int64_t kGather = 512;

// One output of an op: ufunc loop `code` over the op's tensors `idx`.
struct Part {
  ptrdiff_t code;
  int nidx;
  std::array<int, kMaxIn> idx;
};

// The float dtypes in the table's order of slots.
constexpr std::array<at::ScalarType, 4> kDtypes = {
    at::kHalf, at::kBFloat16, at::kFloat, at::kDouble};
constexpr std::array<const char*, 4> kDtypeNames = {
    "float16", "bfloat16", "float32", "float64"};

int dtype_slot(at::ScalarType t) {
  for (int i = 0; i < 4; i++)
    if (kDtypes[i] == t) return i;
  return -1;
}

// One op: its tensor arguments' names (for errors) and its parts for each
// (approximate, dtype).
struct Row {
  std::string name;
  std::vector<std::string> args;
  bool has_approximate = false;
  std::vector<Part> parts[2][4];  // [none, tanh][dtype slot]
};

// ------------------------------------------------------------ the back-off --
// On cores shared with other work a thread of torch's pool can be
// descheduled holding its share, and the parallel region then waits for it
// a time slice: measured on a 2-vCPU Xeon beside another process's work, a
// BERT-base FFN's GELU (1.5 M bfloat16 elements) took 5-8 ms on 2 threads
// against 0.65 ms on one, and inside a frozen compiled graph -- where
// torch's GELU is a oneDNN post-op and ours is the one parallel region the
// unpatched graph does not have -- that was the patched model's whole loss.
// gelu_ext's own pool sees such stalls and runs the next calls on the
// caller alone (src/runtime/gx_pool.c, gx_judge_job); torch's pool cannot,
// so the same rule is kept here, over torch's threads: a threaded call is a
// stall when it took longer than one thread would have (the calling
// thread's own time per element times n) plus kStallNs; the next `backoff`
// calls (within kBackoffMaxNs of the stall) then run on the caller alone,
// backoff growing 4x per stall from kBackoffMin to kBackoffMax and halving
// after a threaded call without one.  On an idle machine nothing changes.
// (The state is shared by all ops and threads, updated without a lock: it
// is a hint; a race costs at most a call's choice of threads.)
constexpr int64_t kStallNs = 50000;
constexpr int64_t kBackoffMin = 2;
constexpr int64_t kBackoffMax = 1024;
constexpr int64_t kBackoffMaxNs = 1000000000;

std::atomic<int64_t> stall_t{0};        // ns of the last stall; 0: not backing off
std::atomic<int64_t> stall_calls{0};    // calls run serially since
std::atomic<int64_t> backoff{kBackoffMin};
std::atomic<int64_t> n_threaded{0}, n_stalls{0}, n_serial{0};  // counters: threading_stats()

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Whether this call may use torch's threads (false: backing off after a stall).
bool may_thread() {
  const int64_t t = stall_t.load(std::memory_order_relaxed);
  if (!t) return true;
  if (stall_calls.fetch_add(1, std::memory_order_relaxed) < backoff.load(std::memory_order_relaxed) &&
      now_ns() - t < kBackoffMaxNs) {
    n_serial.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  stall_t.store(0, std::memory_order_relaxed);  // probe: try the threads again
  return true;
}

void judge(bool stalled) {
  n_threaded.fetch_add(1, std::memory_order_relaxed);
  const int64_t b = backoff.load(std::memory_order_relaxed);
  if (stalled) {
    n_stalls.fetch_add(1, std::memory_order_relaxed);
    backoff.store(std::min(b * 4, kBackoffMax), std::memory_order_relaxed);
    stall_calls.store(0, std::memory_order_relaxed);
    stall_t.store(now_ns(), std::memory_order_relaxed);
  } else {
    backoff.store(std::max(b / 2, kBackoffMin), std::memory_order_relaxed);
  }
}

// ------------------------------------------------------------- running --

struct Flat {
  gx_capi_kernel k;
  int op;
  int nin;
  size_t isz;
  const char* in[kMaxIn];
  char* out;
  int64_t n;
  std::thread::id owner;        // the calling thread
  int64_t own_items, own_ns;    // what it computed, written by it alone
  std::atomic<int64_t> other_items{0};
};

void run_blocks(int64_t b, int64_t e, void* ctx) {
  Flat* f = static_cast<Flat*>(ctx);
  const int64_t lo = b * kBlock, hi = std::min(e * kBlock, f->n);
  if (lo >= hi) return;
  const void* p[kMaxIn] = {nullptr, nullptr, nullptr};
  for (int i = 0; i < f->nin; i++) p[i] = f->in[i] + lo * f->isz;
  if (std::this_thread::get_id() != f->owner) {
    f->k(p, f->out + lo * f->isz, hi - lo, f->op);
    f->other_items.fetch_add(hi - lo, std::memory_order_relaxed);
    return;
  }
  const int64_t t0 = now_ns();
  f->k(p, f->out + lo * f->isz, hi - lo, f->op);
  f->own_ns += now_ns() - t0;
  f->own_items += hi - lo;
}

// Loop `code` over n contiguous elements, on torch's threads where n is
// worth splitting (the ufuncs' own threshold: none below two blocks of it)
// and the threads are not backing off after a stall (above).
void run_flat(ptrdiff_t code, const void* const* in, void* out, int64_t n) {
  gx_capi_kernel k = capi->kernel(code);
  const int op = capi->op(code);
  const int64_t thr = capi->parallel_threshold(code);
  if (n < 2 * thr || !may_thread()) {
    k(in, out, n, op);
    return;
  }
  Flat f{k, op, capi->nin(code), capi->itemsize(code), {nullptr, nullptr, nullptr},
         static_cast<char*>(out), n, std::this_thread::get_id(), 0, 0};
  for (int i = 0; i < f.nin; i++) f.in[i] = static_cast<const char*>(in[i]);
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  const int64_t t0 = now_ns();
  TORCH_CHECK(torch_parallel_for(0, blocks, std::max<int64_t>(thr / kBlock, 1),
                                 run_blocks, &f) == AOTI_TORCH_SUCCESS,
              "gelu_ext: torch_parallel_for failed");
  const int64_t wall = now_ns() - t0;
  // judged only where another thread took a share and the caller one too
  // (torch ran it threaded and the caller's rate is known)
  if (f.other_items.load(std::memory_order_relaxed) > 0 && f.own_items > 0) {
    const double serial = static_cast<double>(f.own_ns) * static_cast<double>(n) /
                          static_cast<double>(f.own_items);
    judge(static_cast<double>(wall) > serial + kStallNs);
  }
}

// Loop `code` over `ins` into `out` (already at the broadcast shape) through
// a TensorIterator: any strides and broadcasting; its inner runs that are
// contiguous go straight to the kernel, the others through stack buffers.
void run_iter(ptrdiff_t code, at::Tensor& out, const std::vector<at::Tensor>& ins) {
  at::TensorIteratorConfig cfg;
  cfg.add_output(out);
  for (const auto& t : ins) cfg.add_const_input(t);
  cfg.resize_outputs(false).check_all_same_dtype(true);
  at::TensorIterator iter = cfg.build();
  const gx_capi_kernel k = capi->kernel(code);
  const int op = capi->op(code);
  const int nin = static_cast<int>(ins.size());
  const int64_t isz = static_cast<int64_t>(capi->itemsize(code));
  auto loop = [&](char** data, const int64_t* strides, int64_t n0, int64_t n1) {
    alignas(64) double buf[kMaxIn + 1][kGather];
    const int nt = nin + 1;  // data[0] is the output
    for (int64_t j = 0; j < n1; j++) {
      char* ptr[kMaxIn + 1];
      bool contiguous = true;
      for (int t = 0; t < nt; t++) {
        ptr[t] = data[t] + j * strides[nt + t];
        contiguous = contiguous && strides[t] == isz;
      }
      if (contiguous) {
        const void* in[kMaxIn] = {ptr[1], nin > 1 ? ptr[2] : nullptr, nin > 2 ? ptr[3] : nullptr};
        k(in, ptr[0], n0, op);
        continue;
      }
      for (int64_t s = 0; s < n0; s += kGather) {
        const int64_t m = std::min(kGather, n0 - s);
        const void* in[kMaxIn] = {nullptr, nullptr, nullptr};
        for (int t = 1; t < nt; t++) {
          const char* src = ptr[t] + s * strides[t];
          if (strides[t] == isz) {
            in[t - 1] = src;
          } else {
            char* dst = reinterpret_cast<char*>(buf[t]);
            for (int64_t i = 0; i < m; i++) std::memcpy(dst + i * isz, src + i * strides[t], isz);
            in[t - 1] = dst;
          }
        }
        char* o = ptr[0] + s * strides[0];
        if (strides[0] == isz) {
          k(in, o, m, op);
        } else {
          char* tmp = reinterpret_cast<char*>(buf[0]);
          k(in, tmp, m, op);
          for (int64_t i = 0; i < m; i++) std::memcpy(o + i * strides[0], tmp + i * isz, isz);
        }
      }
    }
  };
  iter.for_each(loop, 2 * capi->parallel_threshold(code));
}

// _ops._new_output: C-contiguous, unless the first operand has the broadcast
// shape and is not contiguous, where it is empty_like of it (its dense
// layout kept).
at::Tensor new_output(const std::vector<at::Tensor>& ts, at::ScalarType dt, bool same_shapes) {
  const at::Tensor& x = ts[0];
  c10::DimVector shape(x.sizes().begin(), x.sizes().end());
  if (!same_shapes)
    for (size_t i = 1; i < ts.size(); i++) shape = at::infer_size_dimvector(shape, ts[i].sizes());
  if (x.sizes().equals(shape)) {
    if (x.is_contiguous())
      return at::empty_like(x, x.options().dtype(dt), at::MemoryFormat::Contiguous);
    return at::empty_like(x, x.options().dtype(dt));
  }
  return at::empty(shape, x.options().dtype(dt));
}

// ------------------------------------------------------ the kept block --
// An output's pages are faulted in afresh whenever its memory is new to the
// process -- mmapped, or heap that glibc returned to the kernel since --
// ~1.7 us a 4 KiB page on a VM, more than the kernel's own time for a
// GELU output of MiniLM at 32x128.  In a model each layer's activation
// output is freed before the next layer's is made, so the fast path's
// outputs of kKeepMin..kKeepMax bytes come from KeepAllocator, which keeps
// the last one freed and gives it to the next output of exactly its size:
// after a model's first layer no call faults.  One block at most is kept
// (empty_cache() frees it); the memory is torch's CPU allocator's (each
// block is that allocator's DataPtr, inside ours), so what torch's
// allocator does -- alignment, huge pages, profiling -- it still does.
// From one page: one page faulted (~1.7 us) is as much as a whole small
// call; MiniLM's float16 GELU output at 1x16 is 48 KiB.
constexpr size_t kKeepMin = size_t{1} << 12;
constexpr size_t kKeepMax = size_t{1} << 26;

struct KeptBlock {
  c10::DataPtr inner;  // torch's CPU allocator's
  size_t nbytes;
};

std::atomic<KeptBlock*> kept{nullptr};

bool keepable(size_t n) { return n >= kKeepMin && n <= kKeepMax; }

// The deleter of a KeepAllocator block: keep it if its size is in the kept
// range (a resize_ may have made any size) and nothing is kept, else free it.
void keep_or_free(void* ctx) {
  auto* b = static_cast<KeptBlock*>(ctx);
  KeptBlock* none = nullptr;
  if (!keepable(b->nbytes) || !kept.compare_exchange_strong(none, b, std::memory_order_acq_rel)) delete b;
}

struct KeepAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t n) override {
    KeptBlock* b = nullptr;
    if (keepable(n)) {
      b = kept.exchange(nullptr, std::memory_order_acq_rel);
      if (b && b->nbytes != n) {
        delete b;
        b = nullptr;
      }
    }
    if (!b) {
      c10::DataPtr inner = c10::GetCPUAllocator()->allocate(n);
      b = new KeptBlock{std::move(inner), n};
    }
    return {b->inner.get(), b, &keep_or_free, c10::Device(c10::DeviceType::CPU)};
  }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
};

// never destroyed: every storage it made points to it as long as it lives
KeepAllocator* const keep_allocator = new KeepAllocator;

// A contiguous output of x's shape and dtype, from KeepAllocator if its size
// is in the kept range, else from torch's CPU allocator directly (as aten's
// own CPU kernels allocate: empty_like's trip through the dispatcher was
// ~2.6k of the call's ~16.6k instructions).
at::Tensor new_flat_output(const at::Tensor& x) {
  if (keepable(static_cast<size_t>(x.numel()) * x.element_size()))
    return at::detail::empty_generic(x.sizes(), keep_allocator, c10::DispatchKeySet(c10::DispatchKey::CPU),
                                     x.scalar_type(), at::MemoryFormat::Contiguous);
  return at::detail::empty_cpu(x.sizes(), x.scalar_type(), false, at::MemoryFormat::Contiguous);
}

// Free the kept block, if any.
void empty_cache() { delete kept.exchange(nullptr, std::memory_order_acq_rel); }

// The kept block's size in bytes (0: none), taken out to be read (another
// thread may take and free it meanwhile) and put back.
size_t kept_bytes() {
  KeptBlock* b = kept.exchange(nullptr, std::memory_order_acq_rel);
  if (!b) return 0;
  const size_t n = b->nbytes;
  keep_or_free(b);
  return n;
}

std::string python_dtype(at::ScalarType t) {
  return "torch." + std::string(c10::getDtypeNames(t).first);
}

// ------------------------------------------------------------ the kernel --

class OpKernel final : public c10::OperatorKernel {
 public:
  explicit OpKernel(std::shared_ptr<const Row> row) : row_(std::move(row)) {}

  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
    const Row& r = *row_;
    const size_t nargs = op.schema().arguments().size();
    auto args = torch::jit::last(*stack, nargs);
    const int n = static_cast<int>(r.args.size());
    int a = 0;
    if (r.has_approximate) {
      const std::string& s = args[n].toStringRef();
      if (s == "tanh") {
        a = 1;
      } else {
        TORCH_CHECK_VALUE(s == "none", "approximate must be 'none' or 'tanh', got '", s, "'");
      }
    }
    std::array<at::Tensor, kMaxIn> ts;
    for (int i = 0; i < n; i++) ts[i] = args[i].toTensor();
    const at::Tensor& x = ts[0];
    const int slot = dtype_slot(x.scalar_type());
    bool fast = slot >= 0 && x.is_contiguous();
    for (int i = 1; i < n && fast; i++)
      fast = ts[i].scalar_type() == x.scalar_type() && ts[i].sizes().equals(x.sizes()) &&
             ts[i].is_contiguous();
    std::array<at::Tensor, 2> outs;
    size_t nout;
    if (fast) {
      const auto& parts = r.parts[a][slot];
      nout = parts.size();
      const int64_t numel = x.numel();
      for (size_t p = 0; p < nout; p++) {
        outs[p] = new_flat_output(x);  // as _new_output
        if (numel == 0) continue;
        const void* in[kMaxIn] = {nullptr, nullptr, nullptr};
        for (int i = 0; i < parts[p].nidx; i++) in[i] = ts[parts[p].idx[i]].const_data_ptr();
        run_flat(parts[p].code, in, outs[p].mutable_data_ptr(), numel);
      }
    } else {
      nout = general(r, a, ts, n, outs);
    }
    torch::jit::drop(*stack, nargs);
    for (size_t p = 0; p < nout; p++) torch::jit::push(*stack, std::move(outs[p]));
  }

 private:
  static size_t general(const Row& r, int a, std::array<at::Tensor, kMaxIn>& ts, int n,
                        std::array<at::Tensor, 2>& outs) {
    at::ScalarType dt = ts[0].scalar_type();
    for (int i = 0; i < n; i++) {
      const at::ScalarType t = ts[i].scalar_type();
      TORCH_CHECK_TYPE(dtype_slot(t) >= 0, r.args[i],
                       " must be a float16, bfloat16, float32 or float64 tensor, got ",
                       python_dtype(t));
      if (t != dt) dt = at::promote_types(dt, t);
    }
    bool same = true;
    for (int i = 0; i < n; i++) {
      if (ts[i].scalar_type() != dt) ts[i] = ts[i].to(dt);
      same = same && ts[i].sizes().equals(ts[0].sizes());
    }
    const auto& parts = r.parts[a][dtype_slot(dt)];
    for (size_t p = 0; p < parts.size(); p++) {
      std::vector<at::Tensor> ins;
      for (int i = 0; i < parts[p].nidx; i++) ins.push_back(ts[parts[p].idx[i]]);
      outs[p] = new_output(ins, dt, same);
      run_iter(parts[p].code, outs[p], ins);
    }
    return parts.size();
  }

  std::shared_ptr<const Row> row_;
};

// ------------------------------------------------------- the autograd gate --
// The ops' autograd (_ops: an autograd.Function per op, with its backward,
// JVP and functorch handling) is Python, and a Python kernel at the Autograd
// key is entered by every call outside inference_mode -- ~3 us a call under
// no_grad (generate(), pipelines) for a hop that mostly just sends the call
// on.  This kernel at AutogradCPU (more specific than the Autograd alias, so
// it runs instead for CPU tensors) makes that decision in C++: where a
// derivative may be asked for -- an input that requires grad while grad
// mode is on, a tangent (forward-mode AD has one level in eager: 0), any
// functorch transform -- it calls the op's Python entry (_ops: the
// Function's apply, as the Python kernel does), directly rather than by a
// redispatch: under torch's Python dispatcher (AOTAutograd, export) a
// redispatch is resolved again from the tensors and would come back here;
// otherwise it goes straight below autograd, as aten's own autograd kernels
// do.

// what torch._C._are_functorch_transforms_active() reads
bool functorch_active() {
  const auto included = c10::impl::tls_local_dispatch_key_set().included_;
  return included.has(c10::DispatchKey::FuncTorchDynamicLayerFrontMode) ||
         included.has(c10::DispatchKey::FuncTorchDynamicLayerBackMode);
}

bool wants_derivatives(const torch::jit::Stack& stack, size_t nargs) {
  if (functorch_active()) return true;
  const bool grad = c10::GradMode::is_enabled();
  for (const auto& v : torch::jit::last(stack, nargs)) {
    if (!v.isTensor()) continue;
    const at::Tensor& t = v.toTensor();
    if ((grad && t.requires_grad()) || t._fw_grad(/*level=*/0).defined()) return true;
  }
  return false;
}

class AutogradGate final : public c10::OperatorKernel {
 public:
  // `entry` is borrowed for good (one reference kept, never dropped): the
  // kernel may be destroyed after the interpreter has finalized
  explicit AutogradGate(PyObject* entry) : entry_(entry) { Py_INCREF(entry_); }

  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
    const size_t nargs = op.schema().arguments().size();
    if (!wants_derivatives(*stack, nargs)) {
      at::AutoDispatchBelowADInplaceOrView below;
      op.redispatchBoxed(ks & c10::after_ADInplaceOrView_keyset, stack);
      return;
    }
    std::vector<at::Tensor> outs;
    {
      py::gil_scoped_acquire gil;
      py::tuple args(nargs);
      const auto in = torch::jit::last(*stack, nargs);
      for (size_t i = 0; i < nargs; i++) {
        if (in[i].isTensor()) {
          args[i] = py::reinterpret_steal<py::object>(THPVariable_Wrap(in[i].toTensor()));
        } else {
          TORCH_CHECK(in[i].isString(), op.schema().name(), ": argument ", i, " is neither a tensor nor a string");
          args[i] = py::str(in[i].toStringRef());
        }
      }
      try {
        py::object r = py::reinterpret_borrow<py::object>(entry_)(*args);
        if (py::isinstance<py::tuple>(r)) {
          for (const auto& o : r) outs.push_back(THPVariable_Unpack(o.ptr()));
        } else {
          outs.push_back(THPVariable_Unpack(r.ptr()));
        }
      } catch (py::error_already_set& e) {
        // the Python exception itself reaches the caller (its type, message
        // and traceback), as from a Python kernel
        e.restore();
        python_error err;
        err.persist();
        throw err;
      }
    }
    torch::jit::drop(*stack, nargs);
    for (auto& t : outs) torch::jit::push(*stack, std::move(t));
  }

 private:
  PyObject* entry_;
};

// ----------------------------------------------------------- registration --

std::unique_ptr<torch::Library> cpu_library;
std::unique_ptr<torch::Library> autograd_library;

void load_capi() {
  if (capi) return;
  auto* p = static_cast<const gx_capi*>(PyCapsule_Import("gelu_ext._ufuncs._gx_capi", 0));
  if (!p) throw py::error_already_set();
  TORCH_CHECK(p->version == GX_CAPI_VERSION, "gelu_ext._ufuncs' kernel table is version ",
              p->version, ", this build expects ", GX_CAPI_VERSION, ": rebuild it");
  capi = p;
}

// A field of one of register_ops' records, by name: a missing or mistyped
// one is an error naming it, not a crash.
template <class T>
T field(const py::dict& record, const char* key) {
  TORCH_CHECK(record.contains(key), "gelu_ext op table: a record has no '", key, "'");
  try {
    return record[key].cast<T>();
  } catch (const py::cast_error&) {
    TORCH_CHECK(false, "gelu_ext op table: '", key, "' has the wrong type");
  }
}

// The CPU kernels of the ops in `rows`, in place of whatever is there (the
// caller removes the Python ones first: a second kernel at one key
// overrides the first with a warning).  Each row is a dict (_ops._cpp_table):
//   name, args (tensor argument names), approximate (whether it takes it),
//   entries: [{approximate (index 0 "none", 1 "tanh"), dtype (name),
//              outputs: [{loop (code), operands ([tensor indices])}]}]
void register_ops(const std::vector<py::dict>& rows, const py::dict& autograd_entries) {
  load_capi();
  auto lib = std::make_unique<torch::Library>(torch::Library::IMPL, "gelu_ext",
                                              c10::DispatchKey::CPU, __FILE__, __LINE__);
  auto grad = std::make_unique<torch::Library>(torch::Library::IMPL, "gelu_ext",
                                               c10::DispatchKey::AutogradCPU, __FILE__, __LINE__);
  for (const auto& spec : rows) {
    auto row = std::make_shared<Row>();
    row->name = field<std::string>(spec, "name");
    row->args = field<std::vector<std::string>>(spec, "args");
    row->has_approximate = field<bool>(spec, "approximate");
    TORCH_CHECK(row->args.size() >= 1 && row->args.size() <= kMaxIn, row->name, ": ",
                row->args.size(), " tensor arguments");
    for (const auto& entry : field<std::vector<py::dict>>(spec, "entries")) {
      const int approx = field<int>(entry, "approximate");
      const auto dtname = field<std::string>(entry, "dtype");
      const auto outputs = field<std::vector<py::dict>>(entry, "outputs");
      int slot = -1;
      for (int i = 0; i < 4; i++)
        if (dtname == kDtypeNames[i]) slot = i;
      TORCH_CHECK(slot >= 0 && (approx == 0 || approx == 1), row->name, ": bad entry ", dtname);
      TORCH_CHECK(outputs.size() >= 1 && outputs.size() <= 2, row->name, ": ", outputs.size(),
                  " outputs");
      for (const auto& output : outputs) {
        const auto code = field<int64_t>(output, "loop");
        const auto idx = field<std::vector<int>>(output, "operands");
        TORCH_CHECK(capi->kernel(code) != nullptr && capi->nin(code) == static_cast<int>(idx.size()),
                    row->name, ": loop code ", code, " takes ", capi->nin(code), " inputs, got ",
                    idx.size());
        Part part{static_cast<ptrdiff_t>(code), static_cast<int>(idx.size()), {0, 0, 0}};
        for (size_t i = 0; i < idx.size(); i++) {
          TORCH_CHECK(idx[i] >= 0 && idx[i] < static_cast<int>(row->args.size()), row->name,
                      ": index ", idx[i]);
          part.idx[i] = idx[i];
        }
        row->parts[approx][slot].push_back(part);
      }
      if (!row->has_approximate) row->parts[1][slot] = row->parts[0][slot];
    }
    lib->impl(row->name.c_str(),
              torch::CppFunction::makeFromBoxedFunctor(std::make_unique<OpKernel>(row)));
    const py::object entry = autograd_entries[py::str(row->name)];
    grad->impl(row->name.c_str(),
               torch::CppFunction::makeFromBoxedFunctor(std::make_unique<AutogradGate>(entry.ptr())));
  }
  cpu_library = std::move(lib);
  autograd_library = std::move(grad);
}

// Remove the C++ kernels (the Python ones can then be registered again).
void unregister_ops() {
  autograd_library.reset();
  cpu_library.reset();
}

// The back-off's counters: threaded calls judged, stalls among them, calls
// run serially because of one (the C++ twin of _ufuncs._pool_stats()'s).
py::dict threading_stats() {
  py::dict d;
  d["threaded"] = n_threaded.load(std::memory_order_relaxed);
  d["stalls"] = n_stalls.load(std::memory_order_relaxed);
  d["serial"] = n_serial.load(std::memory_order_relaxed);
  return d;
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("register_ops", &register_ops, "The CPU kernels of the gelu_ext:: ops in C++.");
  m.def("unregister_ops", &unregister_ops, "Remove them.");
  m.def("threading_stats", &threading_stats, "The back-off's counters.");
  m.def("empty_cache", &empty_cache, "Free the kept output block.");
  m.def("kept_bytes", &kept_bytes, "The kept output block's size in bytes (0: none).");
}
