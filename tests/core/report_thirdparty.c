/* libreport_thirdparty: leaks on purpose, for the suppression tests
 * (module:, function: and file: patterns). */
#include "report_thirdparty.h"

#include "livetrack/livetrack.h"

__attribute__((visibility("default"), noinline)) int third_party_leak(uint64_t handle, unsigned type)
{
    livetrack_new_object object = {.domain = LIVETRACK_DOMAIN_USER, .type = type, .handle = handle, .bytes = 512};
    int line = __LINE__ + 1;
    livetrack_create(&object);
    __asm__ volatile("" ::: "memory");
    return line;
}
