/*
 * cli/kustomize: where a file that a config names beside itself comes
 * from when the config is one file of a kustomize ConfigMap generator
 * (deploy/overlays/<cloud>/config.yaml merged into the base's
 * luascale-config, whose default.lua lies in deploy/base). Reads
 * kustomization files only; renders nothing and runs no kustomize.
 */
#ifndef LUASCALE_CLI_KUSTOMIZE_H
#define LUASCALE_CLI_KUSTOMIZE_H

#include <stddef.h>

#include "errbuf.h"

/*
 * 'config_path' is a file of a configMapGenerator of the kustomization in
 * its folder; 'key' is the name of another file of the same ConfigMap as
 * it is mounted (the name beside config.yaml). Looks 'key' up in that
 * generator, then in the generators of the same name in the
 * kustomizations its resources name (depth first, the first found wins,
 * as kustomize's merge keeps the overlay's own files). Returns 1 with the
 * file's path in 'out' (relative to the current directory when
 * config_path is) and the generator's name in 'cm' and the kustomization
 * that lists the file in 'where'; 0 when config_path is in no generator or
 * the ConfigMap holds no such key; -1 with why when a kustomization cannot
 * be read or parsed.
 */
int kustomize_configmap_file(const char *config_path, const char *key, char *out, size_t outlen,
			     char *cm, size_t cmlen, char *where, size_t wherelen,
			     struct errbuf *err);

#endif
