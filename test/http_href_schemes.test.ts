/**
 * httpHref(): what a remote party wrote as a URL (a CA's ARI explanationURL, its renewalInfo) is kept
 * only when it is http(s); a javascript:, data:, file: or ftp: URL is no link certkeeper shows or
 * follows (in the console a javascript: link would run in the operator's session).
 */
import { expect, test } from "bun:test";
import { httpHref } from "../core/net/http_href.ts";

test.each(["javascript:alert(document.cookie)", "data:text/html,<script>alert(1)</script>", "file:///etc/passwd", "ftp://ca.example/why", "vbscript:msgbox(1)"])(
  "%s is no http(s) URL: null",
  (text) => {
    expect(httpHref(text)).toBeNull();
  },
);

test("http(s) URLs are kept as the WHATWG parser writes them", () => {
  expect(httpHref("https://CA.example/why?id=1")).toBe("https://ca.example/why?id=1");
  expect(httpHref("http://ca.example/a b")).toBe("http://ca.example/a%20b");
  expect(httpHref("not a url")).toBeNull();
});
