/*
 * gx_pool.c -- gelu_ext's own thread pool (why not OpenMP: the
 * design points below).
 *
 * States.  Everything the pool knows is one struct, gx_pool, guarded by its
 * lock; the fork() child replaces it whole with a fresh one.
 *
 * The pool's phase (gx_pool.phase), changed under the lock only:
 *
 *   phase    what holds                             leaves for   when, by
 *   -------  -------------------------------------  -----------  --------------------------------
 *   IDLE     no job; a caller may open one          OPEN         a caller holding a slot and not
 *                                                                backing off opens a job: next
 *                                                                job number, workers it lacks
 *                                                                started (gx_open_job)
 *   OPEN     a job owns the pool; workers may join  CLOSING      its owner finds no chunk left
 *            it; owner and workers take chunks                   (gx_close_job)
 *   CLOSING  no worker joins; workers between       IDLE         no worker is left in the job,
 *            chunks are cut loose; the owner waits               after the owner spun, pulled
 *            for those still computing a chunk                   stragglers and slept
 *                                                                (gx_close_job)
 *   any      a fork()ed child's copy                IDLE         at once: a fresh pool, no
 *                                                                workers (gx_atfork_child)
 *
 * gx_pool_shutdown (at process exit) sets `shut`: no caller opens a job
 * again (gx_may_own), so every later call runs on its caller; and `stop`:
 * each worker ends when it next waits for a job (gx_await_job) -- a worker
 * in a job once it has left it -- counting itself in `exited`, and
 * gx_pool_shutdown returns when all have.  A fork()ed child's fresh pool
 * has neither set.
 *
 * A caller of a large call first takes a slot (gx_take_slot: it sleeps
 * while the threads computing large calls reach its thread count), then
 * owns a job if the pool is IDLE and not backing off (gx_may_own), else
 * computes the whole call on its own thread.
 *
 * A worker's place in the job (gx_slot_t.state, atomic):
 *
 *   from     to     when, by
 *   -------  -----  ------------------------------------------------------------
 *   OUT      IN     it joins: the job is OPEN and new to it, short of workers
 *                   (job.want) and of threads computing (job.nt), and no caller
 *                   waits for a slot (gx_joinable, gx_join; under the lock)
 *   IN       CHUNK  it claims a chunk (gx_run_chunks; compare-and-swap)
 *   CHUNK    IN     it finished the chunk (gx_run_chunks)
 *   IN       CUT    the owner, out of chunks, counts it out of the job
 *                   (gx_cut_loose; compare-and-swap under the lock)
 *   IN, CUT  OUT    it leaves: no chunk left, a caller waits for a slot, or it
 *                   was cut loose (gx_leave; under the lock)
 *   OUT      (ends) `stop` is set (gx_await_job, gx_worker; under the lock)
 *
 * A worker in CHUNK while the job is CLOSING may be pulled onto the owner's
 * core (pulled: its mask is that core alone until it leaves; then, if its
 * mask is still that core alone, the mask it had before the pull, and if
 * anyone set it meanwhile, the mask they set).
 * Counts:
 *   joined     the workers in IN or CHUNK, one counter (atomic: the owner
 *              spins on it), moved with each transition into or out of
 *              them: gx_join, gx_cut_loose, gx_leave;
 *   callers    owners and callers computing alone (gx_take_slot, and the
 *              end of gx_pool_run);
 *   running    threads computing large calls: callers + joined, derived
 *              where it is read (gx_running), never kept.
 *
 * Design (each point answers a failure measured with libgomp or on busy
 * cores):
 * - fork(): GNU libgomp's pool does not survive fork, so a child hung on its
 *   first threaded call.  Here pthread_atfork's prepare handler takes the
 *   pool lock (so no thread is half-way through a change of state), the
 *   parent handler releases it, and the child handler releases it and
 *   replaces the pool with a fresh one: no workers (they do not exist in the
 *   child), IDLE, no back-off, counters at 0, new synchronisation objects.
 *   The child starts its own workers on its first threaded call, as the
 *   parent did.  A call in flight in another parent thread carries on in the
 *   parent; the child never waits for it.
 * - Busy cores: the work is cut into chunks taken from an atomic counter by
 *   the owner and the workers alike.  A worker that is descheduled, or wakes
 *   late, simply takes fewer chunks; the owner never waits for a thread that
 *   has not started, only for chunks already being computed.  After a job a
 *   worker spins up to GX_SPIN_NS (100 us) for the next one, giving its core
 *   to any other runnable thread every 64 polls, then sleeps on a condition
 *   variable.
 * - Callers that are threads themselves: one job at a time owns the pool.
 *   Every thread computing a large call (callers and workers) holds a
 *   "slot"; a caller that finds nthreads slots taken sleeps until one frees,
 *   and a worker gives its slot up after its current chunk when a caller is
 *   waiting.  A caller that finds the pool owned by another job runs its
 *   call on its own thread.  So the threads computing large calls never
 *   exceed the callers' thread count (the largest, where callers ask for
 *   different ones), and k callers keep the cores as busy as one caller
 *   with all threads.
 * - Next to other runtimes: right after a BLAS call (OpenBLAS's
 *   workers spin with sched_yield for ~0.1 s) or a PyTorch op (libgomp's
 *   spin without yielding for a few ms), the other cores are taken by
 *   spinners, so the kernel's wake-up placement put our woken worker on the
 *   *caller's* core, where it preempted the caller and computed the whole
 *   call alone (measured: 30 of 30 calls after np.matmul, the caller 0
 *   items).  A worker that finds itself on the job owner's core moves off it
 *   (Linux: it sets its mask to the one it has without that core, which
 *   migrates it, then puts its mask back, which leaves it where it landed);
 *   on the other core a yielding spinner hands it the core at once.
 * - Stragglers: a worker descheduled (its core taken by a spinner or
 *   another process for a time slice, milliseconds) would keep the owner
 *   waiting for the whole slice.  A worker claims each chunk by moving its
 *   state from IN to CHUNK (compare-and-swap), so the owner, out of chunks,
 *   cuts loose every worker between chunks and waits only for chunks being
 *   computed.  For those it spins twice its own time per chunk (100 us if
 *   it computed none) plus GX_PULL_MIN_NS (20 us), at most GX_SPIN_NS
 *   (100 us); then it pulls their workers onto its own core (Linux: their
 *   mask that core alone until they leave the job) and sleeps, so a
 *   straggler runs there at once.
 * - Affinity: a move only narrows a thread's mask to part of the mask it
 *   has at that moment, read just before, and puts back exactly that mask,
 *   so a process started under `taskset`, or narrowed later, keeps every
 *   thread inside its mask (tests/test_pool_affinity.py).  A pull lasts
 *   until the worker leaves the job, so its undoing checks first that the
 *   mask is still the one core the pull set: one set meanwhile (`taskset -a
 *   -p`, os.sched_setaffinity) stays.  Two cases remain that no check of
 *   the mask can tell apart: a mask set between the two system calls of a
 *   move, a pull or a restore (microseconds) is replaced; and a mask set
 *   to exactly the core a worker was pulled onto is taken for the pull's
 *   and replaced by the mask from before the pull.  A cgroup's cpuset is
 *   the kernel's to enforce: it confines every mask set.
 * - The lock guards bookkeeping only: it is never held across a chunk, a
 *   spin or a wake-up.  Condition variables are signalled after unlocking
 *   (gx_unlock_then_wake): a woken thread that preempts the signaller would
 *   otherwise find the lock held and sleep again until the signaller is
 *   scheduled back (measured on busy cores, milliseconds per call).  The
 *   system calls made under the lock are starting workers (gx_grow) and
 *   pulling stragglers (which must not interleave with a worker putting
 *   its own mask back), besides reading the clock and the current core.
 * - A threaded call is judged by the work its workers did, not by time off
 *   the core: it lost when the owner waited on them longer than the CPU
 *   time they put into it (GX_STALL_NS).  A worker that joins late, shares
 *   a core with a yielding spinner or never joins costs nothing by this
 *   rule; a straggler on busy cores does.
 * - What no pool can get: a spinner holds its core.  OpenBLAS's yields, but
 *   the scheduler (CFS, EEVDF) still gives it its fair share of that core
 *   once our worker has run its own: a call longer than a time slice, next
 *   to one spinner per core, gets about half a core per worker (2 cores:
 *   4/3x one thread, not 2x).  libgomp's does not yield at all; a worker
 *   woken onto its core waits for its time slice (a few ms) or for the
 *   spin to end.  The owner then computes most of such a call itself, no
 *   slower than serial.
 * - Results cannot depend on this: each item is computed by the same code
 *   whichever thread takes its chunk.
 * The system underneath (gx_threads.h): POSIX threads or Windows threads;
 * fork handling is POSIX's, moving and pulling workers between cores
 * Linux's (elsewhere the scheduler places them), a thread's CPU time for
 * the stall rule POSIX's (Windows counts it in clock ticks: the rule's
 * fallback applies).  Without threads or atomics (gx_atomic.h), or built
 * with GX_POOL_SERIAL (GELU_EXT_NO_THREADS=1), every call runs on the
 * calling thread.
 */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1           /* sched_getaffinity, CPU_COUNT */
