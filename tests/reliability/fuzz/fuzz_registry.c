/*
 * Fuzz target: the registry driven by arbitrary operation sequences and
 * checked against a reference model after every operation.
 *
 * The input is a program. Each operation is one byte (its upper six bits;
 * the lower two are spare) and its arguments follow (a missing byte reads
 * as 0). The "switch" operation moves the rest of the program to the
 * simulated thread its two low bits name. Threads 1..3 are real threads
 * that run their operations while the others wait (a baton passes between
 * them), so the interleaving is exactly the one the input spells and a
 * crash reproduces, while per-thread state (the parent cache of the
 * registry, the stack-id cache) really is per thread.
 *
 * The model keeps objects by identity, not by handle: creating a handle
 * that is live replaces the old object, which stays while children still
 * hold it (in snapshots and the live counts, released, but its handle
 * names the new object). Per object it knows
 *   refs     references the program holds,
 *   holders  holds by live children (stale ones included),
 *   linked   the handle names this object,
 *   alive    refs + holders > 0: in snapshots and the live counts.
 * A death drops one hold on each parent, which may die in turn.
 *
 * A release or destroy may be one the API refuses (the low bits of its
 * operation byte): a front end then puts the object back with
 * livetrack_restore, after holding its very parents with keepers (bit 1,
 * livetrack_keep_parents) as the Level Zero and CUDA front ends do, or
 * not (then it is re-linked to what its parents' handles name then). The
 * object must come back as the same one: its creation number, the
 * references the call took, and its parents.
 *
 * Between inputs the registry must return to empty: every input ends by
 * destroying what it left, and the registry must then hold nothing.
 *
 * Built with libFuzzer (clang -fsanitize=fuzzer) or, with fuzz_main.c,
 * as a plain program that replays the seed corpus and random inputs.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "livetrack/livetrack.h"

/* memory.c's test hooks (see there). */
long lt_fault_alloc_set(long after, long count);
long lt_fault_alloc_pending(void);

#define POOL 16          /* handles per domain */
#define DOMAINS 2        /* USER and CUDA: the same handles in both */
#define NTYPES 4u
#define SIM_THREADS 4
#define MAX_OPS 2048
#define MAX_OBJECTS (MAX_OPS + 1)

static const livetrack_domain domains[DOMAINS] = {LIVETRACK_DOMAIN_USER, LIVETRACK_DOMAIN_CUDA};
static const char *const type_names[DOMAINS][NTYPES] = {{"fz_ctx", "fz_queue", "fz_mem", "fz_event"},
                                                        {"fzc_ctx", "fzc_stream", "fzc_mem", "fzc_event"}};
static const char owner_tags[2] = {'a', 'b'};
static const void *const owners[3] = {NULL, &owner_tags[0], &owner_tags[1]};

/* ---- failures ------------------------------------------------------------------ */

static unsigned long op_index;

/* Figures, printed at exit: operations run, and the calls the registry
 * refused (misuse: unknown or dead handles, wrong types, releases of
 * objects the program no longer holds, bad arguments). */
static unsigned long long total_ops, refused_calls, injected_runs;

__attribute__((destructor)) static void print_figures(void)
{
    if (total_ops)
        fprintf(stderr, "fuzz_registry: %llu operations, %llu calls refused as misuse, %llu inputs with allocation "
                        "failures\n",
                total_ops, refused_calls, injected_runs);
}

__attribute__((noreturn, format(printf, 1, 2))) static void fail(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    fprintf(stderr, "fuzz_registry: model mismatch at operation %lu: ", op_index);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
    va_end(args);
    abort();
}

#define EXPECT(cond, ...)            \
    do {                             \
        if (!(cond))                 \
            fail(__VA_ARGS__);       \
    } while (0)

/* ---- input --------------------------------------------------------------------- */

static const uint8_t *input;
static size_t input_size, input_pos;

static uint8_t next_byte(void) { return input_pos < input_size ? input[input_pos++] : 0; }

/* ---- the model ------------------------------------------------------------------ */

typedef struct mobj {
    int domain; /* index into domains[] */
    int slot;
    unsigned type;
    uint32_t refs, holders;
    int parents[2]; /* object indices, -1: none */
    int linked, alive;
    uint64_t bytes;
    const void *owner;
    uint64_t seq;
    livetrack_object desc; /* as looked up right after creation */
} mobj;

static mobj objs[MAX_OBJECTS];
static int nobjs;
static int cur[DOMAINS][POOL];   /* linked object of each handle, -1: none */
static uint64_t created_now;     /* the registry's created count, as the model knows it */
static uint64_t last_seq;        /* the newest creation number, or the last mark if that is higher */
static int seq_counted;          /* LIVETRACK_CREATION_ORDER=counter: numbers go 1, 2, 3 ... */
static uint64_t replaced_base, replaced;
static uint64_t misuse_base, misuse;
static uint64_t mark; /* last livetrack_mark() of the input */
static int faults_armed; /* allocation failures may be injected */

