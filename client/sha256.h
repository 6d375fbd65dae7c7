/*
 * sha256.h - SHA-256 (FIPS 180-4), used to name the history file of a
 * working directory.  Not used for anything secret.
 */
#ifndef SHIRO_CLIENT_SHA256_H
#define SHIRO_CLIENT_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32

/* sha256 - hash len bytes at data into out. */
void sha256(const void *data, size_t len, uint8_t out[SHA256_LEN]);

#endif
