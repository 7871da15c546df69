/*
 * The lock around "retain the record, or make it when there is none".
 *
 * Some CUDA objects are handed out again by the driver with one more
 * reference (a primary context retained, an IPC handle opened twice, a
 * physical allocation retained from its address). The front end retains
 * the registry's record, or records the object when it has no record
 * (gone with its last reference, or made before livetrack saw it). Two
 * threads doing that at once would both find no record and both make
 * one, the second replacing the first and losing a reference: the
 * program's correct last release would then be reported as misuse. One
 * lock makes the look and the making one step; putting a refused
 * destroy back (lookup, then make anew) takes it too.
 *
 * Never held across a driver call or while walking a stack (callers
 * capture the stack first): symbolizing and unwinding take the dynamic
 * loader's lock, which a library constructor calling CUDA may hold.
 */
#include <pthread.h>

#include "cuda_front_end.h"

static pthread_mutex_t references_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t references_lock_forks = PTHREAD_ONCE_INIT;

/* fork() waits for a count in progress, so that the child does not
 * inherit the lock held by a thread it does not have. Registered after
 * the registry's own handlers, this one runs before them, while the
 * count it waits for can still take the registry's locks. */
static void lock_for_fork(void) { pthread_mutex_lock(&references_lock); }
static void unlock_after_fork(void) { pthread_mutex_unlock(&references_lock); }
static void watch_forks(void) { pthread_atfork(lock_for_fork, unlock_after_fork, unlock_after_fork); }

void ltcu_lock_references(void)
{
    pthread_once(&references_lock_forks, watch_forks); /* before the first lock, so none is missed */
    pthread_mutex_lock(&references_lock);
}

void ltcu_unlock_references(void) { pthread_mutex_unlock(&references_lock); }
