/* A plugin linked with the driver and dlopened RTLD_LOCAL
 * (cuda_dlsym_unloaded): its own default-scope lookup sees the driver,
 * its dependency, as glibc searches the caller's scope. */
#include <dlfcn.h>

__attribute__((visibility("default"))) void *dlsym_plugin_default_lookup(const char *name)
{
    return dlsym(RTLD_DEFAULT, name);
}
