#!/usr/bin/env bats
# The docs, the man page and --help agree with each other and with the tree: every docs/ path
# any of them names exists, and every flag the man page names is one some --help lists, and
# the reverse. (Behaviour the docs describe is checked by the tests of each feature.)

ROOTLESS_OK=1 # hutch needs no privilege for --help
load ../helpers
bats_require_minimum_version 1.5.0

REPO=$(cd "$INTEGRATION_ROOT/../.." && pwd)

setup() {
	setup_tmp
}

# Every help text hutch prints: the global one, each command's and each subcommand's.
all_help() {
	local v s
	hutch --help
	for v in spec create start run state kill delete list features exec ps pause resume \
		update events sandbox pool image bundle checkpoint restore doctor; do
		hutch "$v" --help
	done
	for s in exec ls stop rm; do
		hutch sandbox "$s" --help
	done
	hutch pool serve --help
	for s in import ls inspect tag rm prune status build; do
		hutch image "$s" --help
	done
}

# The man page as plain text: font escapes dropped, \- as -.
man_text() {
	sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/\\e/\\/g' "$REPO/docs/hutch.8"
}

# Long flags in stdin, one per line, sorted.
long_flags() {
	grep -o -- '--[a-z][a-z0-9-]*[a-z0-9]' | sort -u
}

@test "docs: every docs/ path that --help, the man page, the README or a doc names exists" {
	all_help >"$TEST_DIR/help" 2>&1
	local missing=() p
	while read -r p; do
		[ -e "$REPO/$p" ] || missing+=("$p")
	done < <(cat "$TEST_DIR/help" "$REPO/docs/hutch.8" "$REPO/README.md" "$REPO"/docs/*.md |
		grep -oE '(^|[^A-Za-z0-9./_-])docs/[A-Za-z0-9._/-]*[A-Za-z0-9_]' | sed 's/^[^d]//' | sort -u)
	[ ${#missing[@]} -eq 0 ] || {
		printf 'named but missing: %s\n' "${missing[@]}"
		false
	}
}

@test "docs: every flag the man page names is in a --help, and every --help flag is in the man page" {
	all_help 2>&1 | long_flags >"$TEST_DIR/help"
	# --worksapce: the man page's example of a misspelled flag, which hutch corrects.
	man_text | long_flags | grep -vx -- --worksapce >"$TEST_DIR/man"
	local only_man only_help
	only_man=$(comm -23 "$TEST_DIR/man" "$TEST_DIR/help")
	only_help=$(comm -13 "$TEST_DIR/man" "$TEST_DIR/help")
	[ -z "$only_man$only_help" ] || {
		echo "in the man page, in no --help: ${only_man//$'\n'/ }"
		echo "in a --help, not in the man page: ${only_help//$'\n'/ }"
		false
	}
}

# A command's synopsis line (.B COMMAND [...]) names only flags that command takes.
@test "docs: each command's synopsis in the man page names only its own flags" {
	local line verb flags f bad=()
	while read -r line; do
		verb=${line#.B }
		verb=${verb%% *}
		case $verb in spec | create | start | run | state | kill | delete | list | features | \
			exec | ps | update | events | sandbox | bundle | doctor) ;;
		*) continue ;;
		esac
		flags=$(hutch "$verb" --help 2>&1 | long_flags)
		[ "$verb" = run ] && flags+=$'\n'$(hutch create --help 2>&1 | long_flags)
		for f in $(long_flags <<<"$line"); do
			grep -qx -- "$f" <<<"$flags" || bad+=("$verb $f")
		done
	done < <(man_text | grep '^\.B [a-z]')
	[ ${#bad[@]} -eq 0 ] || {
		printf 'not in the command'"'"'s --help: %s\n' "${bad[@]}"
		false
	}
}

# README's first command, after the build: a busybox image made with hutch's own commands and
# a sandbox on it (its own store and root here; the README uses the defaults).
@test "docs: the README's first command makes its image and runs its sandbox" {
	requires_host_root
	local cmd
	cmd=$(awk '/^```sh$/ { getline; print; exit }' "$REPO/README.md")
	[[ $cmd == *"ninja -C build && "* ]]
	cmd=${cmd#*ninja -C build && }
	cmd=${cmd//build\/runtime\/hutch/hutch}
	[[ $cmd == *"hutch image import"* && $cmd == *"hutch sandbox --image"* ]]
	run -0 env HUTCH_STORE="$TEST_DIR/store" TMPDIR="$TEST_DIR" PATH="$(dirname "$HUTCH"):$PATH" \
		HUTCH_ROOT="$HUTCH_ROOT" timeout 120 bash -c "$cmd"
	[[ $output == *"busybox:latest sha256:"*"(directory: "* ]]
	[[ $output == *"hello from sandbox as 1000"* ]]
	[[ $output == *"NoNewPrivs:	1"* ]]
	[[ $output == *"Seccomp:	2"* ]]
	[[ $output == *"CapEff:	0000000000000000"* ]]
}
