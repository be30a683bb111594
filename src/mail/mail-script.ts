import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../util/atomic-write.js';

/**
 * `ak-mail`: the post office from the agent's terminals. A POSIX shell script the host writes
 * into the instance's shell folder (`bin/ak-mail`, shown read-only in the container at
 * `<data>/tmp/kernel/bin/`, on the integrated shell's PATH), so it exists in every instance
 * whatever its image, and the agent cannot change it. It only writes files into the agent's
 * own `outbox/` and reads the view (mail-view.ts): everything that matters is decided on the host.
 */

export const MAIL_COMMAND = 'ak-mail';

function quoted(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Pure: the script for one instance. */
export function mailScript(options: { instance: string; view: string; outbox: string }): string {
  return `#!/bin/sh
# ak-mail: the agent-kernel post office, from a terminal of instance ${options.instance}.
# Written by the host and read-only here: 'ak-mail help' says what it does.
me=${quoted(options.instance)}
view=${quoted(options.view)}
outbox=${quoted(options.outbox)}

help() {
  printf '%s\\n' \\
    "ak-mail: messages between the agents on this host, and to the operator." \\
    "" \\
    "  ak-mail list                 the messages you received (oldest first) and whether you have had them" \\
    "  ak-mail read <id>            one message, whole (received or sent)" \\
    "  ak-mail send <to> [text...]  a message to another instance (or 'operator'); no text: read stdin" \\
    "  ak-mail ask <to> [text...]   the same, asking for an answer: it wakes you when it comes" \\
    "  ak-mail reply <id> [text...] answer a message you received (it goes to its sender, marked as the answer)" \\
    "  ak-mail sent                 what you sent, and what became of it" \\
    "  ak-mail outbox               what still waits in your outbox" \\
    "" \\
    "The kernel stamps who sent a message: the recipient sees it came from $me, whatever the text says." \\
    "Which instances you may write to, how long a message may be and how many you may send a minute" \\
    "are the operator's settings; a refusal says which."
}

fail() { printf 'ak-mail: %s\\n' "$1" >&2; exit "\${2:-2}"; }

show() {
  while IFS= read -r line || [ -n "$line" ]; do printf '%s\\n' "$line"; done < "$1"
}

summaries() {
  found=
  for f in "$1"/*.txt; do
    [ -f "$f" ] || continue
    IFS= read -r line < "$f" || [ -n "$line" ] || continue
    printf '%s\\n' "$line"
    found=1
  done
  [ -n "$found" ] || printf '%s\\n' "$2"
}

check_name() {
  case "$1" in ''|*[!A-Za-z0-9_.-]*) fail "'$1' is not an instance name (letters, digits, . _ -)";; esac
}

check_id() {
  case "$1" in m-[0-9]*) ;; *) fail "'$1' is not a message id (m-...; ak-mail list shows them)";; esac
  case "$1" in *[!a-z0-9-]*) fail "'$1' is not a message id (m-...; ak-mail list shows them)";; esac
}

# The text: the arguments, else stdin.
text_of() {
  if [ "$#" -gt 0 ]; then printf '%s' "$*"
  elif [ -t 0 ]; then fail "no text: give it after the recipient, or pipe it in"
  else cat
  fi
}

post() {
  headers=$1
  text=$2
  [ -n "$text" ] || fail "the message is empty"
  mkdir -p "$outbox" || fail "cannot create $outbox" 1
  stamp=$(date -u +%Y%m%dT%H%M%S.%N 2>/dev/null)
  case "$stamp" in *N*|'') stamp=$(date -u +%Y%m%dT%H%M%S 2>/dev/null || printf 0) ;; esac
  n=0
  while [ -e "$outbox/$stamp-$$-$n.msg" ] || [ -e "$outbox/.$stamp-$$-$n.tmp" ]; do n=$((n + 1)); done
  name="$stamp-$$-$n.msg"
  (umask 022; printf '%s\\n\\n%s\\n' "$headers" "$text" > "$outbox/.$name.tmp") || fail "cannot write $outbox/.$name.tmp" 1
  mv -f "$outbox/.$name.tmp" "$outbox/$name" || fail "cannot move it into $outbox" 1
  receipt="$view/receipts/$name.txt"
  i=0
  while [ "$i" -lt 40 ]; do
    if [ -f "$receipt" ]; then
      show "$receipt"
      IFS= read -r first < "$receipt"
      case "$first" in sent*) exit 0 ;; *) exit 1 ;; esac
    fi
    sleep 0.25 2>/dev/null || sleep 1
    i=$((i + 1))
  done
  printf '%s\\n' "queued: $outbox/$name waits in your outbox. The kernel takes mail while kernel-runner watch runs for $me, a few messages a minute; 'ak-mail sent' shows it once it has gone."
  exit 0
}

command=\${1:-list}
[ "$#" -gt 0 ] && shift
case "$command" in
  list) summaries "$view/inbox" "no messages yet" ;;
  sent) summaries "$view/sent" "nothing sent yet"; summaries "$view/receipts" "" | while IFS= read -r line; do case "$line" in refused*) printf '%s\\n' "$line" ;; esac; done ;;
  read)
    [ "$#" -eq 1 ] || fail "usage: ak-mail read <id>"
    check_id "$1"
    if [ -f "$view/inbox/$1.txt" ]; then show "$view/inbox/$1.txt"
    elif [ -f "$view/sent/$1.txt" ]; then show "$view/sent/$1.txt"
    else fail "no message $1 (ak-mail list, ak-mail sent)" 1
    fi ;;
  send|ask)
    [ "$#" -ge 1 ] || fail "usage: ak-mail $command <to> [text...]"
    to=$1; shift
    check_name "$to"
    text=$(text_of "$@") || exit $?
    if [ "$command" = ask ]; then post "to: $to
ask: yes" "$text"; else post "to: $to" "$text"; fi ;;
  reply)
    [ "$#" -ge 1 ] || fail "usage: ak-mail reply <id> [text...]"
    id=$1; shift
    check_id "$id"
    text=$(text_of "$@") || exit $?
    post "reply-to: $id" "$text" ;;
  outbox)
    found=
    for f in "$outbox"/*; do [ -e "$f" ] || continue; printf '%s\\n' "\${f##*/}"; found=1; done
    [ -n "$found" ] || printf '%s\\n' "your outbox is empty" ;;
  help|-h|--help) help ;;
  *) help >&2; exit 2 ;;
esac
`;
}

/** Write the script into the instance's shell folder (read-only in the container). */
export async function installMailScript(binDir: string, options: { instance: string; view: string; outbox: string }): Promise<string> {
  await mkdir(binDir, { recursive: true, mode: 0o755 });
  const file = path.join(binDir, MAIL_COMMAND);
  await writeFileAtomic(file, mailScript(options), 0o755, { durable: false });
  return file;
}
