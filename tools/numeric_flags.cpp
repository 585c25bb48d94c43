// One check for every numeric flag of every command: CLI11 reads a number with strtoll's base 0
// (so '010' is 8 and '0x10' is 16) and gives '' the value 0; a flag written that way is refused,
// naming the flag, instead of running with a value the user did not mean.
#include "cli_common.hpp"

#include <string>

namespace novelty::cli {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The number kinds CLI11 names in an option's type ("INT", "UINT", "FLOAT", "NUMBER"), before the
// validators' descriptions it appends after ':'.
enum class NumberKind { none, integer, unsigned_integer, real };

NumberKind number_kind(const CLI::Option& option) {
    const std::string full = option.get_type_name();
    const std::string type = full.substr(0, full.find(':'));
    if (type == "INT") return NumberKind::integer;
    if (type == "UINT") return NumberKind::unsigned_integer;
    if (type == "FLOAT" || type == "NUMBER") return NumberKind::real;
    return NumberKind::none;
}

// The refusal of `value` as a number of `kind`, or "" when it is a plain decimal number: an
// optional sign ('-' only where negatives exist), digits without a leading zero (a lone 0 is
// fine), and for real numbers a fraction and an exponent; "inf" and "nan" are left to the flag's
// own range check.
std::string refusal(const std::string& value, NumberKind kind) {
    if (value.empty()) return "an empty value is not a number: give one, or leave the flag out";
    std::size_t i = 0;
    if (value[0] == '+' || value[0] == '-') {
        if (value[0] == '-' && kind == NumberKind::unsigned_integer) return "'" + value + "' is negative: give a count of 0 or more";
        ++i;
    }
    const std::size_t digits_at = i;
    while (i < value.size() && is_digit(value[i])) ++i;
    const std::size_t n_digits = i - digits_at;
    if (n_digits > 1 && value[digits_at] == '0')
        return "'" + value + "' has a leading zero, which would be read as octal: write it without";
    if (n_digits == 1 && value[digits_at] == '0' && i < value.size() && (value[i] == 'x' || value[i] == 'X'))
        return "'" + value + "' is hexadecimal: write the number in decimal";
    if (kind == NumberKind::real) {
        const std::string lower = [&] {
            std::string s = value.substr(digits_at);
            for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
            return s;
        }();
        if (n_digits == 0 && (lower == "inf" || lower == "infinity" || lower == "nan")) return "";
        std::size_t fraction = 0;
        if (i < value.size() && value[i] == '.') {
            for (++i; i < value.size() && is_digit(value[i]); ++i) ++fraction;
        }
        if (n_digits + fraction == 0) return "'" + value + "' is not a number";
        if (i < value.size() && (value[i] == 'e' || value[i] == 'E')) {
            ++i;
            if (i < value.size() && (value[i] == '+' || value[i] == '-')) ++i;
            const std::size_t exponent_at = i;
            while (i < value.size() && is_digit(value[i])) ++i;
            if (i == exponent_at) return "'" + value + "' is not a number";
        }
    } else if (n_digits == 0) {
        return "'" + value + "' is not a whole number";
    }
    if (i != value.size()) return "'" + value + "' is not a " + (kind == NumberKind::real ? "number" : "whole number");
    return "";
}

void check_numbers_of(CLI::App& app) {
    for (CLI::Option* option : app.get_options()) {
        const NumberKind kind = number_kind(*option);
        if (kind == NumberKind::none || option->get_expected_max() == 0) continue;
        option->check(CLI::Validator([kind](std::string& value) { return refusal(value, kind); }, ""));
    }
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) check_numbers_of(*sub);
}

}  // namespace

void refuse_unclear_numbers(CLI::App& app) { check_numbers_of(app); }

}  // namespace novelty::cli
