/*
 * Just enough of the protocol buffers wire format to write a pprof
 * profile: varints, length-delimited fields and packed repeated numbers,
 * into growable byte buffers. A nested message is built in its own buffer
 * and then added to its parent as a length-delimited field.
 */
#ifndef LIVETRACK_PROTOBUF_H
#define LIVETRACK_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct pb_buffer {
    unsigned char *data;
    size_t size, capacity;
} pb_buffer;

/* Field with wire type 0 (int64, uint64, bool). Zero is written too;
 * callers leave out fields that hold their default. */
void pb_varint_field(pb_buffer *buffer, unsigned field, uint64_t value);
/* Field with wire type 2: bytes, a string or an embedded message. */
void pb_bytes_field(pb_buffer *buffer, unsigned field, const void *data, size_t size);
void pb_string_field(pb_buffer *buffer, unsigned field, const char *text);
void pb_message_field(pb_buffer *buffer, unsigned field, const pb_buffer *message);
/* repeated uint64/int64 as one packed field. */
void pb_packed_field(pb_buffer *buffer, unsigned field, const uint64_t *values, size_t count);
/* The bytes of `fields` (complete fields) after those of `buffer`. */
void pb_append(pb_buffer *buffer, const pb_buffer *fields);
void pb_reset(pb_buffer *buffer); /* empty, keeps the memory */
void pb_free(pb_buffer *buffer);

#endif
