/*
 * consumer: host code using the installed native API: it records an
 * object of its own, checks that the registry sees it, and releases it.
 */
#include <stdio.h>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl_ext_live_object_tracking.h>
#include <livetrack/livetrack.h>

int main(void)
{
    static const char *const names[] = {"widget"};
    livetrack_declare_types(LIVETRACK_DOMAIN_USER, "User", names, 1);
    livetrack_new_object object = {LIVETRACK_DOMAIN_USER, 0, 0x1234, 64, NULL, 0, 0, 0, "make_widget"};
    if (livetrack_create(&object) != LIVETRACK_OK)
        return 1;
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    if (stats.live_objects != 1 || stats.live_bytes != 64)
        return 2;
    if (livetrack_release(LIVETRACK_DOMAIN_USER, 0, 0x1234, NULL, "free_widget") != LIVETRACK_OK)
        return 3;
    printf("consumer: livetrack %d.%d.%d works\n", LIVETRACK_VERSION_MAJOR, LIVETRACK_VERSION_MINOR,
           LIVETRACK_VERSION_PATCH);
    return 0;
}
