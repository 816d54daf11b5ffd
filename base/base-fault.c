// SPDX-License-Identifier: Apache-2.0
/*
 * Fault injection for the tests (tests/security/faults.bats): with HUTCH_TEST_KILL_AT=NAME in
 * its environment, hutch SIGKILLs itself when it reaches the point called NAME, so that a test
 * can check what every phase of create, start, exec, delete and sandbox leaves behind when
 * hutch dies there. Without the variable a point costs one comparison.
 */
#include "hutch-base.h"

#include <signal.h>
#include <string.h>

static const char *kill_at;
static bool looked;

void hutch_fault_point(const char *name)
{
	if (!looked) {
		kill_at = getenv("HUTCH_TEST_KILL_AT");
		looked = true;
	}
	if (kill_at && strcmp(kill_at, name) == 0)
		kill(getpid(), SIGKILL);
}
