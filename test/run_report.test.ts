/**
 * What `npm test` prints at its end from the run's JUnit report (test/run.ts): every failed test with
 * its error, whatever the nesting of describe blocks, and each file's time.
 */
import { describe, expect, test } from "bun:test";
import { failures, failuresText, fileTimes } from "./run.ts";

/** A report as `bun test --reporter=junit` writes it: files outermost, describe blocks nested inside. */
const REPORT = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="bun test" tests="4" assertions="3" failures="2" skipped="1" time="1.5">
  <testsuite name="test/a.test.ts" file="test/a.test.ts" tests="3" assertions="2" failures="1" skipped="1" time="1.25" hostname="vm">
    <testsuite name="outer" file="test/a.test.ts" line="3" tests="3" assertions="2" failures="1" skipped="1" time="1.25" hostname="vm">
      <testcase name="passes" classname="outer" time="0.1" file="test/a.test.ts" line="4" assertions="1" />
      <testcase name="says &quot;no&quot; &amp; fails" classname="outer" time="0.2" file="test/a.test.ts" line="5" assertions="1">
        <failure type="AssertionError" message="expect(received).toBe(expected)">AssertionError: expect(received).toBe(expected)&#10;&#10;Expected: &lt;2&gt;&#10;Received: 1&#10;      at test/a.test.ts:5:33&#10;</failure>
      </testcase>
      <testcase name="skipped" classname="outer" time="0" file="test/a.test.ts" line="6" assertions="0">
        <skipped />
      </testcase>
    </testsuite>
  </testsuite>
  <testsuite name="test/c.test.ts" file="test/c.test.ts" tests="1" assertions="0" failures="1" skipped="0" time="5" hostname="vm">
    <testcase name="hangs" classname="" time="5" file="test/c.test.ts" line="2" assertions="0">
      <failure type="TimeoutError" message="test timed out" />
    </testcase>
  </testsuite>
  <testsuite name="test/b.test.ts" file="test/b.test.ts" tests="1" assertions="1" failures="1" skipped="0" time="0.25" hostname="vm">
    <testcase name="throws" classname="" time="0.01" file="test/b.test.ts" line="2" assertions="0">
      <failure type="Error" message="boom">Error: boom&#10;line 2&#10;line 3&#10;      at test/b.test.ts:2:9&#10;</failure>
    </testcase>
  </testsuite>
</testsuites>
`;

describe("the end of npm test", () => {
  test("every failed test, nested or not, timed out or not, with its error unescaped; passed and skipped tests are not named", () => {
    expect(failures(REPORT)).toEqual([
      { file: "test/a.test.ts", name: 'says "no" & fails', text: "AssertionError: expect(received).toBe(expected)\n\nExpected: <2>\nReceived: 1\n      at test/a.test.ts:5:33" },
      { file: "test/c.test.ts", name: "hangs", text: "test timed out" },
      { file: "test/b.test.ts", name: "throws", text: "Error: boom\nline 2\nline 3\n      at test/b.test.ts:2:9" },
    ]);
  });

  test("each failure is cut to its first lines, saying how many more the report holds", () => {
    const text = failuresText(failures(REPORT).filter((f) => f.file !== "test/c.test.ts"), 2);
    expect(text.split("\n")).toEqual([
      '✗ test/a.test.ts > says "no" & fails',
      "    AssertionError: expect(received).toBe(expected)",
      "    ",
      "    … 3 more lines (test-artifacts/junit.xml)",
      "✗ test/b.test.ts > throws",
      "    Error: boom",
      "    line 2",
      "    … 2 more lines (test-artifacts/junit.xml)",
    ]);
  });

  test("each file's time, tests and failures, from the outermost suites only", () => {
    expect(fileTimes(REPORT)).toEqual([
      { file: "test/c.test.ts", seconds: 5, tests: 1, failures: 1 },
      { file: "test/a.test.ts", seconds: 1.25, tests: 3, failures: 1 },
      { file: "test/b.test.ts", seconds: 0.25, tests: 1, failures: 1 },
    ]);
  });
});
