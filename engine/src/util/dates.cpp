#include "novelty/util/dates.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>

namespace novelty {

namespace {

bool is_leap(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int days_in_month(int year, int month) {
    static constexpr std::array<int, 12> days{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return month == 2 && is_leap(year) ? 29 : days[month - 1];
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

// Reads exactly n digits at s[pos..pos+n).
bool digits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
    if (pos + n > s.size()) return false;
    for (std::size_t i = pos; i < pos + n; ++i)
        if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    std::from_chars(s.data() + pos, s.data() + pos + n, out);
    return true;
}

// Reads "HH:MM" at s[pos...] with hours 00-23 and minutes 00-59 (seconds too when `seconds`).
bool clock(std::string_view s, std::size_t& pos, bool seconds) {
    int h = 0, m = 0, sec = 0;
    if (!digits(s, pos, 2, h) || h > 23 || pos + 2 >= s.size() || s[pos + 2] != ':' || !digits(s, pos + 3, 2, m) || m > 59)
        return false;
    pos += 5;
    if (!seconds || pos >= s.size() || s[pos] != ':') return true;
    if (!digits(s, pos + 1, 2, sec) || sec > 60) return false;  // 60: a leap second
    pos += 3;
    if (pos < s.size() && s[pos] == '.') {
        const std::size_t start = ++pos;
        while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) ++pos;
        if (pos == start) return false;
    }
    return true;
}

// The time after a day: "HH:MM", "HH:MM:SS" or "HH:MM:SS.fff", then optionally "Z" or an offset
// "+HH:MM", "-HH:MM", "+HHMM", "+HH"; nothing else may follow.
bool valid_time(std::string_view s) {
    std::size_t pos = 0;
    if (!clock(s, pos, true)) return false;
    if (pos == s.size()) return true;
    if (s[pos] == 'Z') return pos + 1 == s.size();
    if (s[pos] != '+' && s[pos] != '-') return false;
    ++pos;
    int h = 0, m = 0;
    if (!digits(s, pos, 2, h) || h > 23) return false;
    pos += 2;
    if (pos == s.size()) return true;
    if (s[pos] == ':') ++pos;
    return digits(s, pos, 2, m) && m <= 59 && pos + 2 == s.size();
}

bool valid(const PartialDate& d) {
    if (d.year < 1000 || d.year > 9999) return false;
    if (d.month == 0) return d.day == 0;
    if (d.month < 1 || d.month > 12) return false;
    return d.day == 0 || (d.day >= 1 && d.day <= days_in_month(d.year, d.month));
}

}  // namespace

std::string PartialDate::text() const {
    char buffer[16];
    if (month == 0) std::snprintf(buffer, sizeof buffer, "%04d", year);
    else if (day == 0) std::snprintf(buffer, sizeof buffer, "%04d-%02d", year, month);
    else std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02d", year, month, day);
    return buffer;
}

std::string PartialDate::effective() const {
    const int m = month == 0 ? 12 : month;
    const int d = day == 0 ? days_in_month(year, m) : day;
    char buffer[16];
    std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02d", year, m, d);
    return buffer;
}

std::optional<PartialDate> parse_date(std::string_view text) {
    std::string_view s = text;
    PartialDate d;
    if (!digits(s, 0, 4, d.year)) return std::nullopt;
    if (s.size() == 4) return valid(d) ? std::optional(d) : std::nullopt;
    if (s[4] != '-' || !digits(s, 5, 2, d.month) || d.month == 0) return std::nullopt;
    if (s.size() == 7) return valid(d) ? std::optional(d) : std::nullopt;
    if (s[7] != '-' || !digits(s, 8, 2, d.day) || d.day == 0) return std::nullopt;
    if (s.size() > 10 && ((s[10] != 'T' && s[10] != ' ') || !valid_time(s.substr(11)))) return std::nullopt;
    return valid(d) ? std::optional(d) : std::nullopt;
}

std::optional<PartialDate> parse_rfc2822_date(std::string_view text) {
    static constexpr std::array<const char*, 12> months{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    std::string_view s = trim(text);
    if (auto comma = s.find(','); comma != std::string_view::npos) s = trim(s.substr(comma + 1));
    PartialDate d;
    std::size_t pos = 0;
    std::size_t n_day = 0;
    while (pos + n_day < s.size() && std::isdigit(static_cast<unsigned char>(s[pos + n_day]))) ++n_day;
    if (n_day < 1 || n_day > 2 || !digits(s, 0, n_day, d.day)) return std::nullopt;
    pos = n_day;
    if (pos >= s.size() || s[pos] != ' ') return std::nullopt;
    ++pos;
    if (pos + 3 > s.size()) return std::nullopt;
    std::string_view name = s.substr(pos, 3);
    for (std::size_t i = 0; i < months.size(); ++i)
        if (name == months[i]) d.month = static_cast<int>(i) + 1;
    if (d.month == 0) return std::nullopt;
    pos += 3;
    if (pos >= s.size() || s[pos] != ' ') return std::nullopt;
    ++pos;
    if (!digits(s, pos, 4, d.year)) return std::nullopt;
    if (pos + 4 < s.size() && s[pos + 4] != ' ') return std::nullopt;
    return valid(d) ? std::optional(d) : std::nullopt;
}

std::optional<PartialDate> date_from_year(long long year) {
    if (year < 1000 || year > 9999) return std::nullopt;
    PartialDate d;
    d.year = static_cast<int>(year);
    return d;
}

}  // namespace novelty
