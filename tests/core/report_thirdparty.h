/* A stand-in for a third-party library that leaks (libreport_thirdparty). */
#ifndef LIVETRACK_TESTS_REPORT_THIRDPARTY_H
#define LIVETRACK_TESTS_REPORT_THIRDPARTY_H

#include <stdint.h>

/* Creates a USER-domain object of `type` (bytes 512) and never releases
 * it. Returns the source line of its livetrack_create call. */
int third_party_leak(uint64_t handle, unsigned type);

#endif
