// Error types thrown by the engine. The CLI and the server translate them into exit codes and
// HTTP statuses at their boundary; library code never aborts.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

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

/// Invalid arguments to an API call or a command (k < 1, unknown format, ...). When the fault
/// lies in one parameter, `parameter` names it as the library knows it (device_memory, resume,
/// ids, ...); the edges name it their own way: the CLI as its flag, the server as its JSON key.
class UsageError : public Error {
public:
    explicit UsageError(const std::string& message, std::string parameter = "")
        : Error(message), parameter_(std::move(parameter)) {}
    /// The parameter at fault; "" when none is.
    const std::string& parameter() const noexcept { return parameter_; }

private:
    std::string parameter_;
};

/// A corpus directory that is missing, incomplete, or inconsistent with its manifest.
class CorpusError : public Error {
public:
    using Error::Error;
};

/// The kinds of failure, as the edges report them.
enum class ErrorKind {
    usage,    ///< UsageError: bad arguments or flags
    input,    ///< InputError: a bad input file or record (file and line in the message)
    corpus,   ///< CorpusError: a missing, incomplete or inconsistent corpus
    failure,  ///< anything else: I/O, a device, an internal error
};

/// How each kind is reported: the CLI's exit code and the HTTP status (docs/cli.md, docs/api.md).
struct ErrorCodes {
    ErrorKind kind;
    int exit_code;
    int http_status;
    const char* name;  ///< "usage", "input", "corpus", "failure"
};

/// The one table from kinds to exit codes and HTTP statuses.
ErrorCodes error_codes(ErrorKind kind);
/// The kind of an exception (a non-novelty exception is a failure).
ErrorKind error_kind(const std::exception& error);

}  // namespace novelty
