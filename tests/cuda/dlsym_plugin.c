/* A plugin linked with the driver and dlopened RTLD_LOCAL
 * (cuda_dlsym_unloaded): its own default-scope lookup sees the driver,
 * its dependency, as glibc searches the caller's scope. */
#include <dlfcn.h>

__attribute__((visibility("default"))) void *dlsym_plugin_default_lookup(const char *name)
{
    /* Kept out of a tail call: glibc takes the return address for the
     * caller, which must be this plugin, not the program. */
    void *volatile found = dlsym(RTLD_DEFAULT, name);
    return found;
}
