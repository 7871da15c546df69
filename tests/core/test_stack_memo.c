/*
 * The stack memo (layer/core/stack_memo.c) must never change which call
 * site an object gets, only how often the unwinder runs. Each case here
 * is built so that a memo keyed on too little (the stack pointer alone,
 * or the innermost return address) would hand out a wrong site:
 *   - one loop: every object the same site, and (memo on) almost no walks;
 *   - two callers with identical frames, alternating, so the capture sees
 *     the same stack pointer and differs only in a return address further
 *     out;
 *   - recursion to varying depths;
 *   - the same from several threads at once.
 * ctest runs it twice: with the memo (default) and with
 * LIVETRACK_STACK_MEMO=0, where every create must walk.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "livetrack/livetrack.h"

#define LOOP_COUNT 10000
#define ALTERNATIONS 2000
#define MAX_DEPTH 6
#define THREADS 4

static int memo_on;

static uint64_t next_handle(void)
{
    static _Atomic uint64_t handle = 0x1000;
    return atomic_fetch_add(&handle, 16) + 16;
}

__attribute__((noinline)) static livetrack_stack_id create_here(void)
{
    uint64_t handle = next_handle();
    livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = 1, .handle = handle, .call = "create"};
    if (livetrack_create(&object) != LIVETRACK_OK)
        return 0;
    livetrack_object seen;
    livetrack_stack_id stack = livetrack_lookup(LIVETRACK_DOMAIN_USER, handle, &seen) == LIVETRACK_OK ? seen.stack : 0;
    livetrack_release(LIVETRACK_DOMAIN_USER, 1, handle, NULL, "release");
    __asm__ volatile("" ::: "memory"); /* a real call above, not a tail jump */
    return stack;
}

/* Two callers with the same frame size; the stores keep the compiler
 * from folding them into one function. */
static volatile int last_side;

__attribute__((noinline)) static livetrack_stack_id via_left(void)
{
    last_side = 1;
    livetrack_stack_id stack = create_here();
    __asm__ volatile("" ::: "memory");
    return stack;
}

__attribute__((noinline)) static livetrack_stack_id via_right(void)
{
    last_side = 2;
    livetrack_stack_id stack = create_here();
    __asm__ volatile("" ::: "memory");
    return stack;
}

__attribute__((noinline)) static livetrack_stack_id recurse(int depth)
{
    livetrack_stack_id stack = depth <= 1 ? create_here() : recurse(depth - 1);
    __asm__ volatile("" ::: "memory");
    return stack;
}

static int has_function(livetrack_stack_id stack, const char *function)
{
    livetrack_frame frames[64];
    size_t count = livetrack_stack_symbolize(stack, frames, 64);
    for (size_t i = 0; i < count; i++)
        if (frames[i].function && !strcmp(frames[i].function, function))
            return 1;
    return 0;
}

static int count_function(livetrack_stack_id stack, const char *function)
{
    livetrack_frame frames[64];
    size_t count = livetrack_stack_symbolize(stack, frames, 64);
    int found = 0;
    for (size_t i = 0; i < count; i++)
        found += frames[i].function && !strcmp(frames[i].function, function);
    return found;
}

typedef struct case_result {
    livetrack_stack_id loop[LOOP_COUNT];
    int loop_distinct;          /* stacks seen in the loop other than the first */
    livetrack_stack_id loop_stack;
    livetrack_stack_id left, right;
    int left_mixed, right_mixed; /* an id that changed between calls of one side */
    livetrack_stack_id by_depth[MAX_DEPTH + 1];
    int depth_mixed;
} case_result;

static void run_cases(case_result *result)
{
    memset(result, 0, sizeof *result);
    /* One call site (no test inside the loop that the compiler could
     * answer by peeling the first iteration into a call site of its own). */
    for (int i = 0; i < LOOP_COUNT; i++)
        result->loop[i] = create_here();
    result->loop_stack = result->loop[0];
    for (int i = 1; i < LOOP_COUNT; i++)
        result->loop_distinct += result->loop[i] != result->loop_stack;
    for (int i = 0; i < ALTERNATIONS; i++) {
        livetrack_stack_id stack = (i & 1) ? via_right() : via_left();
        livetrack_stack_id *side = (i & 1) ? &result->right : &result->left;
        if (*side && *side != stack)
            ++*((i & 1) ? &result->right_mixed : &result->left_mixed);
        *side = stack;
    }
    for (int round = 0; round < 200; round++) {
        for (int depth = 1; depth <= MAX_DEPTH; depth++) {
            int d = (round & 1) ? MAX_DEPTH + 1 - depth : depth; /* up, then down */
            livetrack_stack_id stack = recurse(d);
            if (result->by_depth[d] && result->by_depth[d] != stack)
                result->depth_mixed++;
            result->by_depth[d] = stack;
        }
    }
}

static void check_cases(const case_result *result, const char *who)
{
    fprintf(stderr, "checking %s\n", who);
    CHECK(result->loop_stack != 0);
    CHECK_EQ_INT(result->loop_distinct, 0);
    CHECK(result->left && result->right && result->left != result->right);
    CHECK_EQ_INT(result->left_mixed, 0);
    CHECK_EQ_INT(result->right_mixed, 0);
    CHECK(has_function(result->left, "via_left") && !has_function(result->left, "via_right"));
    CHECK(has_function(result->right, "via_right") && !has_function(result->right, "via_left"));
    CHECK_EQ_INT(result->depth_mixed, 0);
    for (int d = 1; d <= MAX_DEPTH; d++) {
        CHECK(result->by_depth[d] != 0);
        /* 16 frames are kept by default: deep enough for all of them */
        CHECK_EQ_INT(count_function(result->by_depth[d], "recurse"), d);
        for (int e = 1; e < d; e++)
            CHECK(result->by_depth[d] != result->by_depth[e]);
    }
}

static void *thread_main(void *arg)
{
    run_cases(arg);
    return NULL;
}

int main(void)
{
    const char *setting = getenv("LIVETRACK_STACK_MEMO");
    memo_on = !setting || strcmp(setting, "0") != 0;

    livetrack_stats before, after;
    livetrack_get_stats(&before);
    static case_result main_result;
    run_cases(&main_result);
    livetrack_get_stats(&after);
    check_cases(&main_result, "main thread");

    uint64_t walks = after.stack_walks - before.stack_walks;
    uint64_t creates = after.created - before.created;
    fprintf(stderr, "memo %s: %llu creates, %llu stacks walked\n", memo_on ? "on" : "off",
            (unsigned long long)creates, (unsigned long long)walks);
    if (memo_on) {
        /* Each distinct stack is walked about twice (seen, then learned);
         * the alternating pair shares one spot and must hit both ways. */
        CHECK(walks < 100);
    } else {
        CHECK_EQ_INT(walks, creates);
    }

    pthread_t threads[THREADS];
    static case_result results[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&threads[i], NULL, thread_main, &results[i]) == 0);
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        char who[32];
        snprintf(who, sizeof who, "thread %d", i);
        check_cases(&results[i], who);
        /* Threads start from the same function: the same sites. */
        CHECK(results[i].loop_stack == results[0].loop_stack);
        CHECK(results[i].left == results[0].left && results[i].right == results[0].right);
    }
    return check_summary(memo_on ? "core_stack_memo" : "core_stack_memo_off");
}
