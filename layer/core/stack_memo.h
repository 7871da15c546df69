/*
 * The stack memo (stack_memo.c): skip the unwinder when a thread creates
 * objects again from a stack it has walked before.
 *
 * A loop that creates objects calls the capture from the same stack
 * pointer with the same return addresses above it, every time. Walking
 * that stack with libunwind costs ~20 ns a frame; reading the few words
 * where the return addresses are kept and comparing them costs ~1 ns a
 * frame. The memo remembers, per thread, where each return address of a
 * walked stack lives (learned once with a slower walk that reports every
 * frame's stack pointer), and answers the interned id when the words
 * there still hold the same addresses.
 *
 * Why that is enough: the unwinder computes each frame from the one
 * below it, using the return address found in a stack slot and the rules
 * the compiler wrote for that address. Same starting stack pointer, same
 * return addresses in the same slots: same frames. The one way around it
 * is a function whose frame size changes between calls (alloca or a
 * variable-length array) while the frames below it shift to land on the
 * very same stack pointer, and stale copies of the old return addresses
 * are left where the old frames were. The memo is x86-64 only (the
 * return address sits just below the caller's stack pointer), is used
 * only on the thread's own pthread stack (bounds known, so every read is
 * of mapped memory), and never for stacks through a signal frame.
 */
#ifndef LIVETRACK_STACK_MEMO_H
#define LIVETRACK_STACK_MEMO_H

#include <stdint.h>

#include "livetrack/livetrack.h"

/* The key of a capture: the address of a local of the capturing function
 * (its stack pointer, in effect), its return address, the kind of object
 * and how many frames were asked for. */
typedef struct lt_memo_key {
    uintptr_t frame;
    uintptr_t return_address;
    uint32_t kind;
    uint32_t asked;
} lt_memo_key;

/* The id remembered for this key if the stack above still is the one
 * walked, else 0. Never allocates; safe under a registry lock. */
livetrack_stack_id lt_memo_find(const lt_memo_key *key);

/* After a full walk gave frames[0..count) and `id` for this key: remember
 * it, once the key has come twice (a thread creating from ever new stack
 * depths should not pay for learning what it never reuses). Must be
 * called on the capturing function's stack, from it or a function it
 * calls: frames[1] is the capturing function's return address, and the
 * memo walks the stack again, up to that frame and beyond, to find the
 * slots. */
void lt_memo_offer(const lt_memo_key *key, const uintptr_t *frames, unsigned count, livetrack_stack_id id);

#endif
