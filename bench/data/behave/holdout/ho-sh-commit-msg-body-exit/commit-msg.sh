#!/usr/bin/env bash
# commit-msg.sh - git hook that enforces the team's commit message format.
#
# Install with:  ln -s ../../tools/hooks/commit-msg.sh .git/hooks/commit-msg
#
#   type(scope): subject            <- type from TYPES, subject <= 72 chars
#                                   <- blank line
#   body, wrapped at 100 chars      <- URLs may run longer
#
# Merge and revert messages made by git, and fixup!/squash! commits, are let through.
# Set COMMIT_MSG_SKIP=1 to bypass the hook for one commit.

set -u

TYPES="feat fix docs style refactor perf test build ci chore"
MAX_SUBJECT=72
MAX_BODY=100

msg_file=${1:?usage: commit-msg MESSAGE_FILE}
errors=0

complain() {
    echo "commit-msg: $*" >&2
    errors=$((errors + 1))
}

check_subject() {
    local subject=$1 type
    if [ ${#subject} -gt "$MAX_SUBJECT" ]; then
        complain "subject is ${#subject} characters, the limit is $MAX_SUBJECT"
    fi
    if ! [[ $subject =~ ^([a-z]+)(\([a-z0-9._/-]+\))?!?:\ [^\ ] ]]; then
        complain "subject must look like 'type(scope): summary'"
        return
    fi
    type=${BASH_REMATCH[1]}
    case " $TYPES " in
        *" $type "*) ;;
        *) complain "unknown type '$type' (one of: $TYPES)" ;;
    esac
}

check_body() {
    local n=0 line
    grep -v '^#' "$msg_file" | while IFS= read -r line; do
        n=$((n + 1))
        if [ "$n" -eq 2 ] && [ -n "$line" ]; then
            complain "line 2 must be blank"
        elif [ "$n" -gt 2 ] && [ ${#line} -gt "$MAX_BODY" ] && ! [[ $line =~ https?:// ]]; then
            complain "line $n is ${#line} characters, the limit is $MAX_BODY"
        fi
    done
}

main() {
    local subject
    if [ "${COMMIT_MSG_SKIP:-0}" = 1 ]; then
        exit 0
    fi
    subject=$(grep -v '^#' "$msg_file" | head -n 1)
    case $subject in
        "Merge "* | "Revert \""* | "fixup! "* | "squash! "*) exit 0 ;;
    esac
    check_subject "$subject"
    check_body
    if [ "$errors" -gt 0 ]; then
        echo "commit-msg: $errors problem(s); your message is kept in $msg_file" >&2
        exit 1
    fi
}

main