static uint64_t handle_of(int slot) { return 0x10000 + (uint64_t)slot * 0x40; }
static uint64_t unknown_handle(uint8_t b) { return 0xdead0000ull + (uint64_t)b * 8; }

static void model_die(int o)
{
    int stack[MAX_OBJECTS];
    int top = 0;
    stack[top++] = o;
    while (top) {
        mobj *dead = &objs[stack[--top]];
        dead->alive = 0;
        if (dead->linked) {
            dead->linked = 0;
            cur[dead->domain][dead->slot] = -1;
        }
        for (int i = 0; i < 2; i++) {
            int p = dead->parents[i];
            if (p < 0)
                continue;
            if (!objs[p].alive || !objs[p].holders)
                fail("model: a hold on a dead parent");
            objs[p].holders--;
            if (objs[p].refs + objs[p].holders == 0)
                stack[top++] = p;
        }
    }
}

/* ---- comparing ------------------------------------------------------------------ */

static void expect_object(const livetrack_object *got, int o, const char *where)
{
    const mobj *m = &objs[o];
    EXPECT(got->domain == domains[m->domain] && got->handle == handle_of(m->slot), "%s: identity", where);
    EXPECT(got->type == m->type, "%s: type %u, model %u", where, got->type, m->type);
    EXPECT(got->type_name && !strcmp(got->type_name, type_names[m->domain][m->type]), "%s: type name", where);
    EXPECT(got->seq == m->seq, "%s: seq %llu, model %llu", where, (unsigned long long)got->seq,
           (unsigned long long)m->seq);
    EXPECT(got->bytes == m->bytes, "%s: bytes", where);
    EXPECT(got->refs == m->refs && got->holders == m->holders, "%s: handle 0x%llx refs %u holders %u, model %u %u",
           where, (unsigned long long)got->handle, got->refs, got->holders, m->refs, m->holders);
    EXPECT(got->owner == m->owner, "%s: owner", where);
    for (int i = 0; i < 2; i++) {
        int p = m->parents[i];
        EXPECT(got->parents[i] == (p < 0 ? 0 : handle_of(objs[p].slot)), "%s: parent %d", where, i);
        EXPECT(got->parent_types[i] == (p < 0 ? 0 : objs[p].type), "%s: parent type %d", where, i);
    }
}

static void expect_handle(int d, int slot)
{
    livetrack_object got;
    livetrack_status status = livetrack_lookup(domains[d], handle_of(slot), &got);
    int o = cur[d][slot];
    livetrack_status expected = o < 0 ? LIVETRACK_UNKNOWN : LIVETRACK_OK;
    EXPECT(status == expected, "lookup of slot %d in domain %d: status %d", slot,
           d, (int)status);
    if (o >= 0)
        expect_object(&got, o, "lookup");
}

static int model_wanted(int o, livetrack_domain domain, const void *owner, uint64_t since)
{
    const mobj *m = &objs[o];
    return m->alive && (domain == LIVETRACK_DOMAIN_ANY || domain == domains[m->domain]) &&
           (!owner || m->owner == owner) && m->seq > since;
}

static void expect_snapshot(livetrack_domain domain, const void *owner, uint64_t since)
{
    livetrack_snapshot *snapshot = since ? livetrack_snapshot_since(domain, owner, since)
                                         : livetrack_snapshot_take(domain, owner);
    if (!snapshot) {
        EXPECT(faults_armed, "snapshot failed with no allocation failure injected");
        return;
    }
    size_t expected = 0;
    for (int o = 0; o < nobjs; o++)
        expected += model_wanted(o, domain, owner, since);
    size_t count = livetrack_snapshot_count(snapshot);
    EXPECT(count == expected, "snapshot of domain %d: %zu objects, model %zu", (int)domain, count, expected);
    uint64_t previous = UINT64_MAX;
    for (size_t i = 0; i < count; i++) {
        const livetrack_object *got = livetrack_snapshot_at(snapshot, i);
        EXPECT(got && got->seq < previous, "snapshot order");
        previous = got->seq;
        int d = got->domain == LIVETRACK_DOMAIN_USER ? 0 : got->domain == LIVETRACK_DOMAIN_CUDA ? 1 : -1;
        EXPECT(d >= 0 && got->handle >= handle_of(0) && got->handle <= handle_of(POOL - 1), "snapshot: stray object");
        /* By creation number: a replaced object its children keep has the
         * handle of a newer one. */
        int o = -1;
        for (int n = 0; n < nobjs && o < 0 && d >= 0; n++)
            if (objs[n].alive && objs[n].domain == d && objs[n].seq == got->seq)
                o = n;
        EXPECT(o >= 0 && model_wanted(o, domain, owner, since), "snapshot: object the model does not have");
        expect_object(got, o, "snapshot");
        uint64_t parent_seqs[2];
        EXPECT(livetrack_snapshot_parent_seqs(snapshot, i, parent_seqs) == LIVETRACK_OK, "snapshot: parent_seqs");
        for (int k = 0; k < 2; k++)
            EXPECT(parent_seqs[k] == (objs[o].parents[k] < 0 ? 0 : objs[objs[o].parents[k]].seq),
                   "snapshot: parent %d's creation number", k);
        EXPECT(livetrack_still_live(got) == objs[o].linked, "snapshot: still_live of object %d", o);
    }
    EXPECT(livetrack_snapshot_at(snapshot, count) == NULL, "snapshot past its end");
    livetrack_snapshot_free(snapshot);
}

