# Readers of `/usr/bin/time -v` reports, sourced by the bench scripts that time a whole process.
#   wall FILE     the elapsed wall-clock time in seconds
#   cpu FILE      user + system seconds
#   peak_mb FILE  the maximum resident set size in MiB
wall() { awk -F': ' '/Elapsed \(wall clock\)/{n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$1"; }
cpu() { awk -F': ' '/User time \(seconds\)|System time \(seconds\)/{s += $2} END{print s}' "$1"; }
peak_mb() { awk -F': ' '/Maximum resident set size/{print int($2 / 1024)}' "$1"; }
