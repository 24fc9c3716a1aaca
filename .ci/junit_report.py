#!/usr/bin/python3
"""What a CI service shows from `r3check verify --junit`: one failing testcase
per failing case. Reads the JUnit file and the same run's --json, prints the
summary a CI page would show, and fails when the two disagree.

    .ci/junit_report.py VERIFY.xml VERIFY.json
"""
import json
import sys
import xml.etree.ElementTree as ET

xml_path, json_path = sys.argv[1], sys.argv[2]
root = ET.parse(xml_path).getroot()
cases = root.findall('.//testcase')
failing = [c for c in cases if c.find('failure') is not None]
with open(json_path) as f:
    result = json.load(f)
want = result['total']['fail']
for c in failing[:3]:
    print('  FAILED %s: %s' % (c.get('name'), c.find('failure').get('message')))
if len(failing) > 3:
    print('  ... %d more failing testcases' % (len(failing) - 3))
print('junit: %d testcases, %d failing; verify counted %d cases, %d failing'
      % (len(cases), len(failing), result['total']['cases'], want))
if len(cases) != result['total']['cases'] or len(failing) != want or want == 0:
    print('junit: the JUnit report does not show one failing testcase per failing case')
    sys.exit(1)
