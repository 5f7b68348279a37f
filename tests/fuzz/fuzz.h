/*
 * fuzz: the one entry point every target in tests/fuzz/ defines. libFuzzer
 * calls it in the fuzz build; replay.c calls it once per corpus file in
 * the normal build, so the seed corpora are regression tests.
 */
#ifndef LUASCALE_FUZZ_H
#define LUASCALE_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Runs one input. Must not keep 'data' and must free all it allocates;
 * returns 0 (libFuzzer's contract). A bug aborts or trips a sanitizer. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
