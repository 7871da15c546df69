/*
 * A statically linked CUDA runtime is inside the program's module, so
 * only its function names tell its frames apart: a call site starts at
 * the program's line, not at libcudart_static_<hash> or the cuda* entry
 * point (stacks.c). A program's own cuda* function is kept. Run with the
 * default depth and with LIVETRACK_STACK_DEPTH=4, where the runtime's
 * three frames must not crowd the program's out.
 */
#include "livetrack/livetrack.h"
#include "static_runtime_standin.h"
#include <stdio.h>
#include <string.h>

#include "check.h"

static const char *const type_names[] = {"standin"};

static livetrack_stack_id stack_of(uint64_t handle)
{
    livetrack_object object;
    CHECK(livetrack_lookup(LIVETRACK_DOMAIN_USER, handle, &object) == LIVETRACK_OK);
    return object.stack;
}

/* The call site of `handle` starts at `function`, called from main. */
static void expect_made_in(uint64_t handle, const char *function)
{
    livetrack_frame frames[32];
    size_t count = livetrack_stack_symbolize(stack_of(handle), frames, 32);
    CHECK(count > 1);
    if (count > 1) {
        CHECK(frames[0].function && !strcmp(frames[0].function, function));
        CHECK(frames[1].function && !strcmp(frames[1].function, "main"));
    }
}

int main(void)
{
    livetrack_declare_types(LIVETRACK_DOMAIN_USER, "user", type_names, 1);
    int line = __LINE__ + 1;
    cudaStandInMalloc(0x1000);
    __asm__ volatile("" ::: "memory");
    livetrack_frame frames[32];
    size_t count = livetrack_stack_symbolize(stack_of(0x1000), frames, 32);
    CHECK(count > 0);
    if (count) {
        if (!frames[0].function || strcmp(frames[0].function, "main"))
            fprintf(stderr, "frame 0 is %s, not main\n", frames[0].function ? frames[0].function : "(unknown)");
        CHECK(frames[0].function && !strcmp(frames[0].function, "main"));
        CHECK(frames[0].file && strstr(frames[0].file, "test_static_runtime_frames.c"));
        CHECK_EQ_INT(frames[0].line, line);
    }

    cudaHelperOfTheProgram(0x2000);
    __asm__ volatile("" ::: "memory");
    expect_made_in(0x2000, "cudaHelperOfTheProgram");
    /* Only the one entry point goes: the program's wrapper stays. */
    cuda_alloc_checked(0x3000);
    __asm__ volatile("" ::: "memory");
    expect_made_in(0x3000, "cuda_alloc_checked");
    /* The addresses agree with the symbolized frames. */
    uintptr_t addresses[32];
    CHECK(livetrack_stack_symbolize(stack_of(0x3000), frames, 32) > 0);
    CHECK(livetrack_stack_addresses(stack_of(0x3000), addresses, 32) > 0 && addresses[0] == frames[0].address);
    livetrack_destroy(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, 0x3000, "test");
    livetrack_destroy(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, 0x1000, "test");
    livetrack_destroy(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, 0x2000, "test");
    return check_summary("test_static_runtime_frames");
}
