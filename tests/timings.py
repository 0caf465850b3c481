"""Where a test run's time went: the wall time of each phase and the slowest tests.

``python tests/timings.py PHASES [JUNIT.xml ...]`` prints the phases recorded in PHASES
(lines ``<name> <seconds>``, written by .ci/run and tests/run.sh as each phase ends) and
the 15 slowest tests of the pytest runs' JUnit reports, so that a regression shows in
the first CI log that has it (issue #45).
"""

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

SLOWEST = 15


def phases(path):
    out = []
    if Path(path).is_file():
        for line in Path(path).read_text().splitlines():
            name, _, seconds = line.rpartition(' ')
            if name and seconds.isdigit():
                out.append((name, int(seconds)))
    return out


def slowest(reports, count=SLOWEST):
    cases = []
    for report in reports:
        if not Path(report).is_file() or not Path(report).stat().st_size:
            continue
        for case in ET.parse(report).iter('testcase'):
            name = '%s::%s' % (case.get('classname', ''), case.get('name', ''))
            cases.append((float(case.get('time') or 0), name))
    return sorted(cases, reverse=True)[:count]


def minutes(seconds):
    return '%d:%02d' % divmod(int(seconds), 60)


def main(argv):
    recorded = phases(argv[1])
    print('== where the time went')
    for name, seconds in recorded:
        print('  %-28s %8s' % (name, minutes(seconds)))
    if recorded:
        # what ran beside pytest (the static checks, molecule) is inside its wall time
        print('  %-28s %8s' % ('total', minutes(sum(
            s for name, s in recorded if '(beside' not in name))))
    tests = slowest(argv[2:])
    if tests:
        print('== the %d slowest tests' % len(tests))
        for seconds, name in tests:
            print('  %7.1fs  %s' % (seconds, name))


if __name__ == '__main__':
    main(sys.argv)
