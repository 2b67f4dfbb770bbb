/*
 * ddb_crc32: the CRC-32 DynamoDB sends in x-amz-crc32 with each answer
 * (ddb_json.h).
 */
#include "core/store/dynamodb/ddb_json.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Reflected CRC-32, polynomial 0xEDB88320, eight bytes a step ("slicing
 * by 8": table[k][b] is the CRC of byte b followed by k zero bytes), the
 * tables built on first use. Every answer is checked against its
 * x-amz-crc32: a byte at a time this was 2% of the gateway's CPU. */
uint32_t ddb_crc32(const void *data, size_t len)
{
	static uint32_t table[8][256];
	static atomic_bool ready;
	if (!atomic_load_explicit(&ready, memory_order_acquire)) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int j = 0; j < 8; j++)
				c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
			table[0][i] = c;
		}
		for (int k = 1; k < 8; k++)
			for (int i = 0; i < 256; i++)
				table[k][i] =
					(table[k - 1][i] >> 8) ^ table[0][table[k - 1][i] & 0xFF];
		atomic_store_explicit(&ready, true, memory_order_release);
	}
	const unsigned char *p = data;
	uint32_t c = 0xFFFFFFFFu;
	for (; len >= 8; p += 8, len -= 8) {
		uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				   (uint32_t)p[3] << 24);
		uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
			      (uint32_t)p[7] << 24;
		c = table[7][lo & 0xFF] ^ table[6][lo >> 8 & 0xFF] ^ table[5][lo >> 16 & 0xFF] ^
		    table[4][lo >> 24] ^ table[3][hi & 0xFF] ^ table[2][hi >> 8 & 0xFF] ^
		    table[1][hi >> 16 & 0xFF] ^ table[0][hi >> 24];
	}
	for (; len > 0; p++, len--)
		c = table[0][(c ^ *p) & 0xFF] ^ (c >> 8);
	return c ^ 0xFFFFFFFFu;
}