static void expect_stats(void)
{
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    uint64_t live = 0, bytes = 0;
    for (int o = 0; o < nobjs; o++)
        if (objs[o].alive) {
            live++;
            bytes += objs[o].bytes;
        }
    EXPECT(stats.live_objects == live && stats.live_bytes == bytes, "stats: %llu live (%llu bytes), model %llu (%llu)",
           (unsigned long long)stats.live_objects, (unsigned long long)stats.live_bytes, (unsigned long long)live,
           (unsigned long long)bytes);
    EXPECT(stats.created == created_now, "stats: created");
    EXPECT(stats.replaced - replaced_base == replaced, "stats: replaced");
    EXPECT(stats.misuse - misuse_base == misuse, "stats: misuse %llu, model %llu",
           (unsigned long long)(stats.misuse - misuse_base), (unsigned long long)misuse);
    EXPECT(stats.peak_objects >= live, "stats: peak %llu objects, below the %llu live", (unsigned long long)stats.peak_objects,
           (unsigned long long)live);
}

static uint64_t model_leaks(uint64_t since)
{
    uint64_t leaked = 0;
    for (int o = 0; o < nobjs; o++)
        leaked += objs[o].linked && objs[o].refs && objs[o].seq > since;
    return leaked;
}

/* ---- operations ---------------------------------------------------------------- */

enum {
    OP_CREATE, OP_RETAIN, OP_RELEASE, OP_DESTROY, OP_LOOKUP, OP_STILL_LIVE, OP_SNAPSHOT, OP_REPORT,
    OP_STATS, OP_MARK, OP_SINCE, OP_MISUSE, OP_FAULT, OP_WHILE_LIVE, OP_CREATE2, OP_SWITCH, OP_COUNT
};

static int pick_slot(uint8_t b, int *d)
{
    *d = (b >> 7) & 1;
    return b % POOL;
}

/* The type a call names: mostly the object's own, else any, another
 * type, or one nothing has. */
static unsigned pick_type(uint8_t b, int o)
{
    if (b < 128 && o >= 0)
        return objs[o].type;
    if (b < 192)
        return LIVETRACK_ANY_TYPE;
    if (b < 248)
        return b % NTYPES;
    return NTYPES + b % 8;
}

static livetrack_status expected_access(int o, unsigned type)
{
    if (o < 0)
        return LIVETRACK_UNKNOWN;
    return type != LIVETRACK_ANY_TYPE && type != objs[o].type ? LIVETRACK_WRONG_TYPE : LIVETRACK_OK;
}

static uint64_t pick_parent(uint8_t b, int d, int *slot)
{
    *slot = -1;
    (void)d;
    if (b < 40)
        return 0;
    if (b < 232) {
        *slot = b % POOL;
        return handle_of(*slot);
    }
    return unknown_handle(b);
}

