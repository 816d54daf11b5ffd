// SPDX-License-Identifier: Apache-2.0
/*
 * The verb table: every verb's definition (each in the file that runs it), in `hutch
 * --help`'s order, and the help verb. Only main.c and the help verb look verbs up, so no
 * verb's file depends on this one (the parser and help formatting are in rt-cli.c).
 */
#include "rt.h"

#include <stdio.h>
#include <string.h>

static RT_VERB_RUN(verb_help);
static const struct rt_verb help_verb = {
	.name = "help",
	.summary = "show help for a verb",
	.usage = "[VERB]",
	.run = verb_help,
};

/* `hutch --help`'s order. */
static const struct rt_verb *const verbs[] = {
	&rt_spec_verb,	  &rt_create_verb, &rt_start_verb,  &rt_run_verb,      &rt_state_verb,
	&rt_kill_verb,	  &rt_delete_verb, &rt_list_verb,   &rt_features_verb, &rt_exec_verb,
	&rt_ps_verb,	  &rt_pause_verb,  &rt_resume_verb, &rt_update_verb,   &rt_events_verb,
	&rt_sandbox_verb, &rt_pool_verb,   &rt_image_verb,  &rt_bundle_verb,   &rt_checkpoint_verb,
	&rt_restore_verb, &rt_doctor_verb,
};

const struct rt_verb *rt_verb_find(const char *name)
{
	if (!strcmp(name, "help"))
		return &help_verb;
	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
		if (!strcmp(verbs[i]->name, name))
			return verbs[i];
	return NULL;
}

void rt_main_help(int fd)
{
	dprintf(fd, "usage: hutch [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS]\n\n"
		    "hutch runs OCI bundles in Linux namespaces, with runc's command line.\n\n"
		    "commands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
		dprintf(fd, "  %-12s %s\n", verbs[i]->name, verbs[i]->summary);
	dprintf(fd, "  %-12s %s\n", "help", "show help for a command");
	dprintf(fd, "\nglobal options:\n"
		    "  --root DIR            state directory: containers, and sandboxes' locks,\n"
		    "                        names and state in DIR/.sandbox (default\n"
		    "                        $HUTCH_ROOT, else " RT_DEFAULT_ROOT ")\n"
		    "  --log FILE            also log to FILE\n"
		    "  --log-format FORMAT   text or json (for --log, and --debug's phases)\n"
		    "  --debug               log debug messages, and each phase of the command\n"
		    "                        with its microseconds (hutch(8), DEBUG)\n"
		    "  --systemd-cgroup      cgroups as systemd scopes (cgroupsPath "
		    "slice:prefix:name)\n"
		    "  --cgroup-manager M    cgroupfs (the default), or systemd (not supported)\n"
		    "  --version             print the version\n"
		    "  --help                show this help\n");
}

static RT_VERB_RUN(verb_help)
{
	(void)g, (void)flags;
	if (argc - first == 0) {
		rt_main_help(1);
		return 0;
	}
	const struct rt_verb *v = rt_verb_find(argv[first]);
	if (!v)
		return hutch_fail(err, EINVAL, "help: unknown command %s", argv[first]);
	rt_verb_help(v, 1);
	return 0;
}
