// docs/cli.md documents every command and every flag: each command that `novelty --help` lists
// (and each of its subcommands) has a "## novelty COMMAND" section, and that section names every
// flag of the command's --help (its long form, or its short one such as -q).
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

using novelty::test::run_cli;

namespace {

std::string help_of(const std::string& command) {
    const auto result = run_cli(command + (command.empty() ? "" : " ") + "--help");
    EXPECT_EQ(result.exit_code, 0) << command << ": " << result.err;
    return result.out;
}

/// The names under "Subcommands:" of a --help text, in order.
std::vector<std::string> subcommands(const std::string& help) {
    std::vector<std::string> names;
    std::istringstream lines(help);
    bool listed = false;
    static const std::regex entry(R"(^  ([a-z][a-z0-9-]*)\s)");
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("Subcommands:", 0) == 0) listed = true;
        std::smatch m;
        if (listed && std::regex_search(line, m, entry)) names.push_back(m[1]);
    }
    return names;
}

/// Each option of a --help text as its spellings ("-q", "--quiet"), --help left out.
std::vector<std::vector<std::string>> flags_of(const std::string& help) {
    std::vector<std::vector<std::string>> flags;
    std::istringstream lines(help);
    static const std::regex option(R"(^\s+(?:(-[A-Za-z]),)?(--[a-z0-9][a-z0-9-]*))");
    for (std::string line; std::getline(lines, line);) {
        std::smatch m;
        if (!std::regex_search(line, m, option) || m[2] == "--help") continue;
        flags.push_back(m[1].matched ? std::vector<std::string>{m[1], m[2]} : std::vector<std::string>{m[2]});
    }
    return flags;
}

/// docs/cli.md's "## novelty X" sections by X ("search", "corpus add", ...).
std::map<std::string, std::string> sections_of(const std::string& doc) {
    std::map<std::string, std::string> sections;
    static const std::regex heading(R"((^|\n)## novelty ([^\n]+)\n)");
    std::vector<std::pair<std::string, std::size_t>> starts;
    for (std::sregex_iterator it(doc.begin(), doc.end(), heading), end; it != end; ++it)
        starts.emplace_back((*it)[2], static_cast<std::size_t>(it->position() + it->length()));
    for (std::size_t i = 0; i < starts.size(); ++i) {
        const std::size_t stop = i + 1 < starts.size() ? doc.rfind("\n## novelty ", starts[i + 1].second) : doc.size();
        sections[starts[i].first] = doc.substr(starts[i].second, stop - starts[i].second);
    }
    return sections;
}

/// True when `text` names `flag` as a whole word (not as the start of a longer flag).
bool names(const std::string& text, const std::string& flag) {
    for (std::size_t at = text.find(flag); at != std::string::npos; at = text.find(flag, at + 1)) {
        const std::size_t after = at + flag.size();
        const bool ends = after == text.size() || !(std::isalnum(static_cast<unsigned char>(text[after])) || text[after] == '-');
        const bool starts = at == 0 || text[at - 1] != '-';
        if (ends && starts) return true;
    }
    return false;
}

TEST(CliDocs, EveryCommandAndFlagIsInItsSectionOfCliMd) {
    const auto sections = sections_of(novelty::test::read_file(std::string(NOVELTY_SOURCE_DIR) + "/docs/cli.md"));
    std::vector<std::string> commands;
    for (const std::string& command : subcommands(help_of(""))) {
        const auto inner = subcommands(help_of(command));
        if (inner.empty()) commands.push_back(command);
        for (const std::string& sub : inner) commands.push_back(command + " " + sub);
    }
    ASSERT_GE(commands.size(), 19u);  // corpus import ... serve: a parse that finds nothing must fail
    std::size_t checked = 0;
    for (const std::string& command : commands) {
        const auto section = sections.find(command);
        if (section == sections.end()) {
            ADD_FAILURE() << "docs/cli.md has no '## novelty " << command << "' section";
            continue;
        }
        for (const auto& spellings : flags_of(help_of(command))) {
            ++checked;
            bool named = false;
            for (const std::string& flag : spellings) named = named || names(section->second, flag);
            EXPECT_TRUE(named) << "docs/cli.md, '## novelty " << command << "', does not name " << spellings.back();
        }
    }
    EXPECT_GE(checked, 200u);
}

}  // namespace