#endif
#include "gx_pool.h"
#include "gx_atomic.h"
#include "gx_threads.h"

#include <stdlib.h>

#if !defined(GX_POOL_SERIAL) && GX_THREADS && GX_HAVE_ATOMICS
#define GX_POOL_THREADED 1
#else
#define GX_POOL_THREADED 0
#endif

#if GX_POOL_THREADED

#if defined(__linux__)
#include <sched.h>
#include <sys/syscall.h>
#endif

#define GX_POOL_MAX 255         /* worker threads at most */
/* A worker spins this long after a job for the next one, then sleeps; the
 * owner, out of chunks, spins at most this long for the workers' last
 * chunks (gx_close_job), then sleeps. */
#define GX_SPIN_NS 100000LL
/* A stall is a threaded call slower than one thread would have been: the
 * owner, out of chunks, waited for workers still computing longer than the
 * CPU time (CLOCK_THREAD_CPUTIME_ID) the workers put into the call's
 * chunks, plus GX_STALL_NS -- what they cost it exceeds what they saved it.
 * (A worker cut loose counts on neither side: the owner does not wait for
 * it, and its CPU time may come in after the job has ended.)  Typically a
 * worker descheduled holding a chunk: the cores are busy with other
 * processes, and a threaded call is exposed to it on every thread
 * (measured, such calls took 3-20x a serial one).  The owner's own time off
 * its core counts for neither side: a serial call would lose it too.  Where
 * the system cannot tell a thread's CPU time, a wait longer than a quarter
 * of the owner's own time plus GX_STALL_NS is the sign.  After a stall, the
 * next `backoff` calls that would own the pool (or GX_BACKOFF_MAX_NS,
 * whichever ends first, for rare calls) run on the caller alone; `backoff`
 * grows 4x per stall from GX_BACKOFF_MIN_CALLS to GX_BACKOFF_MAX_CALLS and
 * halves after a threaded call a worker helped without a stall.  So on a
 * busy machine one call in hundreds probes the threads, and on an idle one
 * nothing changes. */
