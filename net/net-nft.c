// SPDX-License-Identifier: Apache-2.0
/*
 * Outbound NAT for bridge mode through nftables' own library: table "ip hutch" with one nat
 * postrouting base chain (made when missing, never removed), and one masquerade rule per
 * sandbox address, tagged by a comment so that it can be found by its handle and deleted when
 * the sandbox ends, or by the next hutch when this one was SIGKILLed.
 */
#include "net-internal.h"

#include <dlfcn.h>
#include <nftables/libnftables.h>
#include <stdio.h>
#include <string.h>

#define TABLE "ip hutch"
#define CHAIN "postrouting"

/*
 * Debian ships libnftables only as a shared object, and hutch is static. Static glibc's
 * dlopen loads it together with a second copy of libc: that works for libnftables because
 * every result comes back through return values and its own error buffer (never errno, which
 * lives in the other libc's TLS). Loading it only here keeps every other start free of the
 * dynamic loader. The prototypes come from the real header, so the ABI is checked.
 */
static struct {
	void *dl;
	__typeof__(&nft_ctx_new) ctx_new;
	__typeof__(&nft_ctx_free) ctx_free;
	__typeof__(&nft_ctx_buffer_output) buffer_output;
	__typeof__(&nft_ctx_buffer_error) buffer_error;
	__typeof__(&nft_ctx_get_output_buffer) get_output;
	__typeof__(&nft_ctx_get_error_buffer) get_error;
	__typeof__(&nft_ctx_output_set_flags) set_flags;
	__typeof__(&nft_run_cmd_from_buffer) run;
	struct nft_ctx *ctx; /* one per process: making one reads iproute2's tables (~ms) */
} lib;

static int load_lib(struct hutch_err *err)
{
	if (lib.dl)
		return 0;
	void *dl = dlopen("libnftables.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!dl)
		return hutch_fail(err, ENOTSUP,
				  "bridge networking needs libnftables.so.1 "
				  "(apt-get install libnftables1): %s",
				  dlerror());
	struct {
		void **slot;
		const char *name;
	} syms[] = {
		{ (void **)&lib.ctx_new, "nft_ctx_new" },
		{ (void **)&lib.ctx_free, "nft_ctx_free" },
		{ (void **)&lib.buffer_output, "nft_ctx_buffer_output" },
		{ (void **)&lib.buffer_error, "nft_ctx_buffer_error" },
		{ (void **)&lib.get_output, "nft_ctx_get_output_buffer" },
		{ (void **)&lib.get_error, "nft_ctx_get_error_buffer" },
		{ (void **)&lib.set_flags, "nft_ctx_output_set_flags" },
		{ (void **)&lib.run, "nft_run_cmd_from_buffer" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(syms); i++) {
		*syms[i].slot = dlsym(dl, syms[i].name);
		if (!*syms[i].slot) {
			dlclose(dl);
			return hutch_fail(err, ENOTSUP, "libnftables.so.1: no symbol %s",
					  syms[i].name);
		}
	}
	lib.dl = dl;
	return 0;
}

/* Runs one nft script; on success *out (if given) is a copy of what it printed. */
static int run(const char *script, unsigned flags, char **out, struct hutch_err *err)
{
	TRY(load_lib(err));
	if (!lib.ctx) {
		struct nft_ctx *c = lib.ctx_new(NFT_CTX_DEFAULT);
		if (!c)
			return hutch_fail(err, ENOMEM, "nft: cannot create a context");
		if (lib.buffer_output(c) < 0 || lib.buffer_error(c) < 0) {
			lib.ctx_free(c);
			return hutch_fail(err, ENOMEM, "nft: cannot buffer output");
		}
		lib.ctx = c;
	}
	struct nft_ctx *c = lib.ctx;
	lib.set_flags(c, flags);
	if (lib.run(c, script) != 0) {
		const char *e = lib.get_error(c);
		size_t len = e ? strcspn(e, "\n") : 0;
		return hutch_fail(err, EINVAL, "nft: %.*s", (int)len, len ? e : "failed");
	}
	if (out) {
		const char *o = lib.get_output(c);
		*out = hutch_xstrdup(o ? o : "");
	}
	return 0;
}

/* "add" is idempotent for tables and chains: concurrent hutches both succeed. */
#define BASE                                                                                       \
	"add table " TABLE "\n"                                                                    \
	"add chain " TABLE " " CHAIN " { type nat hook postrouting priority srcnat; "              \
	"policy accept; }\n"

int net_nft_masq_add(const char *bridge, uint32_t addr, struct hutch_err *err)
{
	char a[NET_IPV4_LEN];
	net_ipv4_format(addr, a);
	if (strchr(bridge, '"'))
		return hutch_fail(err, EINVAL, "bridge name %s: bad character", bridge);
	/* Traffic that leaves through the bridge stays between sandboxes and the host: only
	 * what goes out another interface takes that interface's address. */
	_cleanup_free_ char *cmd = hutch_xasprintf(BASE "add rule " TABLE " " CHAIN
							" ip saddr %s oifname != \"%s\" masquerade "
							"comment \"hutch:%s\"\n",
						   a, bridge, a);
	int r = run(cmd, 0, NULL, err); /* one transaction: base chain and rule */
	return r < 0 ? hutch_err_prefix(err, "masquerade %s: ", a) : 0;
}

/* "delete rule" needs handles: list the chain with them and pick the lines with our tag. */
static char *delete_script(const char *listing, const char *tag)
{
	char *script = hutch_xstrdup("");
	for (const char *l = listing; l && *l;) {
		const char *end = strchr(l, '\n');
		size_t len = end ? (size_t)(end - l) : strlen(l);
		_cleanup_free_ char *line = hutch_xasprintf("%.*s", (int)len, l);
		const char *h = strstr(line, "# handle ");
		unsigned long long handle;
		if (strstr(line, tag) && h && sscanf(h, "# handle %llu", &handle) == 1) {
			char *s = hutch_xasprintf("%sdelete rule " TABLE " " CHAIN " handle %llu\n",
						  script, handle);
			free(script);
			script = s;
		}
		l = end ? end + 1 : l + len;
	}
	return script;
}

int net_nft_masq_del(uint32_t addr, struct hutch_err *err)
{
	char a[NET_IPV4_LEN];
	net_ipv4_format(addr, a);
	_cleanup_free_ char *tag = hutch_xasprintf("comment \"hutch:%s\"", a);
	_cleanup_free_ char *listing = NULL;
	int r = run(BASE "list chain " TABLE " " CHAIN "\n", NFT_CTX_OUTPUT_HANDLE, &listing, err);
	if (r < 0)
		return hutch_err_prefix(err, "remove masquerade %s: ", a);
	_cleanup_free_ char *script = delete_script(listing, tag);
	if (!*script)
		return 0;
	r = run(script, 0, NULL, err);
	return r < 0 ? hutch_err_prefix(err, "remove masquerade %s: ", a) : 0;
}
