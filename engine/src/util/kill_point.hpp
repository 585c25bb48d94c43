// A test hook for crash-safety tests: named steps at which the process can be made to die.
#pragma once

#include <string>

namespace novelty {

/// Marks a step of a multi-file write (a rename, a write, the gap between two of them).
/// When the environment variable NOVELTY_KILL_AT names this step ("STEP", or "STEP#N" for its
/// N-th time in this process, 1-based), the process kills itself with SIGKILL here, as a power
/// loss or `kill -9` would. When NOVELTY_KILL_TRACE names a file, each step reached is appended
/// to it, one name per line, so a test can list every step of a command. With neither variable
/// set the cost is one flag test.
void kill_point(const std::string& step);

/// The step name for writing or renaming `path`: its file name with any temporary suffix
/// (".tmp-...") removed, after `what` and a colon, e.g. "rename:vectors.npy".
std::string kill_step_for(const char* what, const std::string& path);

}  // namespace novelty
