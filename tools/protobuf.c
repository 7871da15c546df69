/*
 * Protocol buffers wire format, writing side (see protobuf.h):
 * a key is (field << 3 | wire type) as a varint; varints are 7 bits a
 * byte, low first, high bit set on all but the last; length-delimited
 * fields are the key, the length as a varint, then the bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "protobuf.h"

enum { WIRE_VARINT = 0, WIRE_LENGTH = 2 };

static void reserve(pb_buffer *buffer, size_t more)
{
    if (buffer->capacity - buffer->size >= more)
        return;
    size_t capacity = buffer->capacity ? buffer->capacity : 256;
    while (capacity - buffer->size < more)
        capacity *= 2;
    buffer->data = cli_realloc(buffer->data, capacity, 1);
    buffer->capacity = capacity;
}

static void put_varint(pb_buffer *buffer, uint64_t value)
{
    reserve(buffer, 10);
    do {
        unsigned char byte = value & 0x7f;
        value >>= 7;
        buffer->data[buffer->size++] = byte | (value ? 0x80 : 0);
    } while (value);
}

void pb_varint_field(pb_buffer *buffer, unsigned field, uint64_t value)
{
    put_varint(buffer, (uint64_t)field << 3 | WIRE_VARINT);
    put_varint(buffer, value);
}

void pb_bytes_field(pb_buffer *buffer, unsigned field, const void *data, size_t size)
{
    put_varint(buffer, (uint64_t)field << 3 | WIRE_LENGTH);
    put_varint(buffer, size);
    reserve(buffer, size);
    if (size)
        memcpy(buffer->data + buffer->size, data, size);
    buffer->size += size;
}

void pb_string_field(pb_buffer *buffer, unsigned field, const char *text)
{
    pb_bytes_field(buffer, field, text, strlen(text));
}

void pb_message_field(pb_buffer *buffer, unsigned field, const pb_buffer *message)
{
    pb_bytes_field(buffer, field, message->data, message->size);
}

void pb_packed_field(pb_buffer *buffer, unsigned field, const uint64_t *values, size_t count)
{
    pb_buffer packed = {NULL, 0, 0};
    for (size_t i = 0; i < count; i++)
        put_varint(&packed, values[i]);
    pb_message_field(buffer, field, &packed);
    pb_free(&packed);
}

void pb_append(pb_buffer *buffer, const pb_buffer *fields)
{
    reserve(buffer, fields->size);
    if (fields->size)
        memcpy(buffer->data + buffer->size, fields->data, fields->size);
    buffer->size += fields->size;
}

void pb_reset(pb_buffer *buffer) { buffer->size = 0; }

void pb_free(pb_buffer *buffer)
{
    free(buffer->data);
    memset(buffer, 0, sizeof *buffer);
}
