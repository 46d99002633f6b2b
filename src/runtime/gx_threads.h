/*
 * gx_threads.h -- what the thread pool (gx_pool.c) needs from the system,
 * one spelling per system; the pool's logic is the same on each.
 *   GX_THREADS_POSIX: POSIX threads (Linux, macOS, the BSDs).
 *   GX_THREADS_WIN32: Windows threads (MSVC, clang-cl, mingw-w64): SRW
 *     locks, condition variables, one-time initialisation and
 *     _beginthreadex, all of Windows Vista and later.
 *   neither (GX_THREADS 0): no threads; the pool runs every call on its caller.
 *
 *   gx_mutex_t m = GX_MUTEX_INIT;  gx_mutex_lock(&m), gx_mutex_unlock(&m)
 *   gx_cond_t c = GX_COND_INIT;    gx_cond_wait(&c, &m), gx_cond_signal(&c),
 *                                  gx_cond_broadcast(&c)
 *   gx_once_t o = GX_ONCE_INIT;    gx_call_once(&o, fn): fn() once per process
 *   gx_thread_start(fn, arg)       a detached thread running fn(arg), with a
 *                                  stack of >= 1 MiB and (POSIX) every
 *                                  signal blocked; 1 if it started
 *   gx_yield()                     the core to any other runnable thread
 *   gx_now_ns()                    a monotonic clock, ns
 *   gx_thread_cpu_ns()             the calling thread's CPU time, ns; -1
 *                                  where the system cannot tell it finely
 *                                  (Windows: GetThreadTimes counts in clock
 *                                  ticks, ~15.6 ms, longer than most calls)
 *   gx_online_cpus()               the CPUs this process may run on; 0: unknown
 *   GX_CPU_RELAX()                 the spin-wait hint (pause, yield)
 * What only Linux has (affinity, the thread's core) stays in gx_pool.c,
 * behind __linux__; fork handling (pthread_atfork) is POSIX only.
 */
#ifndef GX_THREADS_H
#define GX_THREADS_H

#define GX_THREADS_POSIX 1
#define GX_THREADS_WIN32 2

#if defined(_WIN32)
#define GX_THREADS GX_THREADS_WIN32
#elif !defined(_WIN32) && (defined(__unix__) || defined(__APPLE__))
#include <unistd.h>
#if defined(_POSIX_THREADS) && _POSIX_THREADS > 0
#define GX_THREADS GX_THREADS_POSIX
#endif
#endif
#ifndef GX_THREADS
#define GX_THREADS 0
#endif

#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)
#if defined(__GNUC__)
#define GX_CPU_RELAX() __builtin_ia32_pause()
#else
#include <intrin.h>
#define GX_CPU_RELAX() _mm_pause()
#endif
#elif defined(__aarch64__) && defined(__GNUC__)
#define GX_CPU_RELAX() __asm__ __volatile__("yield")
#elif defined(_M_ARM64)
#include <intrin.h>
#define GX_CPU_RELAX() __yield()
#else
#define GX_CPU_RELAX() ((void)0)
#endif

#include <stdlib.h>

/* What a new thread runs: fn(arg), from a heap record its entry takes and
 * frees (each system's entry function has its own signature, below). */
typedef void (*gx_thread_fn)(size_t arg);
typedef struct { gx_thread_fn fn; size_t arg; } gx_thread_start_t;
static inline gx_thread_start_t *gx_thread_record_(gx_thread_fn fn, size_t arg)
{
    gx_thread_start_t *s = (gx_thread_start_t *)malloc(sizeof *s);
    if (s) {
        s->fn = fn;
        s->arg = arg;
    }
    return s;
}
static inline void gx_thread_run_(void *p)
{
    gx_thread_start_t s = *(gx_thread_start_t *)p;
    free(p);
    s.fn(s.arg);
}

/* ---------------------------------------------------------------- POSIX -- */
#if GX_THREADS == GX_THREADS_POSIX
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>

typedef pthread_mutex_t gx_mutex_t;
typedef pthread_cond_t gx_cond_t;
typedef pthread_once_t gx_once_t;
#define GX_MUTEX_INIT PTHREAD_MUTEX_INITIALIZER
#define GX_COND_INIT PTHREAD_COND_INITIALIZER
#define GX_ONCE_INIT PTHREAD_ONCE_INIT
static inline void gx_mutex_lock(gx_mutex_t *m) { pthread_mutex_lock(m); }
static inline void gx_mutex_unlock(gx_mutex_t *m) { pthread_mutex_unlock(m); }
static inline void gx_cond_wait(gx_cond_t *c, gx_mutex_t *m) { pthread_cond_wait(c, m); }
static inline void gx_cond_signal(gx_cond_t *c) { pthread_cond_signal(c); }
static inline void gx_cond_broadcast(gx_cond_t *c) { pthread_cond_broadcast(c); }
static inline void gx_call_once(gx_once_t *o, void (*fn)(void)) { pthread_once(o, fn); }
static inline void gx_yield(void) { sched_yield(); }

