/*
 * A native-API program whose API and type names hold what the two files
 * of a run keep differently: the timeline keeps a name's bytes as they
 * are, the JSON report writes bytes that are not UTF-8 as U+FFFD and
 * `livetrack report`'s reader shows control characters as '?'. Plot must
 * still find each timeline type's leaks in the report. Type i gets i + 1
 * leaked objects, so each row of plot's table has its own count.
 */
#include <stdint.h>

#include <livetrack/livetrack.h>

int main(void)
{
    static const char *const types[] = {"plain", "new\nline", "\xff\xfe-bad", "c1\xc2\x85-control"};
    enum { TYPE_COUNT = sizeof types / sizeof types[0] };
    livetrack_declare_types(LIVETRACK_DOMAIN_USER, "odd\tAPI\xfe", types, TYPE_COUNT);
    uint64_t handle = 0x1000;
    for (unsigned type = 0; type < TYPE_COUNT; type++)
        for (unsigned i = 0; i <= type; i++) {
            livetrack_new_object object = {LIVETRACK_DOMAIN_USER, type, handle++, 64, NULL, 0, 0, 0, "make_odd"};
            livetrack_create(&object);
        }
    return 0;
}
