// SPDX-License-Identifier: Apache-2.0
/*
 * Where messages go. Text goes to stderr; with --log-format json each message is also
 * written as one {"level","msg","time"} object a line to the --log file, as runc does,
 * so that conmon and containerd's shim can show the error.
 */
#include "hutch-base.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int log_fd = -1;
static bool log_json;
static bool log_debug;

void hutch_log_setup(int fd, bool json, bool debug)
{
	log_fd = fd;
	log_json = json;
	log_debug = debug;
}

static size_t json_escape(char *out, size_t cap, const char *s)
{
	size_t o = 0;
	for (; *s && o + 7 < cap; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20) {
			o += snprintf(out + o, cap - o, "\\u%04x", c);
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
	return o;
}

static void write_json(const char *level, const char *msg)
{
	char esc[2048], line[2300], ts[HUTCH_UTC_MAX];
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	hutch_utc_stamp(&now, true, ts);
	json_escape(esc, sizeof(esc), msg);
	int n = snprintf(line, sizeof(line), "{\"level\":\"%s\",\"msg\":\"%s\",\"time\":\"%s\"}\n",
			 level, esc, ts);
	if (n > 0)
		hutch_write_all(log_fd, line,
				(size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

void hutch_log(enum hutch_log_level lvl, const char *fmt, ...)
{
	static const char *const names[] = { "error", "warning", "debug" };
	char msg[1024];
	va_list ap;

	if (lvl == HUTCH_LOG_DEBUG && !log_debug)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* A warning in the json log would be shown by the client as the error: only with --debug. */
	if (log_fd >= 0 && log_json && (lvl == HUTCH_LOG_ERROR || log_debug))
		write_json(lvl == HUTCH_LOG_WARN ? "warning" : names[lvl], msg);
	else if (log_fd >= 0 && !log_json)
		dprintf(log_fd, "hutch: %s: %s\n", names[lvl], msg);
	if (lvl != HUTCH_LOG_DEBUG || log_fd < 0)
		dprintf(2, "hutch: %s: %s\n", names[lvl], msg);
}

static char *title_start, *title_end;

void hutch_proctitle_init(int argc, char **argv)
{
	extern char **environ;
	if (argc <= 0)
		return;
	title_start = argv[0];
	title_end = argv[argc - 1] + strlen(argv[argc - 1]) + 1;
	/* The environment strings follow argv on the initial stack. */
	for (char **e = environ; e && *e; e++)
		if (*e == title_end)
			title_end = *e + strlen(*e) + 1;
}

void hutch_set_proctitle(const char *title)
{
	if (!title_start)
		return;
	size_t cap = (size_t)(title_end - title_start);
	memset(title_start, 0, cap);
	if (cap > 1)
		memcpy(title_start, title, strnlen(title, cap - 1));
}

double hutch_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
