// SPDX-License-Identifier: Apache-2.0
/*
 * The formats images are made of: sha256 digests ("sha256:hex", through libcrypto) and the
 * JSON of OCI manifests and configs (yajl). Kept apart from the store so that both import
 * and commit write manifests the same way.
 */
#include "img-internal.h"
#include "hutch-json.h"

#include <stdio.h>
#include <string.h>

/* The low-level SHA256 calls are deprecated in OpenSSL 3 but need no EVP context (which can
 * fail to allocate) and are as fast; sc-cache.c makes the same choice. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

void img_sha_init(struct img_sha *h)
{
	SHA256_Init(&h->c);
}

void img_sha_update(struct img_sha *h, const void *p, size_t n)
{
	SHA256_Update(&h->c, p, n);
}

void img_sha_final(struct img_sha *h, char out[IMG_DIGEST_MAX])
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	SHA256_Final(md, &h->c);
	memcpy(out, "sha256:", 7);
	for (size_t i = 0; i < sizeof(md); i++)
		snprintf(out + 7 + 2 * i, 3, "%02x", md[i]);
}

void img_sha_buf(const void *p, size_t n, char out[IMG_DIGEST_MAX])
{
	struct img_sha h;
	img_sha_init(&h);
	img_sha_update(&h, p, n);
	img_sha_final(&h, out);
}

bool img_digest_valid(const char *d)
{
	if (!d || strncmp(d, "sha256:", 7) != 0 || strlen(d) != 7 + 64)
		return false;
	for (const char *p = d + 7; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

const char *img_json_str(yajl_val obj, const char *key)
{
	yajl_val v = hutch_json_get(obj, key);
	return YAJL_IS_STRING(v) ? v->u.string : NULL;
}

static void gen_desc(yajl_gen g, const struct img_desc *d)
{
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "mediaType");
	hutch_json_gen_str(g, d->media_type);
	hutch_json_gen_str(g, "digest");
	hutch_json_gen_str(g, d->digest);
	hutch_json_gen_str(g, "size");
	yajl_gen_integer(g, (long long)d->size);
	yajl_gen_map_close(g);
}

char *img_manifest_json(const struct img_desc *config, const struct img_desc *layers, size_t n)
{
	_cleanup_gen_ yajl_gen g = yajl_gen_alloc(NULL);
	yajl_gen_map_open(g);
	hutch_json_gen_str(g, "schemaVersion");
	yajl_gen_integer(g, 2);
	hutch_json_gen_str(g, "mediaType");
	hutch_json_gen_str(g, "application/vnd.oci.image.manifest.v1+json");
	hutch_json_gen_str(g, "config");
	gen_desc(g, config);
	hutch_json_gen_str(g, "layers");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < n; i++)
		gen_desc(g, &layers[i]);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	const unsigned char *buf;
	size_t len;
	yajl_gen_get_buf(g, &buf, &len);
	char *out = hutch_xmalloc(len + 1);
	memcpy(out, buf, len);
	out[len] = '\0';
	return out;
}
