#include "test_util.hpp"

#include <regex>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

namespace novelty::test {

TempDir::TempDir() {
    std::random_device rd;
    auto base = std::filesystem::temp_directory_path();
    for (int attempt = 0; attempt < 100; ++attempt) {
        auto candidate = base / ("novelty-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
        if (std::filesystem::create_directory(candidate)) {
            path_ = candidate;
            return;
        }
    }
    throw std::runtime_error("cannot create a temporary directory");
}

TempDir::~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

std::string TempDir::file(const std::string& name) const { return (path_ / name).string(); }

void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + path);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string fixture(const std::string& relative) {
    return std::string(NOVELTY_FIXTURES_DIR) + "/" + relative;
}

std::string shell_quote(const std::string& arg) {
    std::string quoted = "'";
    for (char c : arg) {
        if (c == '\'') quoted += "'\\''";
        else quoted += c;
    }
    return quoted + "'";
}

std::string without_densities_path(const std::string& text) {
    static const std::regex field(R"(,\s*"densities_path":\s*"[^"]*")");
    return std::regex_replace(text, field, "");
}

CliResult run_cli(const std::string& args) {
    TempDir tmp;
    std::string out_path = tmp.file("stdout"), err_path = tmp.file("stderr");
    std::string cmd = shell_quote(NOVELTY_CLI_PATH) + " " + args + " >" + shell_quote(out_path) +
                      " 2>" + shell_quote(err_path) + " </dev/null";
    int status = std::system(cmd.c_str());
    CliResult result{};
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result.out = read_file(out_path);
    result.err = read_file(err_path);
    return result;
}

}  // namespace novelty::test
