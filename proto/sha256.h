/*
 * sha256.h - SHA-256 (FIPS 180-4), used to name what belongs to a working
 * directory (the client's history file, a project's notes and task list
 * in the store) and for a CURVE public key's fingerprint (proto/keys.h).
 * Not used for anything secret.
 */
#ifndef SHIRO_PROTO_SHA256_H
#define SHIRO_PROTO_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32

/* sha256 - hash len bytes at data into out. */
void sha256(const void *data, size_t len, uint8_t out[SHA256_LEN]);

#endif