static void op_create(void)
{
    int d;
    int slot = pick_slot(next_byte(), &d);
    uint8_t type_byte = next_byte(), size_byte = next_byte(), owner_byte = next_byte();
    int parent_slot[2];
    livetrack_new_object request;
    memset(&request, 0, sizeof request);
    request.domain = domains[d];
    request.type = type_byte % NTYPES;
    request.handle = handle_of(slot);
    request.bytes = size_byte < 128 ? 0 : (uint64_t)size_byte * 1000;
    request.owner = owners[owner_byte % 3];
    request.parent = pick_parent(next_byte(), d, &parent_slot[0]);
    request.second_parent = pick_parent(next_byte(), d, &parent_slot[1]);
    request.flags = (owner_byte & 0x80) ? LIVETRACK_PARENT_VIA_FIRST_PARENT : 0;
    request.call = "fuzz_create";

    livetrack_status status = livetrack_create(&request);
    if (status == LIVETRACK_NO_MEMORY) {
        EXPECT(faults_armed, "create: out of memory with no failure injected");
        expect_handle(d, slot); /* nothing changed, the stale object included */
        return;
    }
    EXPECT(status == LIVETRACK_OK, "create: status %d", (int)status);

    /* the parents are held first: a new object may hold the very object
     * it replaces */
    const void *owner = request.owner;
    int held[2] = {-1, -1};
    for (int k = 0; k < 2; k++) {
        int n = parent_slot[k] >= 0 ? cur[d][parent_slot[k]] : -1;
        if (n < 0)
            continue;
        if (!owner)
            owner = objs[n].owner;
        int h = (k == 0 && request.flags) ? objs[n].parents[0] : n;
        if (h < 0)
            continue;
        objs[h].holders++;
        held[k] = h;
    }
    int stale = cur[d][slot];
    if (stale >= 0) {
        objs[stale].linked = 0;
        objs[stale].refs = 0;
        cur[d][slot] = -1;
        replaced++;
        if (!objs[stale].holders)
            model_die(stale);
    }
    if (nobjs == MAX_OBJECTS)
        fail("model: too many objects");
    int o = nobjs++;
    objs[o] = (mobj){.domain = d, .slot = slot, .type = request.type, .refs = 1, .holders = 0,
                     .parents = {held[0], held[1]}, .linked = 1, .alive = 1, .bytes = request.bytes,
                     .owner = owner};
    created_now++;
    cur[d][slot] = o;
    EXPECT(livetrack_lookup(domains[d], request.handle, &objs[o].desc) == LIVETRACK_OK, "create: not found");
    /* Creation numbers rise past every earlier one and every mark
     * (consecutively from the counter); the model learns each here. */
    uint64_t seq = objs[o].desc.seq;
    EXPECT(seq > last_seq && (!seq_counted || seq == last_seq + 1), "create: seq %llu after %llu",
           (unsigned long long)seq, (unsigned long long)last_seq);
    objs[o].seq = last_seq = seq;
    expect_object(&objs[o].desc, o, "create");
    if (stale >= 0)
        EXPECT(!livetrack_still_live(&objs[stale].desc), "create: replaced object still live");
    for (int k = 0; k < 2; k++)
        if (held[k] >= 0 && objs[held[k]].linked)
            expect_handle(objs[held[k]].domain, objs[held[k]].slot);
}

static void op_retain(void)
{
    int d;
    int slot = pick_slot(next_byte(), &d);
    int o = cur[d][slot];
    unsigned type = pick_type(next_byte(), o);
    livetrack_status expected = expected_access(o, type);
    livetrack_status status = livetrack_retain(domains[d], type, handle_of(slot), "fuzz_retain");
    EXPECT(status == expected, "retain: status %d, model %d", (int)status, (int)expected);
    refused_calls += status != LIVETRACK_OK;
    if (expected == LIVETRACK_OK)
        objs[o].refs++;
    expect_handle(d, slot);
}

/* The parent handle `handle` of domain d names, as the model's object
 * linked there, or -1. */
static int linked_at(int d, uint64_t handle)
{
    for (int s = 0; s < POOL && handle; s++)
        if (handle_of(s) == handle)
            return cur[d][s];
    return -1;
}

/* Keepers on object o's very parents, in the registry and in the model. */
static void keep_parents(int o, const livetrack_object *before, livetrack_keeper *keepers[2], int kept[2])
{
    EXPECT(livetrack_keep_parents(before, keepers) == LIVETRACK_OK, "keep_parents of a live object");
    for (int k = 0; k < 2; k++) {
        kept[k] = objs[o].parents[k];
        EXPECT((keepers[k] != NULL) == (kept[k] >= 0), "keep_parents: parent %d", k);
        if (kept[k] >= 0)
            objs[kept[k]].holders++;
    }
}

static void let_go(livetrack_keeper *keeper, int kept)
{
    livetrack_let_go_in(keeper, "fuzz_let_go");
    if (kept < 0)
        return;
    objs[kept].holders--;
    if (objs[kept].refs + objs[kept].holders == 0)
        model_die(kept);
}

