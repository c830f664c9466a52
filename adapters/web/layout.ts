/** The page shell every page shares, and the headers every page carries. */
import { type SignedIn, mayManageMembers } from "../../core/accounts/mod.ts";
import { DAY, newId, relativeDays, type Mode } from "../../core/base/mod.ts";
import { OPERATIONS } from "../../core/operations/mod.ts";
import { ASSET_VERSION } from "./assets.ts";
import { html, type Html, type HtmlValue } from "./html.ts";

/** Nothing but this server's own files, no framing, no inline code: what an injected tag could do, it cannot. */
export const WEB_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'none'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Whether this build has CT watches (CONTRACT §15): the Watches tab appears with them. */
export const WATCHES = OPERATIONS.some((operation) => operation.id === "listWatches");

export type Tab = "dashboard" | "channels" | "watches" | "api-keys" | "members" | "account";

export interface PageOptions {
  title: string;
  /** Absent on pages for signed-out visitors. */
  me?: SignedIn;
  tab?: Tab;
  /** A confirmation to show above the content. */
  notice?: string | null;
  /** An error to show above the content. */
  error?: string | null;
  narrow?: boolean;
  /** The data shown (live when absent): the Dashboard, Channels and Watches tabs keep test data shown. */
  mode?: Mode;
}

export function page(options: PageOptions, content: HtmlValue): Html {
  const { me } = options;
  const tab = (id: Tab, href: string, label: string) =>
    html`<a href="${href}"${options.tab === id ? html` aria-current="page"` : ""}>${label}</a>`;
  const shown = options.mode === "test" ? "?mode=test" : "";
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · certkeeper</title>
<link rel="stylesheet" href="/assets/certkeeper.css?v=${ASSET_VERSION}">
<script src="/assets/certkeeper.js?v=${ASSET_VERSION}" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
${
  me
    ? html`<header class="top">
<a class="brand" href="/">certkeeper</a><span class="org">${me.organization.name}</span>
<nav aria-label="Main">${tab("dashboard", `/${shown}`, "Dashboard")} ${tab("channels", `/channels${shown}`, "Channels")}
${WATCHES ? tab("watches", `/watches${shown}`, "Watches") : ""} ${tab("api-keys", "/settings/api-keys", "API Keys")}
${mayManageMembers(me.user.role) ? tab("members", "/settings/members", "Members") : ""} ${tab("account", "/settings/account", "Account")}</nav>
<form method="post" action="/sign-out">${formToken(me)}<span>${me.user.email} (${me.user.role})</span><button type="submit">Sign out</button></form>
</header>`
    : ""
}
<main id="main"${options.narrow ? html` class="narrow"` : ""}>
${options.notice ? html`<div class="notice" role="status">${options.notice}</div>` : ""}
${options.error ? html`<div class="error" role="alert">${options.error}</div>` : ""}
${content}
</main>
</body>
</html>`;
}

/** The hidden field every form of a signed-in page carries. */
export function formToken(me: SignedIn): Html {
  return html`<input type="hidden" name="_csrf" value="${me.formToken}">`;
}

/** An HTML response with the web face's security headers; never cached (pages may show a secret once). */
export function htmlResponse(body: Html, init: { status?: number; headers?: Record<string, string> } = {}): Response {
  return new Response(body.value, {
    status: init.status ?? 200,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": WEB_CONTENT_SECURITY_POLICY,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "x-frame-options": "DENY",
      "referrer-policy": "same-origin",
      "x-request-id": newId("req"),
      ...init.headers,
    },
  });
}

/** "2031-05-01 12:00 UTC": dates as people read them, in UTC like the API. */
export function when(isoTime: string | null): string {
  return isoTime === null ? "never" : `${isoTime.slice(0, 10)} ${isoTime.slice(11, 16)} UTC`;
}

/**
 * How long ago or ahead a moment is, as people say it: "just now", "3 minutes ago", "in 5 hours",
 * "2 days ago". Whole days are counted as everywhere else in certkeeper (relativeDays).
 */
export function ago(isoTime: string | null, now = Date.now()): string {
  if (isoTime === null) return "never";
  const ms = Date.parse(isoTime) - now;
  const future = ms > 0;
  const abs = Math.abs(ms);
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  if (abs < 60_000) return future ? "in less than a minute" : "just now";
  if (abs < 3_600_000) return future ? `in ${unit(Math.floor(abs / 60_000), "minute")}` : `${unit(Math.floor(abs / 60_000), "minute")} ago`;
  if (abs < DAY) return future ? `in ${unit(Math.floor(abs / 3_600_000), "hour")}` : `${unit(Math.floor(abs / 3_600_000), "hour")} ago`;
  return relativeDays(Math.floor(ms / DAY));
}

/** A moment for people: "3 minutes ago" with the exact time beside it, machine-readable in datetime. */
export function moment(isoTime: string | null, now = Date.now()): Html {
  if (isoTime === null) return html`never`;
  return html`<time datetime="${isoTime}">${ago(isoTime, now)}</time> <span class="muted small">(${when(isoTime)})</span>`;
}
