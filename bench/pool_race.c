/*
 * pool_race.c -- a ThreadSanitizer run of the thread pool alone:
 * four caller threads each run 200 jobs on 2-4 threads (so callers compete
 * for the pool and for compute slots), then a fork()ed child runs jobs of
 * its own and shuts its workers down; then the pool is shut down while two
 * callers run jobs.  Every result is checked.  Built with backoff off, so every job
 * really is threaded.  Run it with bench/pool_race.sh.
 */
#include "runtime/gx_pool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define N (1 << 18)
static float X[N];

typedef struct { const float *x; float *y; } job;

static void twice_plus_one(void *c, gx_pool_intp lo, gx_pool_intp hi)
{
    job *j = c;
    for (gx_pool_intp i = lo; i < hi; i++) j->y[i] = j->x[i] * 2.0f + 1.0f;
}

static void *caller(void *arg)
{
    float *y = malloc(N * sizeof *y);
    size_t bad = 0;
    for (int r = 0; r < 200; r++) {
        job j = {X, y};
        for (int i = 0; i < N; i++) y[i] = 0.0f;
        gx_pool_run(twice_plus_one, &j, N, 8192, 2 + (r + (int)(size_t)arg) % 3);
        for (int i = 0; i < N; i++) bad += y[i] != X[i] * 2.0f + 1.0f;
    }
    free(y);
    return (void *)bad;
}

int main(void)
{
    pthread_t t[4];
    size_t bad = 0;
    long long s[GX_POOL_NSTATS];
    int status;
    pid_t pid;
    for (int i = 0; i < N; i++) X[i] = (float)i;
    for (int k = 0; k < 4; k++) pthread_create(&t[k], NULL, caller, (void *)(size_t)k);
    for (int k = 0; k < 4; k++) {
        void *r;
        pthread_join(t[k], &r);
        bad += (size_t)r;
    }
    pid = fork();
    if (pid == 0) {
        size_t b = (size_t)caller(NULL);
        gx_pool_shutdown();             /* the child's own workers */
        _exit(b != 0);
    }
    waitpid(pid, &status, 0);
    gx_pool_stats(s, 0);
    /* shut down while two callers still run jobs: they finish, on the
     * caller alone once it has happened; then a call after it */
    for (int k = 0; k < 2; k++) pthread_create(&t[k], NULL, caller, (void *)(size_t)k);
    gx_pool_shutdown();
    gx_pool_shutdown();
    for (int k = 0; k < 2; k++) {
        void *r;
        pthread_join(t[k], &r);
        bad += (size_t)r;
    }
    bad += (size_t)caller(NULL);
    printf("wrong results %zu, child exit %d; %lld threaded jobs, %lld worker joins, "
           "at most %lld threads computing\n", bad, WEXITSTATUS(status), s[GX_POOL_JOBS], s[GX_POOL_HELPED], s[GX_POOL_MAX_RUNNING]);
    return bad != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}