/* The release just made is refused: put the object back. */
static void restore(int o, const livetrack_object *before, uint32_t refs_taken, livetrack_keeper *const keepers[2],
                    const int kept[2])
{
    mobj *m = &objs[o];
    livetrack_status status = livetrack_restore(before, refs_taken, keepers, "fuzz_refused");
    if (status == LIVETRACK_NO_MEMORY) {
        EXPECT(faults_armed && !m->alive, "restore: out of memory with no failure injected");
        return;
    }
    EXPECT(status == LIVETRACK_OK, "restore: status %d", (int)status);
    if (m->alive) { /* still linked: the references taken come back */
        m->refs += refs_taken;
        return;
    }
    /* Back in its place: the parents kept, else what their handles name
     * before it is linked, unless made after it (a parent at its own
     * handle, the object it replaced, died with it: nothing). */
    for (int k = 0; k < 2; k++) {
        int p = keepers ? kept[k] : linked_at(m->domain, before->parents[k]);
        if (!keepers && p >= 0 && objs[p].seq > m->seq)
            p = -1;
        m->parents[k] = p;
        if (p >= 0)
            objs[p].holders++;
    }
    m->alive = m->linked = 1;
    m->refs = refs_taken;
    m->holders = 0;
    cur[m->domain][m->slot] = o;
}

static void op_release(int all, uint8_t op)
{
    int d;
    int slot = pick_slot(next_byte(), &d);
    int o = cur[d][slot];
    unsigned type = pick_type(next_byte(), o);
    livetrack_status expected = expected_access(o, type);
    if (expected == LIVETRACK_OK && objs[o].refs == 0)
        expected = LIVETRACK_NOT_OWNED;
    uint32_t left = 0xdeadbeef, expected_left = 0;
    int parents[2] = {-1, -1};
    int refused = expected == LIVETRACK_OK && (op & 1), kept[2] = {-1, -1};
    livetrack_object before;
    livetrack_keeper *keepers[2] = {NULL, NULL};
    if (refused) {
        EXPECT(livetrack_lookup(domains[d], handle_of(slot), &before) == LIVETRACK_OK, "release: lookup before");
        if (op & 2)
            keep_parents(o, &before, keepers, kept);
    }
    if (expected == LIVETRACK_OK) {
        objs[o].refs = all ? 0 : objs[o].refs - 1;
        expected_left = objs[o].refs;
        parents[0] = objs[o].parents[0];
        parents[1] = objs[o].parents[1];
        if (objs[o].refs + objs[o].holders == 0)
            model_die(o);
    }
    livetrack_status status = all ? livetrack_destroy(domains[d], type, handle_of(slot), "fuzz_destroy")
                                  : livetrack_release(domains[d], type, handle_of(slot), &left, "fuzz_release");
    EXPECT(status == expected, "%s: status %d, model %d", all ? "destroy" : "release", (int)status, (int)expected);
    refused_calls += status != LIVETRACK_OK;
    if (!all)
        EXPECT(left == expected_left, "release: %u refs left, model %u", left, expected_left);
    if (refused) {
        restore(o, &before, all ? before.refs : 1, (op & 2) ? keepers : NULL, kept);
        for (int k = 0; k < 2; k++)
            let_go(keepers[k], kept[k]);
        for (int k = 0; k < 2; k++)
            if (objs[o].parents[k] >= 0 && objs[objs[o].parents[k]].linked)
                expect_handle(objs[objs[o].parents[k]].domain, objs[objs[o].parents[k]].slot);
    }
    expect_handle(d, slot);
    if (o >= 0)
        EXPECT(livetrack_still_live(&objs[o].desc) == objs[o].linked, "release: still_live");
    for (int k = 0; k < 2; k++)
        if (parents[k] >= 0 && objs[parents[k]].linked)
            expect_handle(objs[parents[k]].domain, objs[parents[k]].slot);
}

static void op_still_live(void)
{
    uint8_t b = next_byte();
    if (!nobjs)
        return;
    int o = (int)(b % (unsigned)nobjs);
    EXPECT(livetrack_still_live(&objs[o].desc) == objs[o].linked, "still_live of object %d", o);
}

static int while_live_ran;
static void note_ran(void *context) { *(int *)context += 1; }

static void op_while_live(void)
{
    uint8_t b = next_byte();
    if (!nobjs)
        return;
    int o = (int)(b % (unsigned)nobjs);
    int ran = 0;
    EXPECT(livetrack_while_live(&objs[o].desc, note_ran, &ran) == objs[o].linked && ran == objs[o].linked,
           "while_live of object %d", o);
    while_live_ran += ran;
}

static livetrack_domain pick_filter(uint8_t b)
{
    static const livetrack_domain filters[4] = {LIVETRACK_DOMAIN_ANY, LIVETRACK_DOMAIN_USER, LIVETRACK_DOMAIN_CUDA,
                                                LIVETRACK_DOMAIN_OPENCL};
    return filters[b % 4];
}

static void op_snapshot(void)
{
    uint8_t b = next_byte();
    expect_snapshot(pick_filter(b), owners[(b >> 2) % 3], 0);
}