#ifndef GX_BACKOFF_MAX_CALLS          /* -DGX_BACKOFF_MAX_CALLS=0: never back off (race tests) */
#define GX_BACKOFF_MAX_CALLS 1024
#endif
#define GX_STALL_NS 50000LL
/* The owner, out of chunks, spins twice its own time per chunk plus this
 * (at most GX_SPIN_NS) for workers still computing before it pulls them
 * onto its core. */
#define GX_PULL_MIN_NS 20000LL
/* 2: the first stall sends 8 calls to one thread.  An idle VM's host now
 * and then deschedules a vCPU for milliseconds (one stall in 60-90 calls of
 * 2^24 elements on a 2-vCPU AMD EPYC); at 8 (32 calls) one such event made
 * a benchmark of ~30 calls read 0.65x np.copyto instead of 0.85-0.94x.  On
 * busy cores stalls repeat and the back-off still reaches 1024 in 4 probes. */
#define GX_BACKOFF_MIN_CALLS 2
#define GX_BACKOFF_MAX_NS 1000000000LL

/* Parse OMP_NUM_THREADS the way OpenMP does for its first level: a positive
 * integer, possibly followed by ",..." for nested levels; anything else is
 * ignored (0). */
static int gx_env_threads(void)
{
    const char *s = getenv("OMP_NUM_THREADS");
    char *end;
    long v;
    if (!s) return 0;
    v = strtol(s, &end, 10);
    while (*end == ' ' || *end == '\t') end++;
    if (end == s || (*end != '\0' && *end != ',') || v < 1) return 0;
    return v > 1024 ? 1024 : (int)v;
}

/* Configuration, read once per process and kept by a fork()ed child (it
 * uses its parent's thread count); everything else is in gx_pool. */
static gx_once_t gx_once = GX_ONCE_INIT;
static int gx_default = 1;

/* A worker's place in a job (gx_slot_t.state; the table at the top of this
 * file): a worker between chunks (IN) can be cut loose by the owner (CUT),
 * a worker holding a chunk (CHUNK) is waited for. */
enum { GX_W_OUT, GX_W_IN, GX_W_CHUNK, GX_W_CUT };
/* One per worker thread; state is atomic, the rest under the lock. */
typedef struct {
    long seen0;                 /* the job number it starts from */
    long state;                 /* GX_W_* */
    int pulled;                 /* the owner set its mask to core pull_cpu alone */
    int pull_cpu;
    long tid;                   /* kernel thread id, set when it joins; 0: unknown */
#if defined(__linux__)
    cpu_set_t home;             /* its mask before the owner pulled it: what it restores
                                 * if its mask is still pull_cpu alone */
#endif
} gx_slot_t;

/* Where the pool is in a job's life (the table at the top of this file). */
typedef enum { GX_IDLE, GX_OPEN, GX_CLOSING } gx_phase_t;

/* What the owner publishes when it opens a job; a worker copies it. */
typedef struct {
    gx_pool_fn fn;
    void *ctx;
    gx_pool_intp n, chunk, nchunks;
    int nt;                     /* the owner's thread count */
    int want;                   /* workers the job may take */
    int owner_core;             /* the core the owner opened it on (-1: unknown) */
    long long t_open;           /* when it was opened */
} gx_job_t;

/* Everything the pool knows, in one place, so that a fork()ed child can
 * start from a fresh one (gx_atfork_child).  Guarded by lk, but for `next`
 * and `witems`, only touched atomically; gen, joined and waiting are
 * written atomically under lk because spinning threads and the chunk loop
 * also read them unlocked. */
typedef struct {
    gx_mutex_t lk;
    gx_cond_t wake;             /* workers: a job opened */
    gx_cond_t idle;             /* owner: last worker left */
    gx_cond_t slot;             /* callers: a slot freed */
    gx_cond_t gone;             /* gx_pool_shutdown: the last worker ended */
    gx_phase_t phase;
    long gen;                   /* job number, so a worker joins a job once */
    int nworkers;               /* worker threads started (alive, or ended when stop is set) */
    int exited;                 /* workers ended (gx_pool_shutdown) */
    int stop;                   /* workers out of a job end (gx_pool_shutdown) */
    int shut;                   /* gx_pool_shutdown ran: every call on its caller */
    int sleeping;               /* workers asleep on wake */
    int owner_sleeping;         /* the owner is asleep on idle */
    int callers;                /* callers computing large calls: the owner and those alone */
    long joined;                /* workers inside the job now */
    long waiting;               /* callers sleeping for a slot */
    gx_job_t job;
    gx_pool_intp next;          /* the job's next unclaimed chunk */
    gx_pool_intp witems;        /* items workers computed in the job */
    long long cpu_ns;           /* CPU ns workers spent in the job's chunks; -1: unknown */
    long long done_ns;          /* when the last worker counted in the job left it */
    long long stall_t;          /* time of the last stall; 0: not backing off */
    long stall_calls;           /* calls run serially since */
    long backoff;               /* calls to run serially after a stall */
    long long st[GX_POOL_NSTATS];   /* the counters of gx_pool_stats */
    gx_slot_t slots[GX_POOL_MAX];
} gx_pool_t;
#define GX_POOL_FRESH {.lk = GX_MUTEX_INIT, .wake = GX_COND_INIT, .idle = GX_COND_INIT, \
                       .slot = GX_COND_INIT, .gone = GX_COND_INIT, .backoff = GX_BACKOFF_MIN_CALLS}
