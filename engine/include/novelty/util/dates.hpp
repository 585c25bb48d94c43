// Publication dates and cutoffs. Dates may be partial (a year, or a year and month); a partial
// date stands for the last day of its period, so that a cutoff never admits a paper that could
// have been published after it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace novelty {

/// A date known to the year, month or day (month and day are 0 when unknown).
struct PartialDate {
    int year = 0;
    int month = 0;
    int day = 0;

    /// As given: "YYYY", "YYYY-MM" or "YYYY-MM-DD".
    std::string text() const;
    /// The last day of the period, "YYYY-MM-DD": "2018" -> "2018-12-31", "2020-02" -> "2020-02-29".
    /// Rows are ordered by this, and cutoffs compare against it.
    std::string effective() const;
};

/// Parses "YYYY", "YYYY-MM", "YYYY-MM-DD", or a timestamp starting with a day: the day, "T" or
/// one space, then "HH:MM", "HH:MM:SS" or "HH:MM:SS.fff", then optionally "Z" or an offset
/// ("2021-03-04T10:00:00Z", "2021-03-04 10:00", "2021-03-04T10:00:00.5+02:00"). Years 1000-9999;
/// month, day and time are checked. Returns std::nullopt for anything else, including surrounding
/// whitespace and anything after the day that is not such a time ("2021-03-04x").
std::optional<PartialDate> parse_date(std::string_view text);

/// Parses an RFC 2822 date as the arXiv metadata snapshot writes them
/// ("Mon, 2 Apr 2007 19:18:42 GMT"), to day precision. std::nullopt when it does not parse.
std::optional<PartialDate> parse_rfc2822_date(std::string_view text);

/// A year as a date ("2018" -> 2018, precision year). std::nullopt outside 1000-9999.
std::optional<PartialDate> date_from_year(long long year);

}  // namespace novelty
