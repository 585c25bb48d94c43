// Helpers shared by the test executables.
#pragma once

#include <filesystem>
#include <string>

namespace novelty::test {

/// A fresh directory under the system temp dir, removed with everything in it on destruction.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    /// path() / name, as a string.
    std::string file(const std::string& name) const;

private:
    std::filesystem::path path_;
};

/// Writes `bytes` to `path` exactly (binary), replacing any file there.
void write_file(const std::string& path, const std::string& bytes);
/// Reads a whole file as bytes; throws std::runtime_error when it cannot.
std::string read_file(const std::string& path);
/// Path of a committed fixture: tests/fixtures/<relative>.
std::string fixture(const std::string& relative);

/// Runs the built `novelty` CLI with `args` (already shell-quoted), capturing stdout and stderr.
struct CliResult {
    int exit_code;
    std::string out;
    std::string err;
};
CliResult run_cli(const std::string& args);

/// Quotes one argument for /bin/sh.
std::string shell_quote(const std::string& arg);

/// Score output (JSON Lines or one JSON document) without its "densities_path" provenance, which
/// says how this run found the densities (from the store, a self-join, searched) and so differs
/// between runs whose scores are the same bytes.
std::string without_densities_path(const std::string& text);

}  // namespace novelty::test