static gx_pool_t gx_pool = GX_POOL_FRESH;

/* Threads computing large calls: callers and the workers in the job (under lk). */
static int gx_running(void) { return gx_pool.callers + (int)gx_pool.joined; }

/* The most threads computing at once (GX_POOL_MAX_RUNNING), under lk. */
static void gx_note_running(void)
{
    if (gx_running() > gx_pool.st[GX_POOL_MAX_RUNNING]) gx_pool.st[GX_POOL_MAX_RUNNING] = gx_running();
}

/* Take and compute chunks of `job` until none is left; returns the items
 * computed.  A worker (me != NULL) claims each chunk by moving its state
 * from IN to CHUNK first and back to IN after: once the owner has cut it
 * loose (CUT) it claims nothing more, so the owner never waits for a worker
 * that holds no chunk (descheduled between chunks, or not yet started). */
static gx_pool_intp gx_run_chunks(const gx_job_t *job, gx_slot_t *me)
{
    gx_pool_intp done = 0;
    for (;;) {
        if (me && !GX_ACAS(&me->state, GX_W_IN, GX_W_CHUNK))
            return done;            /* cut loose */
        gx_pool_intp i = GX_AADD_INTP(&gx_pool.next, 1, SEQ_CST);
        if (i >= job->nchunks) {
            if (me) GX_ASTORE(&me->state, GX_W_IN, RELEASE);
            return done;
        }
        gx_pool_intp lo = i * job->chunk, hi = lo + job->chunk < job->n ? lo + job->chunk : job->n;
        job->fn(job->ctx, lo, hi);
        done += hi - lo;
        if (!me) continue;
        GX_AADD_INTP(&gx_pool.witems, hi - lo, RELAXED);
        GX_ASTORE(&me->state, GX_W_IN, RELEASE);
        /* a caller is sleeping for a slot: hand it ours; the job's owner
         * and any other worker finish the chunks */
        if (GX_ALOAD(&gx_pool.waiting, RELAXED)) return done;
    }
}

/* Whom gx_unlock_then_wake wakes: bits. */
enum { GX_WAKE_WORKERS = 1, GX_WAKE_OWNER = 2, GX_WAKE_CALLERS = 4 };

/* Release the lock, then wake `who`.  Signalled after unlocking, a woken
 * thread that preempts us does not find the lock held and sleep again until
 * we are scheduled back (measured on busy cores, that cost milliseconds per
 * call). */
static void gx_unlock_then_wake(unsigned who)
{
    gx_mutex_unlock(&gx_pool.lk);
    if (who & GX_WAKE_WORKERS) gx_cond_broadcast(&gx_pool.wake);
    if (who & GX_WAKE_OWNER) gx_cond_signal(&gx_pool.idle);
    if (who & GX_WAKE_CALLERS) gx_cond_broadcast(&gx_pool.slot);
}

/* GX_WAKE_CALLERS if a caller sleeps for a slot (under the lock). */
static unsigned gx_callers_to_wake(void) { return gx_pool.waiting > 0 ? GX_WAKE_CALLERS : 0; }

/* The core the calling thread runs on, -1 where the system cannot say. */
static int gx_current_cpu(void)
{
#if defined(__linux__)
    return sched_getcpu();
#else
    return -1;
#endif
}

/* The calling thread's kernel id, 0 where there is none to give. */
static long gx_gettid(void)
{
#if defined(__linux__) && defined(SYS_gettid)
    return (long)syscall(SYS_gettid);
#else
    return 0;
#endif
}

/* Cut loose every worker of the job that is between chunks (under the lock,
 * the owner out of chunks): it claims nothing more (gx_run_chunks) and the
 * owner stops counting it, so the owner waits only for chunks being
 * computed -- not for a worker descheduled before its first chunk or
 * between two, which would cost the owner that worker's time off its core
 * (after a matmul: a worker moved off the owner's core that waited there
 * behind a spinner, ~0.1 ms of a 0.5 ms call).  The worker finds CUT when
 * it tries to claim a chunk, or when it leaves (gx_leave). */
static void gx_cut_loose(void)
{
    for (int i = 0; i < gx_pool.nworkers; i++) {
        if (GX_ACAS(&gx_pool.slots[i].state, GX_W_IN, GX_W_CUT)) GX_AADD(&gx_pool.joined, -1, RELEASE);
    }
}

/* Affinity moves (Linux; elsewhere the scheduler alone places threads),
 * confined as the design point "Affinity" says. */
#if defined(__linux__)
/* 1 if core `cpu` (-1: unknown) is in `set`. */
static int gx_has_cpu(const cpu_set_t *set, int cpu)
{
    return cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, set);
}

/* A worker woken onto the core of the job's owner moves off it: both would
 * share one core while the other is taken by another runtime's spinner
 * (the kernel places a wakee on the waker's core when no core is idle).
 * Setting the thread's mask to its own without that core moves it now;
 * putting its mask back leaves it where it landed.  Returns 1 if it
 * moved. */
