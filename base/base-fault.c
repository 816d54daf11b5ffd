// SPDX-License-Identifier: Apache-2.0
/*
 * Fault injection for the tests (tests/security/faults.bats): with HUTCH_TEST_KILL_AT=NAME in
 * its environment, hutch SIGKILLs itself when it reaches the point called NAME, so that a test
 * can check what every phase of create, start, exec, delete and sandbox leaves behind when
 * hutch dies there. HUTCH_TEST_STOP_AT=NAME stops it there instead (SIGSTOP), so that a test
 * can change the files hutch was given between two phases, then SIGCONT it
 * (tests/security/paths.bats). Without the variables a point costs two comparisons.
 */
#include "hutch-base.h"

#include <signal.h>
#include <string.h>

static const char *kill_at, *stop_at;
static bool looked;

void hutch_fault_point(const char *name)
{
	if (!looked) {
		kill_at = getenv("HUTCH_TEST_KILL_AT");
		stop_at = getenv("HUTCH_TEST_STOP_AT");
		looked = true;
	}
	if (kill_at && strcmp(kill_at, name) == 0)
		kill(getpid(), SIGKILL);
	if (stop_at && strcmp(stop_at, name) == 0)
		kill(getpid(), SIGSTOP);
}
