// novelty mcp: the MCP server (docs/integrations.md). The server is the Python package's
// novelty.mcp_server, built on the MCP Python SDK; this command finds the Python that has the
// package and replaces itself with it (exec), so the agent's stdin and stdout are the server's.
#include "cli_common.hpp"

#include "novelty/util/error.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace novelty::cli {

namespace {

namespace fs = std::filesystem;

struct McpArgs {
    std::string corpus, device = "auto", http, llm = "offline", llm_model, llm_key, judge, python;
};

/// Runs novelty.mcp_server.main with the arguments after it, or says which Python lacks what.
const char* const bootstrap =
    "import sys\n"
    "try:\n"
    "    import novelty.mcp_server as server\n"
    "except ImportError as e:\n"
    "    sys.exit('novelty: error: ' + sys.executable + ' cannot run the MCP server: ' + str(e))\n"
    "sys.exit(server.main(sys.argv[1:]))\n";

std::string read_line(const fs::path& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

bool is_executable(const fs::path& path) {
    std::error_code ec;
    return fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

/// The Python to run and, for the build tree, the folder to put on PYTHONPATH:
/// --python, else $NOVELTY_PYTHON; else, when this binary sits in a build tree (BUILD/novelty
/// beside BUILD/python/novelty), the Python that build was configured with; else the python3
/// beside this binary (the bin folder of the virtual environment a wheel was installed into);
/// else python3 on the PATH.
std::string choose_python(const std::string& given, std::string& python_path) {
    if (!given.empty()) return given;
    if (const char* env = std::getenv("NOVELTY_PYTHON"); env && *env) return env;
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return "python3";
    const fs::path dir = self.parent_path();
    const fs::path recorded = dir / "python" / "python-executable";
    if (fs::exists(dir / "python" / "novelty" / "__init__.py", ec) && fs::exists(recorded, ec)) {
        python_path = (dir / "python").string();
        const std::string python = read_line(recorded);
        if (!python.empty()) return python;
    }
    if (is_executable(dir / "python3")) return (dir / "python3").string();
    return "python3";
}

std::vector<std::string> server_arguments(const McpArgs& a) {
    std::vector<std::string> args{"--corpus", a.corpus, "--device", a.device, "--llm", a.llm};
    const std::pair<const char*, const std::string*> optional[] = {
        {"--http", &a.http}, {"--llm-model", &a.llm_model}, {"--llm-key", &a.llm_key}, {"--judge", &a.judge}};
    for (const auto& [flag, value] : optional)
        if (!value->empty()) {
            args.push_back(flag);
            args.push_back(*value);
        }
    return args;
}

int run_mcp(const McpArgs& a) {
    std::error_code ec;
    if (!fs::is_directory(a.corpus, ec)) throw CorpusError(a.corpus + ": no such corpus directory");
    std::string python_path;
    const std::string python = choose_python(a.python, python_path);
    if (!python_path.empty()) {
        const char* old = std::getenv("PYTHONPATH");
        const std::string joined = old && *old ? python_path + ":" + old : python_path;
        ::setenv("PYTHONPATH", joined.c_str(), 1);
    }
    std::vector<std::string> args{python, "-c", bootstrap};
    for (auto& arg : server_arguments(a)) args.push_back(std::move(arg));
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    ::execvp(python.c_str(), argv.data());
    throw Error("novelty mcp: cannot run " + python + " (" + std::strerror(errno) +
                "); give the Python that has the novelty package with --python or NOVELTY_PYTHON");
}

}  // namespace

void add_mcp_command(CLI::App& app, int& exit_code) {
    auto a = std::make_shared<McpArgs>();
    CLI::App* mcp = app.add_subcommand(
        "mcp", "Serve the corpus to agents over the Model Context Protocol (stdio; docs/integrations.md): "
               "search_papers, get_paper, score_ideas, check_claims, find_duplicates");
    mcp->add_option("--corpus", a->corpus, "Corpus directory (with vectors)")->required();
    mcp->add_option("--device", a->device, "Search backend: auto (default), cpu, cuda or cuda-emulated (testing)")
        ->check(CLI::IsMember({"auto", "cpu", "cuda", "cuda-emulated"}));
    mcp->add_option("--http", a->http,
                    "HOST:PORT: serve MCP's streamable HTTP transport at http://HOST:PORT/mcp instead of stdio");
    mcp->add_option("--llm", a->llm,
                    "check_claims: offline (default; the labelled approximation), an OpenAI-compatible base URL, or env");
    mcp->add_option("--llm-model", a->llm_model, "check_claims: the LLM's model");
    mcp->add_option("--llm-key", a->llm_key, "check_claims: the LLM's API key");
    mcp->add_option("--judge", a->judge, "check_claims: the judge (rule, llm or a URL), as for novelty claims");
    mcp->add_option("--python", a->python,
                    "The Python with the novelty package and the MCP SDK (default: $NOVELTY_PYTHON, the build "
                    "tree's, the python3 beside this program, python3 on the PATH)");
    mcp->callback([a, &exit_code] { exit_code = run_guarded([&] { return run_mcp(*a); }); });
}

}  // namespace novelty::cli