static int gx_leave_core(int cpu)
{
    cpu_set_t mine, other;
    if (cpu < 0 || gx_current_cpu() != cpu || sched_getaffinity(0, sizeof mine, &mine) != 0 ||
        !gx_has_cpu(&mine, cpu) || CPU_COUNT(&mine) < 2)
        return 0;
    other = mine;
    CPU_CLR(cpu, &other);
    if (sched_setaffinity(0, sizeof other, &other) != 0) return 0;
    sched_setaffinity(0, sizeof mine, &mine);
    return 1;
}

/* Pull the workers still holding a chunk onto the owner's core `cpu` (under
 * the lock, so that a worker cannot leave the job, and restore its mask,
 * between the two system calls), as the owner, out of chunks, is about to
 * sleep until they finish: a worker that has not finished its chunk by
 * then is almost always off its core (descheduled for another process's or
 * runtime's time slice, milliseconds), and the owner's core is about to be
 * free.  A worker whose mask lacks that core, or is that core alone, stays
 * as it is.  Each pulled worker restores its own mask when it leaves the
 * job (gx_restore_mask).  Returns the workers pulled. */
static int gx_pull_stragglers(int cpu)
{
    int k = 0;
    cpu_set_t here;
    if (cpu < 0 || cpu >= CPU_SETSIZE) return 0;
    CPU_ZERO(&here);
    CPU_SET(cpu, &here);
    for (int i = 0; i < gx_pool.nworkers; i++) {
        gx_slot_t *w = &gx_pool.slots[i];
        if (GX_ALOAD(&w->state, ACQUIRE) != GX_W_CHUNK || w->tid <= 0 ||
            sched_getaffinity((pid_t)w->tid, sizeof w->home, &w->home) != 0 ||
            !gx_has_cpu(&w->home, cpu) || CPU_COUNT(&w->home) < 2)
            continue;
        if (sched_setaffinity((pid_t)w->tid, sizeof here, &here) == 0) {
            w->pulled = 1;
            w->pull_cpu = cpu;
            k++;
        }
    }
    return k;
}

/* The worker's mask back to what it was before the owner pulled it, if it
 * is still what the pull set (core pull_cpu alone): a mask set since, by
 * `taskset -a -p` or os.sched_setaffinity while the worker finished its
 * chunk, is its user's and stays. */
static void gx_restore_mask(gx_slot_t *me)
{
    cpu_set_t now;
    if (sched_getaffinity(0, sizeof now, &now) == 0 && CPU_COUNT(&now) == 1 && gx_has_cpu(&now, me->pull_cpu))
        sched_setaffinity(0, sizeof me->home, &me->home);
}
#else
static int gx_leave_core(int cpu) { (void)cpu; return 0; }
static int gx_pull_stragglers(int cpu) { (void)cpu; return 0; }
static void gx_restore_mask(gx_slot_t *me) { (void)me; }
#endif

/* Spin without the lock while (*p == v) == while_equal, at most ns.  It
 * looks at the clock every 64 polls and, if `yield`, gives the core to any
 * other runnable thread then.  A worker waiting for the next job yields
 * (it has nothing better to do); the owner waiting for the last chunks of
 * its own call does not, for a spin of at most GX_SPIN_NS, after which a
 * straggler is pulled onto its core (gx_pull_stragglers). */
static void gx_spin(const long *p, long v, int while_equal, long long ns, int yield)
{
    long long end = gx_now_ns() + ns;
    for (unsigned k = 1; (GX_ALOAD(p, ACQUIRE) == v) == while_equal; k++) {
        GX_CPU_RELAX();
        if ((k & 63) == 0) {
            if (gx_now_ns() > end) return;
            if (yield) gx_yield();
        }
    }
}

/* A worker that last joined job `seen` may join the pool's job now (under
 * the lock): the job is OPEN, new to it, short of workers, short of
 * threads computing, and no caller waits for a slot. */
static int gx_joinable(long seen)
{
    return gx_pool.phase == GX_OPEN && gx_pool.gen != seen && gx_pool.joined < gx_pool.job.want &&
           gx_running() < gx_pool.job.nt && gx_pool.waiting == 0;
}

/* Wait (under the lock, which it drops to spin) until the worker may join a
 * job (returns 1) or is to end (gx_pool_shutdown; returns 0): it spins up
 * to GX_SPIN_NS for the next job number, yielding, then sleeps.  The spin
 * exists because waking a sleeping thread is slow where it matters most
 * (measured ~0.2-0.3 ms on this project's 2-vCPU VM, as long as a whole
 * 2^20-element call): a worker stays awake for
 * back-to-back calls, then gives the core away; yielding, it lets any
 * other runnable thread on its core run first. */
static int gx_await_job(long seen)
{
    long g;
    if (gx_pool.stop) return 0;
    if (gx_joinable(seen)) return 1;
    g = gx_pool.gen;
    gx_mutex_unlock(&gx_pool.lk);
    gx_spin(&gx_pool.gen, g, 1, GX_SPIN_NS, 1);
    gx_mutex_lock(&gx_pool.lk);
    while (!gx_pool.stop && !gx_joinable(seen)) {
        gx_pool.sleeping++;
        gx_cond_wait(&gx_pool.wake, &gx_pool.lk);
        gx_pool.sleeping--;
    }
    return !gx_pool.stop;
}