static void op_since(void)
{
    uint8_t b = next_byte();
    expect_snapshot(pick_filter(b), owners[(b >> 2) % 3], mark);
}

static void op_report(void)
{
    uint8_t b = next_byte();
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    if (!out)
        abort();
    uint64_t since = (b & 1) ? mark : 0;
    /* livetrack_leaks_since (b & 16) writes text. JSON lists every misuse
     * kept (up to 1024, from all inputs so far): one report in four. */
    livetrack_format format = (b & 0x22) == 0x22 && !(b & 16) ? LIVETRACK_FORMAT_JSON : LIVETRACK_FORMAT_TEXT;
    unsigned flags = (b & 4) ? LIVETRACK_REPORT_ALWAYS : 0;
    flags |= (b & 8) ? LIVETRACK_REPORT_PEAK : 0;
    size_t leaked = (b & 16) ? livetrack_leaks_since(since, out) : livetrack_write_report(out, format, flags, since);
    fclose(out);
    uint64_t expected = model_leaks(since);
    EXPECT(leaked == expected || faults_armed, "report: %zu leaked, model %llu", leaked, (unsigned long long)expected);
    if (!faults_armed && format == LIVETRACK_FORMAT_TEXT && !(b & 16)) {
        char total[64];
        snprintf(total, sizeof total, "total: %llu leaked object", (unsigned long long)expected);
        if (expected)
            EXPECT(strstr(text, total), "report: no \"%s\" line", total);
        else if (!flags)
            EXPECT(length == 0, "report: text written with nothing leaked");
    }
    if (format == LIVETRACK_FORMAT_JSON && !faults_armed)
        EXPECT(length > 0 && text[0] == '{', "report: JSON does not start with {");
    free(text);
}

static void op_misuse(void)
{
    uint8_t b = next_byte(), c = next_byte();
    refused_calls++;
    livetrack_new_object request;
    memset(&request, 0, sizeof request);
    request.domain = LIVETRACK_DOMAIN_USER;
    request.handle = handle_of(c % POOL);
    switch (b % 12) {
    case 0: /* handle 0 */
        request.handle = 0;
        EXPECT(livetrack_create(&request) == LIVETRACK_BAD_ARGUMENT, "create of handle 0");
        break;
    case 1: /* no domain, or one past the last */
        request.domain = (c & 1) ? LIVETRACK_DOMAIN_ANY : (livetrack_domain)(LIVETRACK_DOMAIN_COUNT + c);
        EXPECT(livetrack_create(&request) == LIVETRACK_BAD_ARGUMENT, "create in domain %d", (int)request.domain);
        break;
    case 2: /* a type past the table */
        request.type = LIVETRACK_MAX_TYPES + c;
        EXPECT(livetrack_create(&request) == LIVETRACK_BAD_ARGUMENT, "create of type %u", request.type);
        break;
    case 3:
        EXPECT(livetrack_create(NULL) == LIVETRACK_BAD_ARGUMENT, "create(NULL)");
        break;
    case 4: { /* handles of the pool in domains nothing lives in */
        livetrack_domain domain = (c & 1) ? LIVETRACK_DOMAIN_LEVEL_ZERO : (livetrack_domain)(200 + c);
        EXPECT(livetrack_retain(domain, LIVETRACK_ANY_TYPE, request.handle, NULL) == LIVETRACK_UNKNOWN,
               "retain in an empty domain");
        EXPECT(livetrack_release(domain, LIVETRACK_ANY_TYPE, request.handle, NULL, NULL) == LIVETRACK_UNKNOWN,
               "release in an empty domain");
        EXPECT(livetrack_destroy(domain, LIVETRACK_ANY_TYPE, request.handle, NULL) == LIVETRACK_UNKNOWN,
               "destroy in an empty domain");
        EXPECT(livetrack_lookup(domain, request.handle, NULL) == LIVETRACK_UNKNOWN, "lookup in an empty domain");
        break;
    }
    case 5: /* handles never created */
        EXPECT(livetrack_release(LIVETRACK_DOMAIN_USER, LIVETRACK_ANY_TYPE, unknown_handle(c), NULL, NULL) ==
                   LIVETRACK_UNKNOWN,
               "release of an unknown handle");
        EXPECT(livetrack_retain(LIVETRACK_DOMAIN_CUDA, c % NTYPES, 0, NULL) == LIVETRACK_UNKNOWN, "retain of 0");
        break;
    case 6: /* names of things that do not exist */
        EXPECT(livetrack_type_name((livetrack_domain)(c % 8), 0xffffff00u + c) != NULL, "type_name");
        EXPECT(livetrack_domain_name((livetrack_domain)c) != NULL, "domain_name");
        EXPECT(livetrack_status_name((livetrack_status)c) != NULL, "status_name");
        break;
    case 7: /* NULL everywhere it is allowed */
        EXPECT(!livetrack_still_live(NULL), "still_live(NULL)");
        EXPECT(!livetrack_while_live(NULL, note_ran, &while_live_ran), "while_live(NULL)");
        EXPECT(livetrack_snapshot_count(NULL) == 0 && livetrack_snapshot_at(NULL, c) == NULL, "NULL snapshot");
        livetrack_snapshot_free(NULL);
        livetrack_get_stats(NULL);
        break;
    case 8: /* a table too big, or missing */
        EXPECT(livetrack_declare_types(LIVETRACK_DOMAIN_USER, "x", type_names[0], LIVETRACK_MAX_TYPES + 1 + c) ==
                   LIVETRACK_BAD_ARGUMENT,
               "declare_types too many");
        EXPECT(livetrack_declare_types(LIVETRACK_DOMAIN_USER, "x", NULL, 1 + c % 4) == LIVETRACK_BAD_ARGUMENT,
               "declare_types NULL");
        EXPECT(livetrack_declare_types(LIVETRACK_DOMAIN_ANY, "x", type_names[0], NTYPES) == LIVETRACK_BAD_ARGUMENT,
               "declare_types ANY");
        break;
    case 9: /* a misuse the front end reports */
        livetrack_report_misuse_on(domains[c & 1], handle_of(c % POOL), "fuzz misuse %u", (unsigned)c);
        misuse++;
        break;
    case 10:
        livetrack_report_misuse("fuzz misuse without an object %u", (unsigned)c);
        misuse++;
        break;
    case 11: { /* a retain of a wrong type on a live handle changes nothing */
        int d = c >> 7;
        int o = cur[d][c % POOL];
        unsigned type = o >= 0 ? (objs[o].type + 1) % NTYPES : 0;
        EXPECT(livetrack_retain(domains[d], type, handle_of(c % POOL), NULL) ==
                   (o >= 0 ? LIVETRACK_WRONG_TYPE : LIVETRACK_UNKNOWN),
               "retain of the wrong type");
        expect_handle(d, c % POOL);
        break;
    }
    }
}

