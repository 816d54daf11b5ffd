// SPDX-License-Identifier: Apache-2.0
/*
 * Static builds only. libarchive's pax writer reports an unsupported file type through a
 * helper that lives in archive_write_set_format.o, whose format-by-name table pulls in every
 * writer, xar's among them, and with it libxml2 and ICU. Defining the helper here keeps
 * that object (and ~30 MB) out of the binary. Same behaviour as libarchive 3.6's.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>

void __archive_write_entry_filetype_unsupported(struct archive *a, struct archive_entry *entry,
						const char *format);

void __archive_write_entry_filetype_unsupported(struct archive *a, struct archive_entry *entry,
						const char *format)
{
	archive_set_error(a, EINVAL, "%s: %s format cannot archive this file type",
			  archive_entry_pathname(entry), format);
}
