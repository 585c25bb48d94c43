#include "novelty/util/dates.hpp"

#include <gtest/gtest.h>

using novelty::parse_date;
using novelty::parse_rfc2822_date;

TEST(Dates, ParsesEachPrecision) {
    auto year = parse_date("2018");
    ASSERT_TRUE(year);
    EXPECT_EQ(year->text(), "2018");
    EXPECT_EQ(year->effective(), "2018-12-31");
    auto month = parse_date("2020-02");
    ASSERT_TRUE(month);
    EXPECT_EQ(month->text(), "2020-02");
    EXPECT_EQ(month->effective(), "2020-02-29");  // leap year
    EXPECT_EQ(parse_date("2019-02")->effective(), "2019-02-28");
    EXPECT_EQ(parse_date("1900-02")->effective(), "1900-02-28");  // not a leap year
    EXPECT_EQ(parse_date("2000-02")->effective(), "2000-02-29");
    auto day = parse_date("2021-06-15");
    ASSERT_TRUE(day);
    EXPECT_EQ(day->text(), "2021-06-15");
    EXPECT_EQ(day->effective(), "2021-06-15");
    EXPECT_EQ(parse_date("2021-06-15T10:00:00Z")->text(), "2021-06-15");
    EXPECT_EQ(parse_date("2021-06-15 10:00")->text(), "2021-06-15");
}

TEST(Dates, RejectsWhatDoesNotParse) {
    for (const char* bad : {"", "21", "20211", "2021-13", "2021-00", "2021-05-00", "2021-02-30", "2019-02-29", "2021-1-5",
                            "2021/01/05", "June 2021", "0999", "2021-06-15x", "abcd", "2021-06-"}) {
        EXPECT_FALSE(parse_date(bad)) << bad;
    }
}

TEST(Dates, ParsesArxivVersionDates) {
    auto d = parse_rfc2822_date("Mon, 2 Apr 2007 19:18:42 GMT");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->text(), "2007-04-02");
    EXPECT_EQ(parse_rfc2822_date("Tue, 24 Jul 2007 20:10:27 GMT")->text(), "2007-07-24");
    EXPECT_EQ(parse_rfc2822_date("24 Jul 2007")->text(), "2007-07-24");
    EXPECT_FALSE(parse_rfc2822_date("Mon, 31 Apr 2007 19:18:42 GMT"));
    EXPECT_FALSE(parse_rfc2822_date("Mon, 2 Foo 2007 19:18:42 GMT"));
    EXPECT_FALSE(parse_rfc2822_date("2007-04-02"));
}

TEST(Dates, EffectiveDatesOrderAsStrings) {
    // A cutoff admits a partial date only when its whole period is on or before the cutoff.
    EXPECT_LT(parse_date("2018-06-30")->effective(), parse_date("2018")->effective());
    EXPECT_LE(parse_date("2018")->effective(), parse_date("2018-12-31")->effective());
    EXPECT_LT(parse_date("2018-05")->effective(), parse_date("2018-06-01")->effective());
}

// Issue 22: a leading space or junk after the day used to be accepted, so a typo changed a
// cutoff silently. A time after the day must be a time; surrounding whitespace is refused.
TEST(Dates, RefusesSpacesAndJunkAroundTheDate) {
    for (const char* bad : {" 2020-02", "2020-02 ", " 2018", "2021-06-15 junk", "2021-06-15T", "2021-06-15 ",
                            "2021-06-15T25:00", "2021-06-15T10:61", "2021-06-15T10:00:00Zjunk", "2021-06-15T10:00:00+2",
                            "2021-06-15T10:00:00.", "2021-06-15Tx", "2021-06-15\t10:00"}) {
        EXPECT_FALSE(parse_date(bad)) << "'" << bad << "'";
    }
    for (const char* good : {"2021-06-15T10:00", "2021-06-15T10:00:00.123+02:00", "2021-06-15T10:00:00-0500",
                             "2021-06-15 23:59:60", "2021-06-15T00:00:00+05"}) {
        auto d = parse_date(good);
        ASSERT_TRUE(d) << good;
        EXPECT_EQ(d->text(), "2021-06-15");
    }
}