static void *gx_thread_entry_(void *p)
{
    gx_thread_run_(p);
    return NULL;
}
static inline int gx_thread_start(gx_thread_fn fn, size_t arg)
{
    sigset_t all, old;
    pthread_attr_t at;
    pthread_t t;
    size_t ss = 0;
    int ok;
    gx_thread_start_t *s = gx_thread_record_(fn, arg);
    if (!s) return 0;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    /* the kernels keep up to ~250 KiB of block buffers on the stack (a
     * float16 fused-bias gradient: GX_FN(run_16bit), the bias block and the
     * float32 split): 1 MiB where the default is smaller (musl) */
    if (pthread_attr_getstacksize(&at, &ss) == 0 && ss < ((size_t)1 << 20))
        pthread_attr_setstacksize(&at, (size_t)1 << 20);
    /* signals (Ctrl-C) keep going to the interpreter's threads */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    ok = pthread_create(&t, &at, gx_thread_entry_, s) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&at);
    if (!ok) free(s);
    return ok;
}

static inline long long gx_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
static inline long long gx_thread_cpu_ns(void)
{
#if defined(CLOCK_THREAD_CPUTIME_ID)
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
        return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
#endif
    return -1;
}
static inline int gx_online_cpus(void)
{
#if defined(_SC_NPROCESSORS_ONLN)
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 && n < (1L << 20) ? (int)n : 0;
#else
    return 0;
#endif
}

/* -------------------------------------------------------------- Windows -- */
#elif GX_THREADS == GX_THREADS_WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#include <process.h>

typedef SRWLOCK gx_mutex_t;
typedef CONDITION_VARIABLE gx_cond_t;
typedef INIT_ONCE gx_once_t;
#define GX_MUTEX_INIT SRWLOCK_INIT
#define GX_COND_INIT CONDITION_VARIABLE_INIT
#define GX_ONCE_INIT INIT_ONCE_STATIC_INIT
static inline void gx_mutex_lock(gx_mutex_t *m) { AcquireSRWLockExclusive(m); }
static inline void gx_mutex_unlock(gx_mutex_t *m) { ReleaseSRWLockExclusive(m); }
static inline void gx_cond_wait(gx_cond_t *c, gx_mutex_t *m) { SleepConditionVariableSRW(c, m, INFINITE, 0); }
static inline void gx_cond_signal(gx_cond_t *c) { WakeConditionVariable(c); }
static inline void gx_cond_broadcast(gx_cond_t *c) { WakeAllConditionVariable(c); }
typedef struct { void (*fn)(void); } gx_once_fn_t;
static BOOL CALLBACK gx_once_entry_(PINIT_ONCE o, PVOID p, PVOID *ctx)
{
    (void)o;
    (void)ctx;
    ((gx_once_fn_t *)p)->fn();
    return TRUE;
}
static inline void gx_call_once(gx_once_t *o, void (*fn)(void))
{
    gx_once_fn_t f = {fn};
    InitOnceExecuteOnce(o, gx_once_entry_, &f, NULL);
}
static inline void gx_yield(void) { SwitchToThread(); }

static unsigned __stdcall gx_thread_entry_(void *p)
{
    gx_thread_run_(p);
    return 0;
}
static inline int gx_thread_start(gx_thread_fn fn, size_t arg)
{
    uintptr_t h;
    gx_thread_start_t *s = gx_thread_record_(fn, arg);
    if (!s) return 0;
    /* 1 MiB of stack reserved, as the POSIX branch asks (the CRT's
     * _beginthreadex, not CreateThread: the thread calls the C library) */
    h = _beginthreadex(NULL, 1u << 20, gx_thread_entry_, s, STACK_SIZE_PARAM_IS_A_RESERVATION, NULL);
    if (h == 0) {
        free(s);
        return 0;
    }
    CloseHandle((HANDLE)h);         /* detached */
    return 1;
}

static inline long long gx_now_ns(void)
{
    static LARGE_INTEGER f;         /* ticks per second, fixed at boot */
    LARGE_INTEGER c;
    if (f.QuadPart == 0) QueryPerformanceFrequency(&f);
    QueryPerformanceCounter(&c);
    return c.QuadPart / f.QuadPart * 1000000000LL + c.QuadPart % f.QuadPart * 1000000000LL / f.QuadPart;
}
static inline long long gx_thread_cpu_ns(void) { return -1; }
static inline int gx_online_cpus(void)
{
    DWORD_PTR proc, sys;
    SYSTEM_INFO si;
    int n = 0;
    if (GetProcessAffinityMask(GetCurrentProcess(), &proc, &sys))
        for (; proc; proc &= proc - 1) n++;
    if (n > 0) return n;
    GetSystemInfo(&si);
    return (int)si.dwNumberOfProcessors;
}
#endif

#endif
