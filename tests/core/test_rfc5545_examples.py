"""RFC 5545 section 3.8.5.3's examples (issue 29, point 11), each with its occurrence list
written as the RFC prints it, evaluated by `core.schedule.upcoming` (what `POST /preview`
shows and the pass sends) from the example's DTSTART in America/New_York.

How a printed list is read (`printed`): `(1997 9:00 AM EDT)` opens a year's dates at that
wall time and zone abbreviation (`(1997 EDT)`: at DTSTART's time), `(September 2, 1997 EDT)`
a day's times; `2-30` is every day from the 2nd to the 30th; `...` between two printed ones
continues the step of the two before it (`2,4,6...20`); a trailing `...` means the series
goes on, and the printed ones are its first. Without one, the series ends there.

The product refuses none of them. One prints a list its own rule does not give: "Every 3
hours from 9:00 AM to 5:00 PM on a specific day" prints 09:00, 12:00 and 15:00 under
`UNTIL=19970902T170000Z`, which is 13:00 EDT: 15:00 lies after UNTIL, and the product (as
dateutil and RFC 5545's definition of UNTIL) stops at 12:00. `product` holds that list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time
from zoneinfo import ZoneInfo

import pytest

from core.schedule import to_utc, upcoming

NEW_YORK = ZoneInfo("America/New_York")


@dataclass(frozen=True)
class Example:
    title: str
    dtstart: str  # the DTSTART's local wall time, in America/New_York
    rrule: str
    printed: str  # the occurrences as the RFC prints them (module doc)
    exdates: tuple[str, ...] = ()
    product: str | None = None  # what the product gives where the RFC's list is wrong


EXAMPLES = [
    Example(
        "Daily for 10 occurrences",
        "1997-09-02T09:00",
        "FREQ=DAILY;COUNT=10",
        "(1997 9:00 AM EDT) September 2-11",
    ),
    Example(
        "Daily until December 24, 1997",
        "1997-09-02T09:00",
        "FREQ=DAILY;UNTIL=19971224T000000Z",
        "(1997 9:00 AM EDT) September 2-30;October 1-25"
        " (1997 9:00 AM EST) October 26-31;November 1-30;December 1-23",
    ),
    Example(
        "Every other day - forever",
        "1997-09-02T09:00",
        "FREQ=DAILY;INTERVAL=2",
        "(1997 9:00 AM EDT) September 2,4,6,8...24,26,28,30; October 2,4,6...20,22,24"
        " (1997 9:00 AM EST) October 26,28,30; November 1,3,5,7...25,27,29; December 1,3,...",
    ),
    Example(
        "Every 10 days, 5 occurrences",
        "1997-09-02T09:00",
        "FREQ=DAILY;INTERVAL=10;COUNT=5",
        "(1997 9:00 AM EDT) September 2,12,22; October 2,12",
    ),
    Example(
        "Every day in January, for 3 years (yearly)",
        "1998-01-01T09:00",
        "FREQ=YEARLY;UNTIL=20000131T140000Z;BYMONTH=1;BYDAY=SU,MO,TU,WE,TH,FR,SA",
        "(1998 9:00 AM EST) January 1-31 (1999 9:00 AM EST) January 1-31"
        " (2000 9:00 AM EST) January 1-31",
    ),
    Example(
        "Every day in January, for 3 years (daily)",
        "1998-01-01T09:00",
        "FREQ=DAILY;UNTIL=20000131T140000Z;BYMONTH=1",
        "(1998 9:00 AM EST) January 1-31 (1999 9:00 AM EST) January 1-31"
        " (2000 9:00 AM EST) January 1-31",
    ),
    Example(
        "Weekly for 10 occurrences",
        "1997-09-02T09:00",
        "FREQ=WEEKLY;COUNT=10",
        "(1997 9:00 AM EDT) September 2,9,16,23,30;October 7,14,21"
        " (1997 9:00 AM EST) October 28;November 4",
    ),
    Example(
        "Weekly until December 24, 1997",
        "1997-09-02T09:00",
        "FREQ=WEEKLY;UNTIL=19971224T000000Z",
        "(1997 9:00 AM EDT) September 2,9,16,23,30; October 7,14,21"
        " (1997 9:00 AM EST) October 28; November 4,11,18,25; December 2,9,16,23",
    ),
    Example(
        "Every other week - forever",
        "1997-09-02T09:00",
        "FREQ=WEEKLY;INTERVAL=2;WKST=SU",
        "(1997 9:00 AM EDT) September 2,16,30; October 14"
        " (1997 9:00 AM EST) October 28; November 11,25; December 9,23"
        " (1998 9:00 AM EST) January 6,20; February 3, 17 ...",
    ),
    Example(
        "Weekly on Tuesday and Thursday for five weeks (until)",
        "1997-09-02T09:00",
        "FREQ=WEEKLY;UNTIL=19971007T000000Z;WKST=SU;BYDAY=TU,TH",
        "(1997 9:00 AM EDT) September 2,4,9,11,16,18,23,25,30; October 2",
    ),
    Example(
        "Weekly on Tuesday and Thursday for five weeks (count)",
        "1997-09-02T09:00",
        "FREQ=WEEKLY;COUNT=10;WKST=SU;BYDAY=TU,TH",
        "(1997 9:00 AM EDT) September 2,4,9,11,16,18,23,25,30; October 2",
    ),
    Example(
        "Every other week on Monday, Wednesday, and Friday until December 24, 1997, starting"
        " on Monday, September 1, 1997",
        "1997-09-01T09:00",
        "FREQ=WEEKLY;INTERVAL=2;UNTIL=19971224T000000Z;WKST=SU;BYDAY=MO,WE,FR",
        "(1997 9:00 AM EDT) September 1,3,5,15,17,19,29; October 1,3,13,15,17"
        " (1997 9:00 AM EST) October 27,29,31; November 10,12,14,24,26,28;"
        " December 8,10,12,22",
    ),
    Example(
        "Every other week on Tuesday and Thursday, for 8 occurrences",
        "1997-09-02T09:00",
        "FREQ=WEEKLY;INTERVAL=2;COUNT=8;WKST=SU;BYDAY=TU,TH",
        "(1997 9:00 AM EDT) September 2,4,16,18,30; October 2,14,16",
    ),
    Example(
        "Monthly on the first Friday for 10 occurrences",
        "1997-09-05T09:00",
        "FREQ=MONTHLY;COUNT=10;BYDAY=1FR",
        "(1997 9:00 AM EDT) September 5;October 3 (1997 9:00 AM EST) November 7;December 5"
        " (1998 9:00 AM EST) January 2;February 6;March 6;April 3"
        " (1998 9:00 AM EDT) May 1;June 5",
    ),
    Example(
        "Monthly on the first Friday until December 24, 1997",
        "1997-09-05T09:00",
        "FREQ=MONTHLY;UNTIL=19971224T000000Z;BYDAY=1FR",
        "(1997 9:00 AM EDT) September 5; October 3 (1997 9:00 AM EST) November 7; December 5",
    ),
    Example(
        "Every other month on the first and last Sunday of the month for 10 occurrences",
        "1997-09-07T09:00",
        "FREQ=MONTHLY;INTERVAL=2;COUNT=10;BYDAY=1SU,-1SU",
        "(1997 9:00 AM EDT) September 7,28 (1997 9:00 AM EST) November 2,30"
        " (1998 9:00 AM EST) January 4,25;March 1,29 (1998 9:00 AM EDT) May 3,31",
    ),
    Example(
        "Monthly on the second-to-last Monday of the month for 6 months",
        "1997-09-22T09:00",
        "FREQ=MONTHLY;COUNT=6;BYDAY=-2MO",
        "(1997 9:00 AM EDT) September 22;October 20 (1997 9:00 AM EST) November 17;December 22"
        " (1998 9:00 AM EST) January 19;February 16",
    ),
    Example(
        "Monthly on the third-to-the-last day of the month, forever",
        "1997-09-28T09:00",
        "FREQ=MONTHLY;BYMONTHDAY=-3",
        "(1997 9:00 AM EDT) September 28"
        " (1997 9:00 AM EST) October 29;November 28;December 29"
        " (1998 9:00 AM EST) January 29;February 26 ...",
    ),
    Example(
        "Monthly on the 2nd and 15th of the month for 10 occurrences",
        "1997-09-02T09:00",
        "FREQ=MONTHLY;COUNT=10;BYMONTHDAY=2,15",
        "(1997 9:00 AM EDT) September 2,15;October 2,15"
        " (1997 9:00 AM EST) November 2,15;December 2,15 (1998 9:00 AM EST) January 2,15",
    ),
    Example(
        "Monthly on the first and last day of the month for 10 occurrences",
        "1997-09-30T09:00",
        "FREQ=MONTHLY;COUNT=10;BYMONTHDAY=1,-1",
        "(1997 9:00 AM EDT) September 30;October 1"
        " (1997 9:00 AM EST) October 31;November 1,30;December 1,31"
        " (1998 9:00 AM EST) January 1,31;February 1",
    ),
    Example(
        "Every 18 months on the 10th thru 15th of the month for 10 occurrences",
        "1997-09-10T09:00",
        "FREQ=MONTHLY;INTERVAL=18;COUNT=10;BYMONTHDAY=10,11,12,13,14,15",
        "(1997 9:00 AM EDT) September 10,11,12,13,14,15 (1999 9:00 AM EST) March 10,11,12,13",
    ),
    Example(
        "Every Tuesday, every other month",
        "1997-09-02T09:00",
        "FREQ=MONTHLY;INTERVAL=2;BYDAY=TU",
        "(1997 9:00 AM EDT) September 2,9,16,23,30 (1997 9:00 AM EST) November 4,11,18,25"
        " (1998 9:00 AM EST) January 6,13,20,27;March 3,10,17,24,31 ...",
    ),
    Example(
        "Yearly in June and July for 10 occurrences",
        "1997-06-10T09:00",
        "FREQ=YEARLY;COUNT=10;BYMONTH=6,7",
        "(1997 9:00 AM EDT) June 10;July 10 (1998 9:00 AM EDT) June 10;July 10"
        " (1999 9:00 AM EDT) June 10;July 10 (2000 9:00 AM EDT) June 10;July 10"
        " (2001 9:00 AM EDT) June 10;July 10",
    ),
    Example(
        "Every other year on January, February, and March for 10 occurrences",
        "1997-03-10T09:00",
        "FREQ=YEARLY;INTERVAL=2;COUNT=10;BYMONTH=1,2,3",
        "(1997 9:00 AM EST) March 10 (1999 9:00 AM EST) January 10;February 10;March 10"
        " (2001 9:00 AM EST) January 10;February 10;March 10"
        " (2003 9:00 AM EST) January 10;February 10;March 10",
    ),
    Example(
        "Every third year on the 1st, 100th, and 200th day for 10 occurrences",
        "1997-01-01T09:00",
        "FREQ=YEARLY;INTERVAL=3;COUNT=10;BYYEARDAY=1,100,200",
        "(1997 9:00 AM EST) January 1 (1997 9:00 AM EDT) April 10;July 19"
        " (2000 9:00 AM EST) January 1 (2000 9:00 AM EDT) April 9;July 18"
        " (2003 9:00 AM EST) January 1 (2003 9:00 AM EDT) April 10;July 19"
        " (2006 9:00 AM EST) January 1",
    ),
    Example(
        "Every 20th Monday of the year, forever",
        "1997-05-19T09:00",
        "FREQ=YEARLY;BYDAY=20MO",
        "(1997 9:00 AM EDT) May 19 (1998 9:00 AM EDT) May 18 (1999 9:00 AM EDT) May 17 ...",
    ),
    Example(
        "Monday of week number 20 (where the default start of the week is Monday), forever",
        "1997-05-12T09:00",
        "FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO",
        "(1997 9:00 AM EDT) May 12 (1998 9:00 AM EDT) May 11 (1999 9:00 AM EDT) May 17 ...",
    ),
    Example(
        "Every Thursday in March, forever",
        "1997-03-13T09:00",
        "FREQ=YEARLY;BYMONTH=3;BYDAY=TH",
        "(1997 9:00 AM EST) March 13,20,27 (1998 9:00 AM EST) March 5,12,19,26"
        " (1999 9:00 AM EST) March 4,11,18,25 ...",
    ),
    Example(
        "Every Thursday, but only during June, July, and August, forever",
        "1997-06-05T09:00",
        "FREQ=YEARLY;BYDAY=TH;BYMONTH=6,7,8",
        "(1997 9:00 AM EDT) June 5,12,19,26;July 3,10,17,24,31; August 7,14,21,28"
        " (1998 9:00 AM EDT) June 4,11,18,25;July 2,9,16,23,30; August 6,13,20,27"
        " (1999 9:00 AM EDT) June 3,10,17,24;July 1,8,15,22,29; August 5,12,19,26 ...",
    ),
    Example(
        "Every Friday the 13th, forever",
        "1997-09-02T09:00",
        "FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13",
        "(1998 9:00 AM EST) February 13;March 13;November 13 (1999 9:00 AM EDT) August 13"
        " (2000 9:00 AM EDT) October 13 ...",
        exdates=("1997-09-02T09:00",),
    ),
    Example(
        "The first Saturday that follows the first Sunday of the month, forever",
        "1997-09-13T09:00",
        "FREQ=MONTHLY;BYDAY=SA;BYMONTHDAY=7,8,9,10,11,12,13",
        "(1997 9:00 AM EDT) September 13;October 11 (1997 9:00 AM EST) November 8;December 13"
        " (1998 9:00 AM EST) January 10;February 7;March 7"
        " (1998 9:00 AM EDT) April 11;May 9;June 13...",
    ),
    Example(
        "Every 4 years, the first Tuesday after a Monday in November, forever (U.S."
        " Presidential Election day)",
        "1996-11-05T09:00",
        "FREQ=YEARLY;INTERVAL=4;BYMONTH=11;BYDAY=TU;BYMONTHDAY=2,3,4,5,6,7,8",
        "(1996 9:00 AM EST) November 5 (2000 9:00 AM EST) November 7"
        " (2004 9:00 AM EST) November 2 ...",
    ),
    Example(
        "The third instance into the month of one of Tuesday, Wednesday, or Thursday, for the"
        " next 3 months",
        "1997-09-04T09:00",
        "FREQ=MONTHLY;COUNT=3;BYDAY=TU,WE,TH;BYSETPOS=3",
        "(1997 9:00 AM EDT) September 4;October 7 (1997 9:00 AM EST) November 6",
    ),
    Example(
        "The second-to-last weekday of the month",
        "1997-09-29T09:00",
        "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-2",
        "(1997 9:00 AM EDT) September 29 (1997 9:00 AM EST) October 30;November 27;December 30"
        " (1998 9:00 AM EST) January 29;February 26;March 30 ...",
    ),
    Example(
        "Every 3 hours from 9:00 AM to 5:00 PM on a specific day",
        "1997-09-02T09:00",
        "FREQ=HOURLY;INTERVAL=3;UNTIL=19970902T170000Z",
        "(September 2, 1997 EDT) 09:00,12:00,15:00",
        product="(September 2, 1997 EDT) 09:00,12:00",
    ),
    Example(
        "Every 15 minutes for 6 occurrences",
        "1997-09-02T09:00",
        "FREQ=MINUTELY;INTERVAL=15;COUNT=6",
        "(September 2, 1997 EDT) 09:00,09:15,09:30,09:45,10:00,10:15",
    ),
    Example(
        "Every hour and a half for 4 occurrences",
        "1997-09-02T09:00",
        "FREQ=MINUTELY;INTERVAL=90;COUNT=4",
        "(September 2, 1997 EDT) 09:00,10:30;12:00;13:30",
    ),
    Example(
        "Every 20 minutes from 9:00 AM to 4:40 PM every day (daily)",
        "1997-09-02T09:00",
        "FREQ=DAILY;BYHOUR=9,10,11,12,13,14,15,16;BYMINUTE=0,20,40",
        "(September 2, 1997 EDT) 9:00,9:20,9:40,10:00,10:20, ... 16:00,16:20,16:40"
        " (September 3, 1997 EDT) 9:00,9:20,9:40,10:00,10:20, ...16:00,16:20,16:40 ...",
    ),
    Example(
        "Every 20 minutes from 9:00 AM to 4:40 PM every day (minutely)",
        "1997-09-02T09:00",
        "FREQ=MINUTELY;INTERVAL=20;BYHOUR=9,10,11,12,13,14,15,16",
        "(September 2, 1997 EDT) 9:00,9:20,9:40,10:00,10:20, ... 16:00,16:20,16:40"
        " (September 3, 1997 EDT) 9:00,9:20,9:40,10:00,10:20, ...16:00,16:20,16:40 ...",
    ),
    Example(
        "An example where the days generated makes a difference because of WKST (MO)",
        "1997-08-05T09:00",
        "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO",
        "(1997 EDT) August 5,10,19,24",
    ),
    Example(
        "An example where the days generated makes a difference because of WKST (SU)",
        "1997-08-05T09:00",
        "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU",
        "(1997 EDT) August 5,17,19,31",
    ),
    Example(
        "An example where an invalid date (i.e., February 30) is ignored",
        "2007-01-15T09:00",
        "FREQ=MONTHLY;BYMONTHDAY=15,30;COUNT=5",
        "(2007 EST) January 15,30 (2007 EST) February 15 (2007 EDT) March 15,30",
    ),
]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.title)
def test_rfc_5545_examples_give_their_printed_occurrences(example: Example) -> None:
    start = datetime.fromisoformat(example.dtstart)
    expected, goes_on = printed(example.product or example.printed, start.time())
    draft = {
        "rrule": example.rrule,
        "dtstart": example.dtstart,
        "timezone": NEW_YORK.key,
        "exdates": list(example.exdates),
    }

    # One more than printed: a series printed in full must end there.
    found = upcoming(draft, to_utc(start, NEW_YORK), len(expected) + 1)

    shown = [(o.local.replace(tzinfo=None), o.local.tzname()) for o in found]
    if goes_on:
        assert len(shown) == len(expected) + 1
        shown = shown[: len(expected)]
    assert shown == expected


def test_the_printed_lists_are_read_as_the_rfc_means_them() -> None:
    """The reader of the table, on the forms it meets: ranges, steps, a trailing `...`."""
    nine = time(9)
    assert printed("(1997 9:00 AM EDT) September 28-30;October 1", nine) == (
        [(datetime(1997, 9, d, 9), "EDT") for d in (28, 29, 30)]
        + [(datetime(1997, 10, 1, 9), "EDT")],
        False,
    )
    days, goes_on = printed("(1998 8:00 AM EST) January 2,4...10 ...", nine)
    assert days == [(datetime(1998, 1, d, 8), "EST") for d in (2, 4, 6, 8, 10)]
    assert goes_on
    times, goes_on = printed("(May 2, 2001 EDT) 9:00,9:20, ...10:00", nine)
    assert [t.strftime("%H:%M") for t, _ in times] == ["09:00", "09:20", "09:40", "10:00"]
    assert not goes_on


_HEADER = re.compile(
    r"\((?:(?P<month>[A-Z][a-z]+) (?P<day>\d+), )?(?P<year>\d{4})"
    r"(?: (?P<clock>\d{1,2}:\d{2} [AP]M))? (?P<zone>E[DS]T)\)"
)
_TOKEN = re.compile(r"[A-Z][a-z]+|\d{1,2}:\d{2}|\d+-\d+|\d+|\.\.\.")
_MONTHS = [date(2001, m, 1).strftime("%B") for m in range(1, 13)]


def printed(text: str, at: time) -> tuple[list[tuple[datetime, str]], bool]:
    """The local wall times and zone abbreviations a printed list shows (module doc), and
    whether the series goes on past them. `at`: DTSTART's time, for `(1997 EDT)`."""
    shown: list[tuple[datetime, str]] = []
    pending_step = False
    headers = list(_HEADER.finditer(text))
    for n, header in enumerate(headers):
        end = headers[n + 1].start() if n + 1 < len(headers) else len(text)
        year, zone = int(header["year"]), header["zone"]
        clock = datetime.strptime(header["clock"], "%I:%M %p").time() if header["clock"] else at
        day = None
        if header["month"]:
            day = date(year, _MONTHS.index(header["month"]) + 1, int(header["day"]))
        month = 0
        for token in _TOKEN.findall(text[header.end() : end]):
            if token == "...":
                pending_step = True
                continue
            if token in _MONTHS:
                month = _MONTHS.index(token) + 1
                continue
            if day is not None:  # a day's times
                values = [datetime.combine(day, time.fromisoformat(token.zfill(5)))]
            else:
                first, _, last = token.partition("-")
                values = [
                    datetime.combine(date(year, month, d), clock)
                    for d in range(int(first), int(last or first) + 1)
                ]
            if pending_step:
                step = shown[-1][0] - shown[-2][0]
                while shown[-1][0] + step < values[0]:
                    shown.append((shown[-1][0] + step, zone))
                pending_step = False
            shown.extend((value, zone) for value in values)
    return shown, pending_step
