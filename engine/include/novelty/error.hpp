// Error types thrown by the engine. The CLI and the server translate them into exit codes and
// HTTP statuses at their boundary; library code never aborts.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace novelty {

/// Any failure inside the engine.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Bad input from the user: a file, a record or a value. The message names the file, the line
/// (1-based; 0 when the problem is not tied to a line) and what is wrong, as "FILE:LINE: problem".
class InputError : public Error {
public:
    InputError(std::string file, std::size_t line, const std::string& problem);
    const std::string& file() const noexcept { return file_; }
    std::size_t line() const noexcept { return line_; }
    /// The problem alone, without the "FILE:LINE: " prefix.
    const std::string& problem() const noexcept { return problem_; }

private:
    std::string file_;
    std::size_t line_;
    std::string problem_;
};

/// Invalid arguments to an API call or a command (k < 1, unknown format, ...).
class UsageError : public Error {
public:
    using Error::Error;
};

/// A corpus directory that is missing, incomplete, or inconsistent with its manifest.
class CorpusError : public Error {
public:
    using Error::Error;
};

}  // namespace novelty
