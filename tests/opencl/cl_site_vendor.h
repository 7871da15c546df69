/* libcl_site_vendor: a stand-in for a third-party library that leaks an
 * OpenCL buffer, for the suppression tests of cl_report_sites. */
#ifndef LIVETRACK_TESTS_CL_SITE_VENDOR_H
#define LIVETRACK_TESTS_CL_SITE_VENDOR_H

#include <CL/cl.h>

/* Creates a 512-byte buffer in `context` and keeps it forever. */
cl_mem vendor_leak(cl_context context);

#endif
