/*
 * A minimal test helper: CHECK counts and prints failures, and
 * check_summary() prints "N passed, N failed" and gives the exit status.
 */
#ifndef LIVETRACK_TESTS_CHECK_H
#define LIVETRACK_TESTS_CHECK_H

#include <stdatomic.h>
#include <stdio.h>

/* Atomic: tests CHECK from several threads, and run under TSan. */
static _Atomic int check_passed, check_failed;

#define CHECK(expr)                                                                   \
    do {                                                                              \
        if (expr) {                                                                   \
            check_passed++;                                                           \
        } else {                                                                      \
            check_failed++;                                                           \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #expr);  \
        }                                                                             \
    } while (0)

#define CHECK_EQ_INT(actual, expected)                                                          \
    do {                                                                                        \
        long long check_a_ = (long long)(actual), check_e_ = (long long)(expected);             \
        if (check_a_ == check_e_) {                                                             \
            check_passed++;                                                                     \
        } else {                                                                                \
            check_failed++;                                                                     \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", __FILE__, __LINE__, \
                    #actual, #expected, check_a_, check_e_);                                    \
        }                                                                                       \
    } while (0)

static inline int check_summary(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, atomic_load(&check_passed), atomic_load(&check_failed));
    return check_failed ? 1 : 0;
}

#endif
