/*
 * gx_atomic.h -- the atomic operations of the thread pool (gx_pool.c) and
 * of the 16-bit result tables (gx_k_16bit.h), one spelling per compiler
 * family:
 *   GCC's __atomic builtins: GCC, clang, Apple clang, mingw-w64 (__GNUC__);
 *   MSVC's Interlocked intrinsics: MSVC and clang-cl (_MSC_VER without
 *     __GNUC__), on x64 and ARM64.
 * GX_HAVE_ATOMICS is 0 where neither is there (or 32-bit MSVC): the pool
 * then runs every call on its caller and the 16-bit tables are not cached.
 * -DGX_ATOMICS_INTERLOCKED=1 takes the Interlocked spelling under mingw-w64
 * too, so that bench/windows.sh runs it (under wine) and not only compiles it.
 *
 * The objects are `long` (32 bits on Windows, 64 on LP64), gx_aintp
 * (ptrdiff_t) and pointers.  ORDER is a memory order, RELAXED, ACQUIRE,
 * RELEASE, ACQ_REL or SEQ_CST: the builtins take it as written; every
 * Interlocked read-modify-write is a full barrier (stronger, never weaker),
 * a load is a plain aligned load then a barrier (acquire, as MSVC's own
 * <atomic> does it), a store an exchange.
 *   GX_ALOAD(p, ORDER)         *p
 *   GX_ASTORE(p, v, ORDER)     *p = v
 *   GX_AADD(p, v, ORDER)       *p += v, returns the old *p (long)
 *   GX_AXCHG(p, v, ORDER)      *p = v, returns the old *p
 *   GX_ACAS(p, e, v)           if *p == e: *p = v and 1, else 0 (SEQ_CST)
 *   GX_AADD_INTP(p, v, ORDER)  GX_AADD on a gx_aintp
 *   GX_ASTORE_INTP(p, v, ORDER)
 *   GX_ALOAD_PTR(p, ORDER)     *p, p a pointer to a pointer
 *   GX_ACAS_PTR(p, e, v)       GX_ACAS on a pointer; returns 1 if it swapped
 */
#ifndef GX_ATOMIC_H
#define GX_ATOMIC_H

#include <stddef.h>

typedef ptrdiff_t gx_aintp;

#if defined(__GNUC__) && !defined(GX_ATOMICS_INTERLOCKED)
#define GX_HAVE_ATOMICS 1
#define GX_ALOAD(p, o) __atomic_load_n(p, __ATOMIC_##o)
#define GX_ASTORE(p, v, o) __atomic_store_n(p, v, __ATOMIC_##o)
#define GX_AADD(p, v, o) __atomic_fetch_add(p, v, __ATOMIC_##o)
#define GX_AXCHG(p, v, o) __atomic_exchange_n(p, v, __ATOMIC_##o)
#define GX_AADD_INTP(p, v, o) __atomic_fetch_add(p, v, __ATOMIC_##o)
#define GX_ASTORE_INTP(p, v, o) __atomic_store_n(p, v, __ATOMIC_##o)
#define GX_ALOAD_PTR(p, o) __atomic_load_n(p, __ATOMIC_##o)
static inline int gx_acas_(long *p, long e, long v)
{
    return __atomic_compare_exchange_n(p, &e, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}
static inline int gx_acas_ptr_(void **p, void *e, void *v)
{
    return __atomic_compare_exchange_n(p, &e, v, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
#define GX_ACAS(p, e, v) gx_acas_(p, e, v)
#define GX_ACAS_PTR(p, e, v) gx_acas_ptr_((void **)(p), (void *)(e), (void *)(v))

#elif (defined(_MSC_VER) || defined(GX_ATOMICS_INTERLOCKED)) && (defined(_M_X64) || defined(_M_ARM64) || \
                                                                 defined(__x86_64__))
#define GX_HAVE_ATOMICS 1
#include <intrin.h>
typedef char gx_aintp_is_64_bits[sizeof(gx_aintp) == 8 && sizeof(long) == 4 ? 1 : -1];

/* after a plain load: no later access moves above it (acquire) */
#if defined(_M_ARM64)
#define GX_ACQUIRE_FENCE_() __dmb(_ARM64_BARRIER_ISH)
#else                       /* x64: loads are not reordered with later accesses */
#define GX_ACQUIRE_FENCE_() _ReadWriteBarrier()
#endif
static inline long gx_aload_(const volatile long *p)
{
    long v = *p;
    GX_ACQUIRE_FENCE_();
    return v;
}
static inline void *gx_aload_ptr_(void *const volatile *p)
{
    void *v = *p;
    GX_ACQUIRE_FENCE_();
    return v;
}
#define GX_ALOAD(p, o) gx_aload_(p)
#define GX_ASTORE(p, v, o) ((void)_InterlockedExchange((volatile long *)(p), (long)(v)))
#define GX_AADD(p, v, o) _InterlockedExchangeAdd((volatile long *)(p), (long)(v))
#define GX_AXCHG(p, v, o) _InterlockedExchange((volatile long *)(p), (long)(v))
#define GX_ACAS(p, e, v) (_InterlockedCompareExchange((volatile long *)(p), (long)(v), (long)(e)) == (long)(e))
#define GX_AADD_INTP(p, v, o) ((gx_aintp)_InterlockedExchangeAdd64((volatile __int64 *)(p), (__int64)(v)))
#define GX_ASTORE_INTP(p, v, o) ((void)_InterlockedExchange64((volatile __int64 *)(p), (__int64)(v)))
#define GX_ALOAD_PTR(p, o) gx_aload_ptr_((void *const volatile *)(p))
#define GX_ACAS_PTR(p, e, v)                                                        \
    (_InterlockedCompareExchangePointer((void *volatile *)(p), (void *)(v), (void *)(e)) == (void *)(e))

#else
#define GX_HAVE_ATOMICS 0
#endif

#endif
