/*
 * gx_tls.h -- GX_THREAD_LOCAL: a variable with one instance per thread, one
 * spelling per compiler (C11 _Thread_local; MSVC's __declspec(thread)).
 * Apart from gx_threads.h, whose thread functions a file that only needs a
 * thread-local variable should not pull in.
 */
#ifndef GX_TLS_H
#define GX_TLS_H

#if defined(_MSC_VER) && !defined(__clang__)
#define GX_THREAD_LOCAL __declspec(thread)
#else
#define GX_THREAD_LOCAL _Thread_local
#endif

#endif
