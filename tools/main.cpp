// novelty: the command-line entry point. Subcommands live in cmd_*.cpp.
#include "cli_common.hpp"

#include "novelty/shard/shard.hpp"
#include "novelty/util/error.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <exception>

namespace novelty::cli {

/// `novelty mcp`: the MCP server, run by the Python package (tools/serve/cmd_mcp.cpp).
void add_mcp_command(CLI::App& app, int& exit_code);

std::string flag_of(const std::string& parameter) {
    std::string flag = "--" + parameter;
    std::replace(flag.begin(), flag.end(), '_', '-');
    return flag;
}

CLI::Validator checked_by(std::function<void(const std::string&)> parse) {
    return CLI::Validator(
        [parse = std::move(parse)](std::string& value) {
            try {
                parse(value);
            } catch (const UsageError& e) {
                return std::string(e.what());
            }
            return std::string();
        },
        "");
}

CLI::Validator non_empty_value() {
    return checked_by([](const std::string& value) {
        if (value.empty()) throw UsageError("an empty value is none: give one, or leave the flag out");
    });
}

int run_guarded(const std::function<int()>& body) {
    try {
        return body();
    } catch (const std::exception& e) {
        // The exit code comes from the one table (novelty/util/error.hpp); a parameter at fault is
        // named as the flag that sets it.
        const auto* usage = dynamic_cast<const UsageError*>(&e);
        const std::string flag = usage && !usage->parameter().empty() ? " (" + flag_of(usage->parameter()) + ")" : "";
        std::fprintf(stderr, "novelty: error: %s%s\n", e.what(), flag.c_str());
        return error_codes(error_kind(e)).exit_code;
    }
}

void refuse_output_over_inputs(const std::string& flag, const std::string& out, const std::vector<std::string>& inputs) {
    namespace fs = std::filesystem;
    if (out.empty()) return;
    std::error_code ec;
    const fs::path out_path = fs::weakly_canonical(fs::absolute(out), ec);
    for (const auto& in : inputs) {
        if (in.empty()) continue;
        std::error_code e1, e2;
        const bool same = fs::equivalent(out, in, e1) ||
                          (!ec && fs::weakly_canonical(fs::absolute(in), e2) == out_path && !e2);
        if (same)
            throw UsageError(flag + " " + out + " is the input file " + in +
                             "; writing it would destroy the input: choose another " + flag);
    }
}

bool writable_dir(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return false;
    const std::string probe = dir + "/.write-probe";
    std::ofstream f(probe);
    const bool ok = static_cast<bool>(f);
    f.close();
    fs::remove(probe, ec);
    return ok;
}

std::string count_of(unsigned long long n, const std::string& noun) {
    if (n == 1) return "1 " + noun;
    // "query" -> "queries"; "day" keeps its y.
    const bool consonant_y = noun.size() >= 2 && noun.back() == 'y' &&
                             std::string("aeiou").find(noun[noun.size() - 2]) == std::string::npos;
    // "search" -> "searches", "prefix" -> "prefixes".
    const bool sibilant = noun.size() >= 2 && (noun.back() == 's' || noun.back() == 'x' || noun.back() == 'z' ||
                                               noun.compare(noun.size() - 2, 2, "ch") == 0 ||
                                               noun.compare(noun.size() - 2, 2, "sh") == 0);
    return thousands(n) + " " +
           (consonant_y ? noun.substr(0, noun.size() - 1) + "ies" : sibilant ? noun + "es" : noun + "s");
}

}  // namespace novelty::cli

namespace {

int run_cli(int argc, char** argv) {
    using namespace novelty::cli;
    CLI::App app{"novelty: scores how new research ideas are against a corpus of papers, with evidence.\n"
                 "Run 'novelty <command> --help' for each command's flags; docs/cli.md has the full reference."};
    app.name("novelty");
    app.set_version_flag("--version", std::string("novelty ") + NOVELTY_VERSION);
    app.require_subcommand(1);
    int exit_code = exit_ok;
    CLI::App& corpus = add_corpus_commands(app, exit_code);
    add_embed_commands(app, corpus, exit_code);
    add_search_commands(app, exit_code);
    add_eval_commands(app, exit_code);
    add_score_command(app, exit_code);
    add_retrieve_command(app, exit_code);
    add_claims_command(app, exit_code);
    add_dedup_command(app, exit_code);
    add_triage_command(app, exit_code);
    add_info_command(app, exit_code);
    add_serve_command(app, exit_code);
    add_mcp_command(app, exit_code);
    refuse_unclear_numbers(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return exit_usage;
    }
    return exit_code;
}

}  // namespace

// Under an MPI launcher rank 0 runs the command and the other ranks serve its corpus shards
// (novelty/shard/shard.hpp) until it ends, then exit with its code.
int main(int argc, char** argv) {
    using namespace novelty;
    int rank = 0;
    const int init_code = cli::run_guarded([&] {
        rank = shard_init(&argc, &argv).rank;
        return cli::exit_ok;
    });
    if (init_code != cli::exit_ok) return init_code;
    if (rank != 0) return shard_serve();
    return shard_finish(run_cli(argc, argv));
}
