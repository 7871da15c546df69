/*
 * Holds a library's mutex open at a moment a test chooses, to fork()
 * inside a window that is otherwise a few instructions wide.
 *
 * Including this header defines pthread_mutex_lock in the program (once
 * per program; link it with ENABLE_EXPORTS so that the libraries' calls
 * come here first). Once armed, the first lock taken from a module whose
 * file name contains the armed name is kept for the armed time after it
 * is taken, and mutex_holder_wait() in another thread returns when that
 * has begun. mutex_holder_child_ok() judges a child forked in that window.
 */
#ifndef LIVETRACK_TESTS_MUTEX_HOLDER_H
#define LIVETRACK_TESTS_MUTEX_HOLDER_H

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

typedef int (*mutex_holder_lock_fn)(pthread_mutex_t *);

static const char *_Atomic mutex_holder_module;
static unsigned mutex_holder_ms;
static atomic_int mutex_holder_held;

/* libc's own function, asked of libc itself: RTLD_NEXT could answer with
 * a sanitizer's interceptor, which may not be ready when the first lock
 * comes (from a library constructor, before this program's). */
static mutex_holder_lock_fn mutex_holder_libc_lock(void)
{
    static _Atomic(mutex_holder_lock_fn) found;
    mutex_holder_lock_fn lock = atomic_load(&found);
    if (!lock) {
        void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
        /* dlvsym returns a data pointer; POSIX guarantees the conversion. */
        *(void **)&lock = libc ? dlvsym(libc, "pthread_mutex_lock", "GLIBC_2.2.5") : NULL;
        if (!lock)
            abort();
        atomic_store(&found, lock);
    }
    return lock;
}

static int mutex_holder_called_from(const void *address, const char *module)
{
    Dl_info info;
    return dladdr(address, &info) && info.dli_fname && strstr(info.dli_fname, module);
}

__attribute__((visibility("default"))) int pthread_mutex_lock(pthread_mutex_t *mutex)
{
    int result = mutex_holder_libc_lock()(mutex);
    const char *module = atomic_load(&mutex_holder_module);
    if (module && mutex_holder_called_from(__builtin_return_address(0), module) &&
        atomic_compare_exchange_strong(&mutex_holder_module, &module, NULL)) {
        atomic_store(&mutex_holder_held, 1);
        struct timespec hold = {mutex_holder_ms / 1000, (long)(mutex_holder_ms % 1000) * 1000000L};
        nanosleep(&hold, NULL);
    }
    return result;
}

static inline void mutex_holder_arm(const char *module, unsigned hold_ms)
{
    mutex_holder_ms = hold_ms;
    atomic_store(&mutex_holder_held, 0);
    atomic_store(&mutex_holder_module, module);
}

/* 1 once the armed lock is held, 0 if that did not happen in `timeout_ms`. */
static inline int mutex_holder_wait(unsigned timeout_ms)
{
    struct timespec pause = {0, 1000 * 1000};
    for (unsigned waited = 0; !atomic_load(&mutex_holder_held) && waited < timeout_ms; waited++)
        nanosleep(&pause, NULL);
    return atomic_load(&mutex_holder_held);
}

/* Waits for a child forked while the lock was held, which exits 0 when
 * `what` worked; else says how it ended ("hung" when its alarm killed it)
 * and returns 0. */
static inline int mutex_holder_child_ok(pid_t child, const char *what)
{
    int status = 0;
    if (child <= 0 || waitpid(child, &status, 0) != child) {
        fprintf(stderr, "the child forked to test %s could not be waited for\n", what);
        return 0;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 1;
    fprintf(stderr, "the child %s %d: %s %s\n", WIFSIGNALED(status) ? "died of signal" : "exited",
            WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), what,
            WIFSIGNALED(status) ? "hung" : "failed");
    return 0;
}

#endif
