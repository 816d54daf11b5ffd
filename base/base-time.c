// SPDX-License-Identifier: Apache-2.0
/*
 * UTC time stamps (RFC 3339) without the C library's time zone machinery: for the JSON log's
 * "time" and --debug's phase objects, and the state's "created".
 */
#include "hutch-base.h"

#include <stdio.h>
#include <time.h>

/* The civil date of a day count since 1970-01-01 (proleptic Gregorian; H. Hinnant's
 * days_from_civil inverted): glibc's gmtime_r loads the time zone on first use. */
static void civil(int64_t days, int64_t *y, unsigned *m, unsigned *d)
{
	days += 719468;
	int64_t era = (days >= 0 ? days : days - 146096) / 146097;
	unsigned doe = (unsigned)(days - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

void hutch_utc_stamp(const struct timespec *ts, bool nanos, char out[HUTCH_UTC_MAX])
{
	int64_t s = ts->tv_sec, days = (s >= 0 ? s : s - 86399) / 86400, y;
	int64_t sec = s - days * 86400;
	unsigned m, d;
	civil(days, &y, &m, &d);
	int n = snprintf(out, HUTCH_UTC_MAX, "%04lld-%02u-%02uT%02d:%02d:%02d", (long long)y, m, d,
			 (int)(sec / 3600), (int)(sec / 60 % 60), (int)(sec % 60));
	if (n > 0 && nanos)
		snprintf(out + n, (size_t)(HUTCH_UTC_MAX - n), ".%09ldZ", ts->tv_nsec);
	else if (n > 0)
		snprintf(out + n, (size_t)(HUTCH_UTC_MAX - n), "Z");
}
