#!/bin/bash
# The foreground probe (src/tty/probe/foreground-probe.ts): one long-lived bash in the sandbox
# that answers "what is the foreground of these panes doing?" from /proc, with builtins only.
# A line of pane PIDs in; per pane a `T` line and one `P` line per process of its foreground
# group, then `E`. Arguments: the syscall numbers of this architecture, each list one argument
# (select, pselect6, poll, ppoll, read). The host reads this file from its own install and
# passes it to `bash -c`: nothing in the container is run.
# The stat, syscall and schedstat lines are split into words on purpose, and every value that
# reaches an unquoted expansion or a path is checked to be digits (or hex) first.
# shellcheck disable=SC1007,SC2086,SC2178,SC2206
shopt -s nullglob
sel=" $1 " psel=" $2 " pl=" $3 " ppl=" $4 " rd=" $5 "
mem() { m=(); [[ $1 =~ ^0x[0-9a-f]{1,16}$ && $1 != 0x0 ]] || return 0; read -r -a m <<< "$(dd if=/proc/$p/mem bs=$2 count=1 iflag=skip_bytes skip=$(($1)) 2>/dev/null | od -An -t$3)"; }
timer() { mem $1 16 u8; [[ ${m[0]:-} =~ ^[0-9]{1,7}$ && ${m[1]:-} =~ ^[0-9]{1,10}$ ]] && t=$(( m[0] * 1000 + (m[1] + $2 - 1) / $2 )); }
# The terminal: the pane's own device, or /dev/tty (a group in the pane's foreground has the pane as its terminal).
ttyfd() { if [[ /proc/$p/fd/$1 -ef /proc/$pane/fd/0 || /proc/$p/fd/$1 -ef /dev/tty ]]; then w=1; else w=0; fi; }
pollfd() { mem $1 4 d4; [[ ${m[0]:-} =~ ^[0-9]{1,9}$ ]] && ttyfd ${m[0]}; }
emit() {
  local d=/proc/$1 l= sc= wc= ss= rs= key=
  read -r l 2>/dev/null < $d/stat || [[ -n $l ]] || return 0
  g=(${l##*) })
  [[ ${g[2]} == "$tpgid" ]] || return 0
  member=1; p=$1
  read -r ss 2>/dev/null < $d/schedstat
  read -r sc 2>/dev/null < $d/syscall
  read -r wc 2>/dev/null < $d/wchan
  c=${l#*(}; c=${c%)*}; c=${c//[^[:alnum:]._+-]/?}
  r=(${ss:-0 0 0})
  printf 'P %s %s %s %s %s %s\n' "$p" "${g[0]}" "${r[2]:-0}" "${wc:-0}" "$c" "${sc:-none}"
  [[ ${g[0]} == S ]] || return 0
  a=(${sc:-none}); w=-; t=-; key="$p ${r[2]:-0} $sc"
  # A process that has not run since the last question has the same fd and timer in memory (written only when it runs).
  if [[ -n ${seenw[$key]:-} ]]; then w=${seenw[$key]%:*} t=${seenw[$key]#*:}
  # A select's timer is read after the answer (dd and od take milliseconds), for the next question.
  elif [[ $sel$psel == *" ${a[0]} "* && ${a[1]:-} == 0x1 ]]; then pend+=("$key"); return 0
  elif [[ $pl == *" ${a[0]} "* && ${a[2]:-} == 0x1 ]]; then pollfd "${a[1]:-}"
  elif [[ $ppl == *" ${a[0]} "* && ${a[2]:-} == 0x1 ]]; then pollfd "${a[1]:-}"; timer "${a[3]:-}" 1000000
  elif [[ $rd == *" ${a[0]} "* && ${a[1]:-} =~ ^0x[0-9a-f]{1,8}$ && ${a[1]} != 0x0 ]]; then ttyfd $((a[1]))
  else return 0; fi
  # The kernel writes the time left back into the timer when the wait ends: one that ran since is not its own.
  read -r rs 2>/dev/null < $d/schedstat; rs=(${rs:-0 0 0}); [[ ${rs[2]:-0} == "${r[2]:-0}" ]] || t=-
  [[ ${rs[2]:-0} != "${r[2]:-0}" ]] || seenw[$key]=$w:$t
  [[ $w$t == -- ]] || printf 'W %s %s %s\n' "$p" "$w" "$t"
}
# The timers of selects seen in the last answer, while their process has not run since.
later() {
  local key k
  for key in "${pend[@]}"; do
    k=($key); p=${k[0]}; t=-
    if [[ $sel == *" ${k[2]} "* ]]; then timer "${k[7]:-}" 1000; else timer "${k[7]:-}" 1000000; fi
    rs=; read -r rs 2>/dev/null < /proc/$p/schedstat; rs=(${rs:-0 0 0})
    [[ ${rs[2]:-0} != "${k[1]}" ]] || seenw[$key]=-:$t
  done
  pend=()
}
kids() { local c k; for c in /proc/"$1"/task/*/children; do k=(); read -r -a k 2>/dev/null < $c; q+=("${k[@]}"); done; }
walk() {
  local l= x seen=' ' k n=0
  read -r l 2>/dev/null < /proc/$tpgid/stat || [[ -n $l ]] || return 1
  x=(${l##*) })
  [[ ${x[1]} =~ ^[0-9]+$ && -r /proc/${x[1]}/task/${x[1]}/children ]] || return 1
  q=(); kids ${x[1]}
  while (( ${#q[@]} > 0 && n < 512 )); do
    k=${q[0]}; q=("${q[@]:1}"); n=$((n + 1))
    [[ $k =~ ^[0-9]+$ && $seen != *" $k "* ]] || continue
    seen+="$k "; member=
    emit $k
    [[ -z $member ]] || kids $k
  done
}
declare -A seenw
pend=()
while read -r -a panes; do
  (( ${#seenw[@]} < 256 )) || seenw=()
  for pane in "${panes[@]}"; do
    [[ $pane =~ ^[0-9]+$ ]] || continue
    stat=; read -r stat 2>/dev/null < /proc/$pane/stat
    f=(${stat##*) }); tpgid=${f[5]:-}
    printf 'T %s %s\n' "$pane" "${tpgid:--}"
    [[ $tpgid =~ ^[0-9]+$ && $tpgid != 0 ]] || continue
    walk || for d in /proc/[0-9]*; do emit ${d#/proc/}; done
  done
  echo E
  later
done
