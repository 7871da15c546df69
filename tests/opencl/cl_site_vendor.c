/* libcl_site_vendor: leaks one buffer on purpose (see cl_site_vendor.h). */
#include "cl_site_vendor.h"

__attribute__((visibility("default"))) cl_mem vendor_leak(cl_context context)
{
    cl_int err = CL_SUCCESS;
    cl_mem leaked = clCreateBuffer(context, CL_MEM_READ_WRITE, 512, NULL, &err); /* LEAK:vendor */
    return err == CL_SUCCESS ? leaked : NULL;
}