static void op_fault(void)
{
    uint8_t after = next_byte(), count = next_byte();
    /* One fault operation in sixteen arms: while armed the model accepts
     * failures it cannot predict, so armed stretches stay rare and short.
     * A few allocations fail, starting soon: snapshots, reports, slabs
     * and bucket arrays meet a failure somewhere. */
    if (after < 0xf0)
        return;
    lt_fault_alloc_set(after % 16, 1 + count % 4);
    injected_runs += !faults_armed;
    faults_armed = 1;
}

static void run_op(uint8_t op)
{
    switch ((op >> 2) % OP_COUNT) {
    case OP_CREATE:
    case OP_CREATE2: op_create(); break;
    case OP_RETAIN: op_retain(); break;
    case OP_RELEASE: op_release(0, op); break;
    case OP_DESTROY: op_release(1, op); break;
    case OP_LOOKUP: {
        int d;
        int slot = pick_slot(next_byte(), &d);
        expect_handle(d, slot);
        break;
    }
    case OP_STILL_LIVE: op_still_live(); break;
    case OP_SNAPSHOT: op_snapshot(); break;
    case OP_REPORT: op_report(); break;
    case OP_STATS: expect_stats(); break;
    case OP_MARK:
        mark = livetrack_mark();
        EXPECT(mark >= last_seq && (!seq_counted || mark == last_seq), "mark %llu, newest %llu",
               (unsigned long long)mark, (unsigned long long)last_seq);
        last_seq = mark;
        break;
    case OP_SINCE: op_since(); break;
    case OP_MISUSE: op_misuse(); break;
    case OP_FAULT: op_fault(); break;
    case OP_WHILE_LIVE: op_while_live(); break;
    case OP_SWITCH: break; /* taken by run_run() */
    }
}

/* ---- simulated threads ---------------------------------------------------------- */

/* The baton: thread t runs when go[t] is posted and posts back_home
 * when its run ends; everything above is touched only by the thread that
 * holds the baton, and each hand-over orders memory. */
static sem_t go[SIM_THREADS], back_home;
static pthread_t sim_threads[SIM_THREADS];
static int sim_started;

static int ops_left;
static int next_thread; /* where the program continues after a run */

/* Run operations until the program ends or switches to another thread. */
static void run_run(int me)
{
    next_thread = me;
    while (input_pos < input_size && ops_left > 0) {
        uint8_t op = input[input_pos++];
        ops_left--;
        op_index++;
        total_ops++;
        /* past the failures: the registry must agree exactly again */
        if (faults_armed && lt_fault_alloc_pending() == 0)
            faults_armed = 0;
        if ((op >> 2) % OP_COUNT == OP_SWITCH) {
            if ((op & 3) % SIM_THREADS != me) {
                next_thread = (op & 3) % SIM_THREADS;
                return;
            }
            continue;
        }
        run_op(op);
    }
}

