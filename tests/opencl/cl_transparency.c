/*
 * Transparency: cl_vecadd prints what it computes and queries; its stdout
 * must be byte for byte the same with the layer (OPENCL_LAYERS, set by
 * CTest) and without it. With the layer it must leave nothing behind (no
 * livetrack line on stderr); the layer must really have been loaded.
 *
 * Usage: cl_transparency /path/to/cl_vecadd
 */
#include "cl_test_util.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cl_transparency /path/to/cl_vecadd\n");
        return 2;
    }
    const char *layer = getenv("OPENCL_LAYERS");
    CHECK(layer && *layer);
    char *child_argv[] = {argv[1], NULL};
    const char *const clear[] = {"LIVETRACK_OUTPUT", "LIVETRACK_EXIT_REPORT", NULL};
    const char *const clear_and_no_layer[] = {"OPENCL_LAYERS", "LIVETRACK_OUTPUT", "LIVETRACK_EXIT_REPORT", NULL};

    ct_child with, without;
    CHECK_EQ_INT(ct_run(child_argv, NULL, clear, &with), 0);
    CHECK_EQ_INT(ct_run(child_argv, NULL, clear_and_no_layer, &without), 0);
    CHECK_EQ_INT(with.status, 0);
    CHECK_EQ_INT(without.status, 0);

    /* The layer was there in one run and not in the other. */
    CHECK(strstr(with.err, "tracking extension present") != NULL);
    CHECK(strstr(without.err, "tracking extension absent") != NULL);

    /* The same results, byte for byte. */
    CHECK(strstr(without.out, "vector add: 0 wrong") != NULL);
    CHECK(strstr(without.out, "\ndone\n") != NULL);
    CHECK_EQ_INT(with.out_size, without.out_size);
    int same = with.out_size == without.out_size && memcmp(with.out, without.out, with.out_size) == 0;
    CHECK(same);
    if (!same) {
        /* Show the first differing line. */
        const char *p = with.out, *q = without.out;
        int line = 1;
        while (*p && *p == *q) {
            line += *p == '\n';
            p++;
            q++;
        }
        fprintf(stderr, "  stdout differs from line %d on\n", line);
    }
    /* Nothing leaked, nothing misused: the layer said nothing. */
    CHECK_EQ_INT(ct_count_lines_with_prefix(with.err, "livetrack:"), 0);
    if (check_failed) {
        ct_child_dump("with the layer", &with);
        ct_child_dump("without the layer", &without);
    }
    ct_child_free(&with);
    ct_child_free(&without);
    return check_summary("cl_transparency");
}
