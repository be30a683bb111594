# The pane framer (issue 36): tmux copies one pane's bytes unescaped to this program's stdin
# (`pipe-pane -O`); it writes them to stdout, a FIFO shared by every pane, as frames of
#
#   u32 pane | u32 pipe | u64 offset | u32 length | length bytes   (big-endian)
#
# each at most 4096 bytes, one atomic write to a FIFO, so the framers of several panes never
# interleave. Arguments: the pane (tmux's id, %N or N) and the pipe's number.
# The kernel runs it as `perl -e CODE` inside `sh -c '...'` in a one-line tmux command that
# tmux expands with strftime: whole-line comments are dropped and the lines joined, so the code
# holds no quote, no per-cent sign and no hash (src/tty/host/pane-frames.ts reads this file).
# The agent may replace it: the kernel checks every frame (PaneFrameDecoder) and trusts no count.
use strict;
binmode STDIN;
binmode STDOUT;
my $pane = shift;
my $pipe = shift;
$pane =~ s/^\D+//;
my $offset = 0;
while (my $n = sysread(STDIN, my $bytes, 4076)) {
  my $frame = pack(q(NNQ>N), $pane, $pipe, $offset, $n) . $bytes;
  my $written = syswrite(STDOUT, $frame);
  exit 1 unless defined $written;
  $offset += $n;
}
