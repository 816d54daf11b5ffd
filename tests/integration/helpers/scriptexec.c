// SPDX-License-Identifier: Apache-2.0
/*
 * scriptexec: runs bash on the script $SCRIPTEXEC_SCRIPT with this program's arguments. A
 * copy of it stands in for a program that must be a binary (hutch runs a --runtime through
 * its fd, which a script's interpreter could not reopen), under that program's name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *script = getenv("SCRIPTEXEC_SCRIPT");
	if (!script) {
		fprintf(stderr, "scriptexec: set SCRIPTEXEC_SCRIPT\n");
		return 2;
	}
	char **v = calloc((size_t)argc + 2, sizeof(char *));
	v[0] = "bash", v[1] = (char *)script;
	for (int i = 1; i < argc; i++)
		v[i + 1] = argv[i];
	execv("/bin/bash", v);
	perror("scriptexec: /bin/bash");
	return 127;
}