/* Join the pool's job (under the lock); returns a copy of it. */
static gx_job_t gx_join(gx_slot_t *me, long tid)
{
    GX_AADD(&gx_pool.joined, 1, RELAXED);   /* read unlocked by a spinning owner */
    GX_ASTORE(&me->state, GX_W_IN, RELEASE);
    me->tid = tid;
    gx_pool.st[GX_POOL_HELPED]++;
    gx_pool.st[GX_POOL_JOIN_NS] += gx_now_ns() - gx_pool.job.t_open;
    gx_note_running();
    return gx_pool.job;
}

/* Leave the job after `cpu` ns of CPU time in its chunks (-1: unknown),
 * under the lock; returns whom to wake.  A worker cut loose leaves the
 * job's tallies alone: the owner counted it out already, and the tallies
 * may be the next job's by now. */
static unsigned gx_leave(gx_slot_t *me, long long cpu)
{
    if (GX_AXCHG(&me->state, GX_W_OUT, ACQ_REL) == GX_W_CUT) return gx_callers_to_wake();
    if (cpu < 0 || gx_pool.cpu_ns < 0) gx_pool.cpu_ns = -1;
    else gx_pool.cpu_ns += cpu;
    if (GX_AADD(&gx_pool.joined, -1, RELEASE) == 1) gx_pool.done_ns = gx_now_ns();
    return (gx_pool.joined == 0 && gx_pool.owner_sleeping ? GX_WAKE_OWNER : 0) | gx_callers_to_wake();
}

/* A worker thread: one critical section to join a job and one to leave it;
 * computing, moving off the owner's core and restoring its mask happen
 * outside them.  It ends only between jobs, when gx_pool_shutdown asks. */
static void gx_worker(size_t slot)
{
    gx_slot_t *me = &gx_pool.slots[slot];
    long seen = me->seen0, tid = gx_gettid();
    for (;;) {
        gx_job_t job;
        int moved, pulled;
        long long c0, cpu;

        gx_mutex_lock(&gx_pool.lk);
        if (!gx_await_job(seen)) {
            /* the last to end wakes gx_pool_shutdown; after this the thread
             * touches nothing of the pool but the lock it releases */
            int last = ++gx_pool.exited == gx_pool.nworkers;
            gx_mutex_unlock(&gx_pool.lk);
            if (last) gx_cond_signal(&gx_pool.gone);
            return;
        }
        seen = gx_pool.gen;
        job = gx_join(me, tid);
        gx_mutex_unlock(&gx_pool.lk);

        moved = gx_leave_core(job.owner_core);
        c0 = gx_thread_cpu_ns();
        gx_run_chunks(&job, me);
        cpu = c0 < 0 ? -1 : gx_thread_cpu_ns() - c0;

        gx_mutex_lock(&gx_pool.lk);
        gx_pool.st[GX_POOL_MOVED] += moved;
        pulled = me->pulled;
        me->pulled = 0;
        gx_unlock_then_wake(gx_leave(me, cpu));
        if (pulled) gx_restore_mask(me);    /* no owner pulls it before it joins again */
    }
}

/* Start workers until there are `want` (under the lock); a worker that
 * cannot be started leaves the pool with those it has. */
static void gx_grow(int want)
{
    if (want > GX_POOL_MAX) want = GX_POOL_MAX;
    while (gx_pool.nworkers < want) {
        /* gx_pool.gen - 1 is no job number yet seen: the new worker may join the
         * job being opened now */
        gx_pool.slots[gx_pool.nworkers] = (gx_slot_t){.seen0 = gx_pool.gen - 1};
        if (!gx_thread_start(gx_worker, (size_t)gx_pool.nworkers)) break;
        gx_pool.nworkers++;
    }
}

#if GX_THREADS == GX_THREADS_POSIX
static void gx_atfork_prepare(void) { gx_mutex_lock(&gx_pool.lk); }
static void gx_atfork_parent(void) { gx_mutex_unlock(&gx_pool.lk); }

/* The child has only the thread that called fork(): no workers, no other
 * callers.  It gets a fresh pool (IDLE, no workers, no back-off, counters
 * at 0, new synchronisation objects: their waiters were threads that are
 * gone); its next threaded call starts new workers. */
static void gx_atfork_child(void)
{
    gx_mutex_unlock(&gx_pool.lk);       /* taken by gx_atfork_prepare */
    gx_pool = (gx_pool_t)GX_POOL_FRESH;
}
#endif

static void gx_init(void)
{
    int n = gx_env_threads();
#if defined(__linux__)
    if (n == 0) {
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
    }
#endif
    if (n == 0) n = gx_online_cpus();
    gx_default = n > 0 ? (n > GX_POOL_MAX + 1 ? GX_POOL_MAX + 1 : n) : 1;
#if GX_THREADS == GX_THREADS_POSIX
    pthread_atfork(gx_atfork_prepare, gx_atfork_parent, gx_atfork_child);
#endif
}

int gx_pool_default_threads(void)
{
    gx_call_once(&gx_once, gx_init);
    return gx_default;
}

int gx_pool_threaded(void) { return 1; }

void gx_pool_stats(long long out[GX_POOL_NSTATS], int reset)
{
    gx_mutex_lock(&gx_pool.lk);
    for (int i = 0; i < GX_POOL_NSTATS; i++) {
        out[i] = gx_pool.st[i];
        if (reset) gx_pool.st[i] = 0;
    }
    gx_mutex_unlock(&gx_pool.lk);
}

int gx_pool_workers(void)
{
    int n;
    gx_mutex_lock(&gx_pool.lk);
    n = gx_pool.nworkers;
    gx_mutex_unlock(&gx_pool.lk);
    return n;
}

