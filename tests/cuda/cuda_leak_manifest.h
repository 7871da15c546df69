/*
 * What a leaky test program leaked, as it prints it for the test that
 * runs it: one line per leak, "leak <type> <handle> <bytes> <line>", then
 * "end" ("failed" when the program could not make them all).
 */
#ifndef LIVETRACK_TESTS_CUDA_LEAK_MANIFEST_H
#define LIVETRACK_TESTS_CUDA_LEAK_MANIFEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CUDA_LEAKS_MAX 32

typedef struct cuda_leak {
    const char *type; /* livetrack's type name */
    uint64_t handle;  /* as the program holds it */
    uint64_t bytes;
    unsigned line;    /* of the creating call */
} cuda_leak;

typedef struct cuda_leaks {
    size_t count;
    cuda_leak leaks[CUDA_LEAKS_MAX];
    int failed; /* a call failed: the program is not what the checks expect */
} cuda_leaks;

void cuda_print_leaks(const cuda_leaks *leaks, FILE *out);
/* Read them back; returns 0 when the text is not a whole manifest. */
int cuda_parse_leaks(const char *text, cuda_leaks *out);

#endif
