/*
 * The native API over CUDA objects, in the process that made them
 * (LD_PRELOAD=liblivetrack_cuda.so, fake driver): after the leaky
 * scenario, the objects made since a mark are exactly its leaks, with
 * their types and sizes, and each creation stack symbolizes to the
 * scenario's line (livetrack_stack_symbolize on object.stack).
 */
#include <libgen.h>

#include "cuda_leak_scenario.h"
#include "cuda_test_util.h"

static const cuda_leak *planted(const cuda_leaks *leaks, const livetrack_object *object)
{
    for (size_t i = 0; i < leaks->count; i++)
        if (object->type_name && !strcmp(object->type_name, leaks->leaks[i].type) &&
            object->handle == cuda_key(leaks->leaks[i].type, leaks->leaks[i].handle))
            return &leaks->leaks[i];
    return NULL;
}

/* The first frame with a source file: the program's call. */
static void check_call_site(const livetrack_object *object, const cuda_leak *leak)
{
    livetrack_frame frames[16];
    size_t count = livetrack_stack_symbolize(object->stack, frames, 16);
    CHECK(count > 0);
    const livetrack_frame *site = NULL;
    for (size_t i = 0; i < count && !site; i++)
        if (frames[i].file)
            site = &frames[i];
    CHECK(site != NULL);
    if (!site)
        return;
    char file[512];
    snprintf(file, sizeof file, "%s", site->file);
    CHECK(!strcmp(basename(file), "cuda_leak_scenario.c"));
    if (site->line != leak->line)
        fprintf(stderr, "%s: created on line %u, livetrack says %u\n", leak->type, leak->line, site->line);
    CHECK_EQ_INT(site->line, leak->line);
    CHECK(site->function && !strcmp(site->function, "cuda_plant_leaks"));
    /* frame 0 is the program's: livetrack's and the driver's are dropped */
    CHECK(site == &frames[0]);
}

int main(void)
{
    CHECK_EQ_INT(cuInit(0), CUDA_SUCCESS);
    uint64_t mark = livetrack_mark();
    cuda_leaks leaks;
    cuda_plant_leaks(&leaks);
    CHECK(!leaks.failed);
    CHECK_EQ_INT(leaks.count, 11);

    livetrack_snapshot *snapshot = livetrack_snapshot_since(LIVETRACK_DOMAIN_CUDA, NULL, mark);
    CHECK_EQ_INT(livetrack_snapshot_count(snapshot), leaks.count);
    for (size_t i = 0; i < livetrack_snapshot_count(snapshot); i++) {
        const livetrack_object *object = livetrack_snapshot_at(snapshot, i);
        const cuda_leak *leak = planted(&leaks, object);
        if (!leak)
            fprintf(stderr, "not planted: %s 0x%llx\n", object->type_name, (unsigned long long)object->handle);
        CHECK(leak != NULL);
        if (!leak)
            continue;
        CHECK_EQ_INT(object->bytes, leak->bytes);
        CHECK_EQ_INT(object->refs, 1);
        CHECK(!strcmp(livetrack_domain_name(object->domain), "CUDA"));
        check_call_site(object, leak);
    }
    livetrack_snapshot_free(snapshot);

    /* The scoped check counts them, and the JSON report of them too. */
    FILE *sink = tmpfile();
    CHECK_EQ_INT(livetrack_leaks_since(mark, sink), leaks.count);
    CHECK_EQ_INT(livetrack_write_report(sink, LIVETRACK_FORMAT_JSON, 0, mark), leaks.count);
    if (sink)
        fclose(sink);
    return check_summary("cuda_native_api");
}