/* The workers are detached threads, waited for through `exited` rather than
 * joined: a joinable thread's id outlives fork() in ThreadSanitizer's books
 * (bench/pool_race.sh: a child's new worker reuses it, "dup thread"), and a
 * child cannot join its parent's threads anyway. */
void gx_pool_shutdown(void)
{
    gx_mutex_lock(&gx_pool.lk);
    if (gx_pool.shut) {                 /* already (or being) shut down */
        gx_mutex_unlock(&gx_pool.lk);
        return;
    }
    gx_pool.shut = 1;                   /* no job opens from now on (gx_may_own) */
    gx_pool.stop = 1;
    gx_unlock_then_wake(GX_WAKE_WORKERS);
    gx_mutex_lock(&gx_pool.lk);
    /* a worker in a job that was open already finishes its chunks and
     * leaves it as always, then finds stop and ends */
    while (gx_pool.exited < gx_pool.nworkers) gx_cond_wait(&gx_pool.gone, &gx_pool.lk);
    gx_pool.nworkers = gx_pool.exited = 0;
    gx_mutex_unlock(&gx_pool.lk);
}

/* Wait for a compute slot and take it (under the lock): sleep while the
 * threads computing large calls are `nthreads` or more. */
static void gx_take_slot(int nthreads)
{
    if (gx_running() >= nthreads) {
        /* atomic writes: workers read waiting between chunks, unlocked */
        GX_AADD(&gx_pool.waiting, 1, RELAXED);
        while (gx_running() >= nthreads) gx_cond_wait(&gx_pool.slot, &gx_pool.lk);
        GX_AADD(&gx_pool.waiting, -1, RELAXED);
    }
    gx_pool.callers++;
    gx_note_running();
}

/* 1 if the caller is to open a job (under the lock): the pool is IDLE, not
 * shut down and not backing off after a stall (GX_STALL_NS). */
static int gx_may_own(void)
{
    if (gx_pool.phase != GX_IDLE || gx_pool.shut) return 0;
    if (!gx_pool.stall_t) return 1;
    if (gx_pool.stall_calls < gx_pool.backoff && gx_now_ns() - gx_pool.stall_t < GX_BACKOFF_MAX_NS) {
        gx_pool.stall_calls++;
        gx_pool.st[GX_POOL_BACKOFF]++;
        return 0;
    }
    gx_pool.stall_t = 0;                /* probe: try threads again */
    return 1;
}

/* IDLE -> OPEN (under the lock): publish the job, start the workers it
 * lacks, give it the next job number; returns whom to wake. */
static unsigned gx_open_job(gx_pool_fn fn, void *ctx, gx_pool_intp n, gx_pool_intp chunk,
                            gx_pool_intp nchunks, int nthreads)
{
    gx_job_t *job = &gx_pool.job;
    *job = (gx_job_t){.fn = fn, .ctx = ctx, .n = n, .chunk = chunk, .nchunks = nchunks, .nt = nthreads,
                      .want = (nchunks < nthreads ? (int)nchunks : nthreads) - 1,
                      .owner_core = gx_current_cpu()};
    gx_pool.cpu_ns = 0;
    gx_pool.done_ns = 0;
    gx_pool.witems = 0;
    GX_ASTORE_INTP(&gx_pool.next, 0, RELAXED);
    gx_grow(job->want);
    gx_pool.phase = GX_OPEN;
    job->t_open = gx_now_ns();
    GX_ASTORE(&gx_pool.gen, gx_pool.gen + 1, RELEASE);   /* spinning workers */
    return gx_pool.sleeping > 0 ? GX_WAKE_WORKERS : 0;
}

/* OPEN -> CLOSING -> IDLE: the owner, out of chunks, waits for the workers
 * still computing (lock held on entry and on return, dropped to spin and
 * sleep).  `per_chunk`: the owner's own time per chunk. */
static void gx_close_job(long long per_chunk)
{
    gx_pool.phase = GX_CLOSING;         /* late wakers stay out */
    gx_cut_loose();
    if (gx_pool.joined > 0) {
        /* a worker still computing its last chunk: spin twice a chunk's
         * time plus GX_PULL_MIN_NS, at most GX_SPIN_NS, then pull it onto
         * this core and sleep (gx_pull_stragglers), so a worker descheduled
         * holding a chunk costs microseconds, not its time slice */
        long long spin = 2 * per_chunk + GX_PULL_MIN_NS;
        gx_mutex_unlock(&gx_pool.lk);
        gx_spin(&gx_pool.joined, 0, 0, spin < GX_SPIN_NS ? spin : GX_SPIN_NS, 0);
        gx_mutex_lock(&gx_pool.lk);
        gx_cut_loose();
        if (gx_pool.joined > 0) gx_pool.st[GX_POOL_PULLED] += gx_pull_stragglers(gx_current_cpu());
        while (gx_pool.joined > 0) {
            gx_pool.owner_sleeping = 1;
            gx_cond_wait(&gx_pool.idle, &gx_pool.lk);
            gx_pool.owner_sleeping = 0;
        }
    }
    gx_pool.phase = GX_IDLE;
}

/* The counters and the back-off after a job (under the lock): the owner
 * computed `mine` items in own_ns, own_cpu ns of CPU time (-1: unknown),
 * and ran out of chunks at t1. */
