// Shared pieces of the `novelty` command line: exit codes and the exception boundary.
#pragma once

#include "util/message_text.hpp"

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace novelty::cli {

/// Exit codes (docs/cli.md); they are error_codes(kind).exit_code of novelty/util/error.hpp, named.
enum ExitCode : int {
    exit_ok = 0,
    exit_failure = 1,  ///< I/O failure or internal error
    exit_usage = 2,    ///< bad flags or arguments
    exit_input = 3,    ///< bad input file or record (the message names file and line)
    exit_corpus = 4,   ///< corpus directory missing, incomplete or inconsistent
};

/// Runs a command body, turning engine exceptions into a message on stderr and an exit code
/// (error_codes in novelty/util/error.hpp); a UsageError's parameter is named as its flag.
int run_guarded(const std::function<int()>& body);

/// The flag that sets a library parameter: device_memory -> --device-memory.
std::string flag_of(const std::string& parameter);

/// A CLI11 check that runs `parse` on a flag's value; a UsageError it throws becomes the flag's
/// usage error (exit code 2, naming the flag).
CLI::Validator checked_by(std::function<void(const std::string&)> parse);
/// A CLI11 check refusing an empty value: CLI11 reads '' as 0 for a number, and an empty file
/// name or list would silently mean none.
CLI::Validator non_empty_value();
/// Adds to every numeric option of `app` and its subcommands (all registered by then) a check
/// that refuses what CLI11 would read as a number the user did not write: '' (read as 0), a
/// leading zero ('010' read as octal 8), hexadecimal, and a negative count for an unsigned one.
/// The refusal is a usage error naming the flag (tools/numeric_flags.cpp).
void refuse_unclear_numbers(CLI::App& app);

/// Registers each command group; each returns nothing and sets callbacks that store the exit
/// code in `exit_code`.
/// Returns the `corpus` command, for other groups that add corpus subcommands.
CLI::App& add_corpus_commands(CLI::App& app, int& exit_code);
void add_info_command(CLI::App& app, int& exit_code);
void add_search_commands(CLI::App& app, int& exit_code);
/// `novelty eval` (a group: `eval auroc`, ...).
void add_eval_commands(CLI::App& app, int& exit_code);
/// `novelty eval retrieval`, added to the `eval` group (tools/eval/cmd_eval_retrieval.cpp).
void add_eval_retrieval_command(CLI::App& eval, int& exit_code);
void add_score_command(CLI::App& app, int& exit_code);
/// `novelty retrieve`: date-cutoff retrieval (tools/retrieval/cmd_retrieve.cpp).
void add_retrieve_command(CLI::App& app, int& exit_code);
/// `novelty claims` (ClaimNov).
void add_claims_command(CLI::App& app, int& exit_code);
/// `eval claimnov`, under the `eval` group.
void add_eval_claimnov_command(CLI::App& eval, int& exit_code);
/// `eval sweep`, under the `eval` group (tools/eval/cmd_eval_sweep.cpp).
void add_eval_sweep_command(CLI::App& eval, int& exit_code);
/// `novelty embed`, and `embed` under the `corpus` command.
void add_embed_commands(CLI::App& app, CLI::App& corpus, int& exit_code);
/// `novelty dedup`: near-duplicate clusters (tools/search/cmd_dedup.cpp).
void add_dedup_command(CLI::App& app, int& exit_code);
/// `novelty triage`: dedup, RND, ClaimNov on the uncertain ones (tools/search/cmd_triage.cpp).
void add_triage_command(CLI::App& app, int& exit_code);
/// `novelty serve`: the HTTP API.
void add_serve_command(CLI::App& app, int& exit_code);

/// Throws UsageError when the output file `out` (given with `flag`) is one of `inputs`, also
/// when spelled differently or reached through a link: writing it would destroy the input.
/// Empty paths are ignored.
void refuse_output_over_inputs(const std::string& flag, const std::string& out, const std::vector<std::string>& inputs);

/// True when `dir` exists or can be made and a file can be written in it (probed, then removed).
bool writable_dir(const std::string& dir);

/// Formats 87692 as "87,692" (one implementation for the engine's messages and the CLI's).
using novelty::thousands;
/// "1 record", "2,000 records", "3 queries".
std::string count_of(unsigned long long n, const std::string& noun);

}  // namespace novelty::cli
