/*
 * The extension's names on a platform that lists one of them already, as
 * the Intel FPGA runtime lists cl_intelfpga_live_object_tracking (and a
 * second tracking layer below livetrack does). extension_listed_layer.c,
 * between livetrack's layer and pocl, adds that name and
 * cl_altera_live_object_tracking_foo (another extension) to both of the
 * platform's extension lists. Through livetrack:
 *  1. CL_PLATFORM_EXTENSIONS lists each of the two names exactly once,
 *     and the _foo name and the driver's own still once; the size query
 *     gives the size of the string written, a smaller buffer (or none
 *     with param_value_size 0) is refused as the driver refuses it;
 *  2. CL_PLATFORM_EXTENSIONS_WITH_VERSION has one entry per name, the
 *     platform's own (its version) kept for the name it lists, and the
 *     sizes as for the string.
 * Before, both names were appended whatever the driver listed: the
 * FPGA name appeared twice in each list.
 */
#include "cl_test_util.h"

#define ALTERA_NAME "cl_altera_live_object_tracking"
#define INTELFPGA_NAME "cl_intelfpga_live_object_tracking"
#define OTHER_NAME "cl_altera_live_object_tracking_foo" /* listed by the layer below, not ours */

/* How many of the space-separated words of `list` are `name`. */
static int word_count(const char *list, const char *name)
{
    size_t length = strlen(name);
    int count = 0;
    for (const char *at = strstr(list, name); at; at = strstr(at + 1, name)) {
        if ((at == list || at[-1] == ' ') && (at[length] == ' ' || at[length] == '\0'))
            count++;
    }
    return count;
}

static void test_extension_string(cl_platform_id platform)
{
    size_t size = 0;
    CHECK_EQ_INT(clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, 0, NULL, &size), CL_SUCCESS);
    CHECK(size > 1);
    char *text = calloc(1, size + 64);
    size_t size_ret = 0;
    CHECK_EQ_INT(clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, size, text, &size_ret), CL_SUCCESS);
    CHECK_EQ_INT(size_ret, size);
    CHECK_EQ_INT(strlen(text) + 1, size);
    CHECK_EQ_INT(word_count(text, ALTERA_NAME), 1);
    CHECK_EQ_INT(word_count(text, INTELFPGA_NAME), 1);
    CHECK_EQ_INT(word_count(text, OTHER_NAME), 1);
    CHECK_EQ_INT(word_count(text, "cl_khr_icd"), 1);
    if (word_count(text, ALTERA_NAME) != 1 || word_count(text, INTELFPGA_NAME) != 1)
        fprintf(stderr, "  CL_PLATFORM_EXTENSIONS: \"%s\"\n", text);
    /* A larger buffer: the same string and size. */
    char *large = calloc(1, size + 64);
    size_ret = 0;
    CHECK_EQ_INT(clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, size + 64, large, &size_ret), CL_SUCCESS);
    CHECK_EQ_INT(size_ret, size);
    CHECK(strcmp(large, text) == 0);
    /* One byte short, or no room at all, is the driver's error. */
    CHECK_EQ_INT(clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, size - 1, large, NULL), CL_INVALID_VALUE);
    CHECK_EQ_INT(clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, 0, large, NULL), CL_INVALID_VALUE);
    free(large);
    free(text);
}

static void test_extension_versions(cl_platform_id platform)
{
    size_t size = 0;
    CHECK_EQ_INT(clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS_WITH_VERSION, 0, NULL, &size), CL_SUCCESS);
    CHECK_EQ_INT(size % sizeof(cl_name_version), 0);
    size_t count = size / sizeof(cl_name_version);
    cl_name_version *versions = calloc(count + 2, sizeof *versions);
    size_t size_ret = 0;
    CHECK_EQ_INT(clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS_WITH_VERSION, (count + 2) * sizeof *versions,
                                   versions, &size_ret),
                 CL_SUCCESS);
    CHECK_EQ_INT(size_ret, size);
    /* Nothing written past the size the query gave. */
    CHECK(versions[count].name[0] == '\0' && versions[count].version == 0);
    int altera = 0, intelfpga = 0, other = 0, icd = 0;
    for (size_t i = 0; i < count; i++) {
        if (strcmp(versions[i].name, ALTERA_NAME) == 0) {
            altera++;
            CHECK_EQ_INT(versions[i].version, CL_LIVE_OBJECT_TRACKING_EXTENSION_VERSION);
        }
        if (strcmp(versions[i].name, INTELFPGA_NAME) == 0) {
            intelfpga++;
            CHECK_EQ_INT(versions[i].version, CL_MAKE_VERSION(1, 2, 3)); /* the platform's entry */
        }
        other += strcmp(versions[i].name, OTHER_NAME) == 0;
        icd += strcmp(versions[i].name, "cl_khr_icd") == 0;
    }
    CHECK_EQ_INT(altera, 1);
    CHECK_EQ_INT(intelfpga, 1);
    CHECK_EQ_INT(other, 1);
    CHECK_EQ_INT(icd, 1);
    CHECK_EQ_INT(clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS_WITH_VERSION, size - 1, versions, NULL),
                 CL_INVALID_VALUE);
    CHECK_EQ_INT(clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS_WITH_VERSION, 0, versions, NULL),
                 CL_INVALID_VALUE);
    free(versions);
}

int main(void)
{
    ct_env env;
    ct_get_platform(&env);
    /* The functions are livetrack's whatever the platform lists. */
    ct_ext ext;
    ct_need_ext(env.platform, &ext);
    test_extension_string(env.platform);
    test_extension_versions(env.platform);
    return check_summary("cl_extension_listed");
}