static void gx_judge_job(gx_pool_intp mine, long long own_ns, long long own_cpu, long long t1)
{
    long long t2 = gx_now_ns(), wall = t2 - gx_pool.job.t_open;
    long long cpu = own_cpu < 0 || gx_pool.cpu_ns < 0 ? -1 : own_cpu + gx_pool.cpu_ns;
    long long straggle = gx_pool.done_ns > t1 ? gx_pool.done_ns - t1 : 0;
    gx_pool.st[GX_POOL_JOBS]++;
    gx_pool.st[GX_POOL_WAIT_NS] += t2 - t1;
    gx_pool.st[GX_POOL_OWNER_ITEMS] += mine;
    gx_pool.st[GX_POOL_WORKER_ITEMS] += gx_pool.witems;
    if (cpu >= 0) {                     /* calls whose CPU time is known */
        gx_pool.st[GX_POOL_WALL_NS] += wall;
        gx_pool.st[GX_POOL_CPU_NS] += cpu;
    }
    /* the workers cost the owner more waiting than they computed (see
     * GX_STALL_NS); a short preemption (on an idle VM kernel threads take a
     * core for a few microseconds in ~7% of 0.5 ms calls) is within the
     * margin */
    if (cpu >= 0 ? straggle > gx_pool.cpu_ns + GX_STALL_NS : straggle > own_ns / 4 + GX_STALL_NS) {
        gx_pool.st[GX_POOL_STALLS]++;
        gx_pool.stall_t = t2;
        gx_pool.stall_calls = 0;
        gx_pool.backoff = gx_pool.backoff * 4 > GX_BACKOFF_MAX_CALLS ? GX_BACKOFF_MAX_CALLS : gx_pool.backoff * 4;
        if (GX_BACKOFF_MAX_CALLS == 0) gx_pool.stall_t = 0;
    } else if (gx_pool.witems > 0) {    /* a worker helped, and it paid */
        gx_pool.backoff = gx_pool.backoff / 2 < GX_BACKOFF_MIN_CALLS ? GX_BACKOFF_MIN_CALLS : gx_pool.backoff / 2;
    }
}

void gx_pool_run(gx_pool_fn fn, void *ctx, gx_pool_intp n, gx_pool_intp chunk, int nthreads)
{
    gx_pool_intp nchunks;
    if (chunk < 1) chunk = 1;
    nchunks = (n + chunk - 1) / chunk;
    if (nthreads <= 1 || nchunks <= 1) {
        fn(ctx, 0, n);
        return;
    }
    if (nthreads > GX_POOL_MAX + 1) nthreads = GX_POOL_MAX + 1;
    gx_call_once(&gx_once, gx_init);

    gx_mutex_lock(&gx_pool.lk);
    gx_take_slot(nthreads);
    if (gx_may_own()) {
        unsigned wake = gx_open_job(fn, ctx, n, chunk, nchunks, nthreads);
        gx_job_t job = gx_pool.job;
        gx_pool_intp mine;
        long long c0, c1, t0, t1;
        gx_unlock_then_wake(wake);
        c0 = gx_thread_cpu_ns();
        t0 = gx_now_ns();
        mine = gx_run_chunks(&job, NULL);
        t1 = gx_now_ns();
        c1 = gx_thread_cpu_ns();
        gx_mutex_lock(&gx_pool.lk);
        gx_close_job(mine > 0 ? (t1 - t0) * (long long)chunk / mine : GX_SPIN_NS);
        gx_judge_job(mine, t1 - t0, c0 < 0 ? -1 : c1 - c0, t1);
    } else {
        gx_mutex_unlock(&gx_pool.lk);
        fn(ctx, 0, n);                  /* the pool works for another caller, or backs off */
        gx_mutex_lock(&gx_pool.lk);
    }
    gx_pool.callers--;
    gx_unlock_then_wake(gx_callers_to_wake());
}

#else   /* no threads: every call on the calling thread */

int gx_pool_default_threads(void) { return 1; }
int gx_pool_threaded(void) { return 0; }
int gx_pool_workers(void) { return 0; }
void gx_pool_shutdown(void) {}
void gx_pool_stats(long long out[GX_POOL_NSTATS], int reset)
{
    (void)reset;
    for (int i = 0; i < GX_POOL_NSTATS; i++) out[i] = 0;
}

void gx_pool_run(gx_pool_fn fn, void *ctx, gx_pool_intp n, gx_pool_intp chunk, int nthreads)
{
    (void)chunk;
    (void)nthreads;
    fn(ctx, 0, n);
}

#endif

const char *gx_pool_stat_name(int i)
{
    static const char *const names[GX_POOL_NSTATS] = {
        [GX_POOL_JOBS] = "jobs", [GX_POOL_HELPED] = "helped", [GX_POOL_STALLS] = "stalls",
        [GX_POOL_WAIT_NS] = "wait_ns", [GX_POOL_MAX_RUNNING] = "max_running",
        [GX_POOL_JOIN_NS] = "join_ns", [GX_POOL_BACKOFF] = "backoff",
        [GX_POOL_OWNER_ITEMS] = "owner_items", [GX_POOL_WORKER_ITEMS] = "worker_items",
        [GX_POOL_MOVED] = "moved", [GX_POOL_PULLED] = "pulled",
        [GX_POOL_WALL_NS] = "wall_ns", [GX_POOL_CPU_NS] = "cpu_ns",
    };
    return i >= 0 && i < GX_POOL_NSTATS ? names[i] : NULL;
}
