/*
 * fork() while another thread walks its stack inside libunwind.
 *
 * libunwind 1.6 takes a process-wide mutex on a thread's first walk (its
 * memory pool). A thread holding it at the moment another thread forks
 * leaves it held in the child, whose first stack capture in a new thread
 * then waits forever. livetrack's walk gate makes fork() wait for walks
 * in flight (layer/core/walk_gate.h).
 *
 * The window is a few instructions wide, so this test holds it open: the
 * executable defines pthread_mutex_lock (exported, so it comes before
 * libc's for libunwind too), and once armed, the first lock libunwind
 * takes makes the walking thread say so and keep the mutex for 300 ms.
 * The main thread forks at that moment. With the gate, fork() returns
 * after the walk; without it, the child hangs in its first capture and
 * the alarm kills it.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "livetrack/livetrack.h"
#include "rel_util.h"

typedef int (*mutex_lock_fn)(pthread_mutex_t *);

/* libc's own function, asked of libc itself: RTLD_NEXT could answer with a
 * sanitizer's interceptor, which may not be ready when libunwind's first
 * lock comes (from a library constructor, before this program's). */
static mutex_lock_fn libc_mutex_lock(void)
{
    static _Atomic(mutex_lock_fn) found;
    mutex_lock_fn lock = atomic_load(&found);
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

static atomic_int armed, held_in_walk;

static int called_from_libunwind(const void *address)
{
    Dl_info info;
    return dladdr(address, &info) && info.dli_fname && strstr(info.dli_fname, "libunwind");
}

__attribute__((visibility("default"))) int pthread_mutex_lock(pthread_mutex_t *mutex)
{
    int result = libc_mutex_lock()(mutex);
    if (atomic_load(&armed) && called_from_libunwind(__builtin_return_address(0)) && atomic_exchange(&armed, 0)) {
        atomic_store(&held_in_walk, 1);
        struct timespec hold = {0, 300 * 1000 * 1000};
        nanosleep(&hold, NULL);
    }
    return result;
}

static void create_one(uint64_t handle)
{
    livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .handle = handle, .call = "fork_walk_create"};
    livetrack_create(&object);
    livetrack_release(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, handle, NULL, "fork_walk_release");
}

/* A new thread: its first capture is its first walk. */
static void *walk_once(void *handle)
{
    create_one((uint64_t)(uintptr_t)handle);
    return NULL;
}

int main(void)
{
    atomic_store(&armed, 1);
    pthread_t walker;
    CHECK(pthread_create(&walker, NULL, walk_once, (void *)(uintptr_t)0x1000) == 0);
    for (int waited_ms = 0; !atomic_load(&held_in_walk) && waited_ms < 10000; waited_ms++) {
        struct timespec pause = {0, 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    /* Without it the test would not reach what it tests. */
    CHECK(atomic_load(&held_in_walk));
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        alarm(5); /* an inherited held mutex: the capture below never returns */
        pthread_t thread;
        if (pthread_create(&thread, NULL, walk_once, (void *)(uintptr_t)0x2000) != 0)
            _exit(3);
        pthread_join(thread, NULL);
        _exit(0);
    }
    CHECK(child > 0);
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fprintf(stderr, "the child %s %d: its first stack capture hung\n", WIFSIGNALED(status) ? "died of signal" : "exited",
                WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    pthread_join(walker, NULL);
    return check_summary("reliability.fork_walk");
}