static void *sim_thread_main(void *arg)
{
    int me = (int)(uintptr_t)arg;
    for (;;) {
        while (sem_wait(&go[me]) != 0)
            ;
        run_run(me);
        sem_post(&back_home);
    }
    return NULL;
}

static void hand_to(int thread)
{
    sem_post(&go[thread]);
    while (sem_wait(&back_home) != 0)
        ;
}

static void start_threads(void)
{
    if (sim_started)
        return;
    sim_started = 1;
    sem_init(&back_home, 0, 0);
    for (int t = 1; t < SIM_THREADS; t++) {
        sem_init(&go[t], 0, 0);
        if (pthread_create(&sim_threads[t], NULL, sim_thread_main, (void *)(uintptr_t)t) != 0)
            abort();
    }
}

/* ---- one input ------------------------------------------------------------------- */

static void begin_input(const uint8_t *data, size_t size)
{
    input = data;
    input_size = size;
    input_pos = 0;
    ops_left = MAX_OPS;
    op_index = 0;
    nobjs = 0;
    faults_armed = 0;
    for (int d = 0; d < DOMAINS; d++)
        for (int s = 0; s < POOL; s++)
            cur[d][s] = -1;
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    EXPECT(stats.live_objects == 0, "an earlier input left %llu objects", (unsigned long long)stats.live_objects);
    created_now = stats.created;
    last_seq = mark = livetrack_mark();
    replaced_base = stats.replaced;
    replaced = 0;
    misuse_base = stats.misuse;
    misuse = 0;
}

/* Destroy whatever the input left; the registry must end up empty. The
 * newest live object is never held by another (holds point to older
 * objects), so destroying linked objects with references, newest first,
 * frees everything. */
static void end_input(void)
{
    lt_fault_alloc_set(-1, 0);
    faults_armed = 0;
    expect_stats();
    expect_snapshot(LIVETRACK_DOMAIN_ANY, NULL, 0);
    for (int o = nobjs; o-- > 0;) {
        if (!objs[o].linked || !objs[o].refs)
            continue;
        EXPECT(livetrack_destroy(domains[objs[o].domain], objs[o].type, handle_of(objs[o].slot), NULL) ==
                   LIVETRACK_OK,
               "cleanup: destroy");
        objs[o].refs = 0;
        if (!objs[o].holders)
            model_die(o);
    }
    for (int o = 0; o < nobjs; o++)
        EXPECT(!objs[o].alive, "cleanup: object %d still alive in the model", o);
    livetrack_stats stats;
    livetrack_get_stats(&stats);
    EXPECT(stats.live_objects == 0 && stats.live_bytes == 0, "cleanup: %llu objects left",
           (unsigned long long)stats.live_objects);
}

/* The settings this target runs with. They are read when the core
 * starts, before main(): when the environment does not have them yet,
 * the program runs itself again with them. */
static const char *const fuzz_settings[][2] = {
    {"LIVETRACK_STACK_DEPTH", "4"},          /* the fuzzer's own frames */
    {"LIVETRACK_RELEASE_STACKS", "1"},       /* one more path on release */
    {"LIVETRACK_MAX_DIAGNOSTICS", "5"},      /* misuse is reported by the thousand */
    {"LIVETRACK_EXIT_REPORT", "off"},
};

static void fuzz_setup(char **argv)
{
    if (argv && !getenv("FUZZ_REGISTRY_SETTINGS")) {
        for (size_t i = 0; i < sizeof fuzz_settings / sizeof fuzz_settings[0]; i++)
            setenv(fuzz_settings[i][0], fuzz_settings[i][1], 0);
        setenv("FUZZ_REGISTRY_SETTINGS", "1", 1);
        execv("/proc/self/exe", argv);
        perror("fuzz_registry: cannot run itself again");
    }
    for (int d = 0; d < DOMAINS; d++)
        if (livetrack_declare_types(domains[d], d ? "fuzzcuda" : "fuzz", type_names[d], NTYPES) != LIVETRACK_OK)
            abort();
    start_threads();
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    const char *order = getenv("LIVETRACK_CREATION_ORDER");
    seq_counted = order && !strcmp(order, "counter");
    fuzz_setup(*argv);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    begin_input(data, size);
    next_thread = 0;
    while (input_pos < input_size && ops_left > 0) {
        if (next_thread == 0)
            run_run(0);
        else
            hand_to(next_thread);
    }
    end_input();
    return 0;
}
