/**
 * A browser stand-in for in-process tests of the web face: `app.handle(new Request(…))` with a cookie
 * jar, the Origin a browser would send, and the form token read from the last page, as a browser
 * submitting the page's own form would.
 */
import type { Elysia } from "elysia";

export interface AppLike {
  handle(request: Request): Promise<Response>;
}

export interface Page {
  status: number;
  headers: Headers;
  text: string;
  /** The cookies this response set, name → the whole Set-Cookie line. */
  setCookies: Map<string, string>;
}

export interface PostOptions {
  /** The Origin header; default this site's. null sends none. */
  origin?: string | null;
  referer?: string;
  /** The form token; default the one of the last page seen. null sends none. */
  csrf?: string | null;
  headers?: Record<string, string>;
}

export const SITE = "http://localhost";

export class WebClient {
  readonly cookies = new Map<string, string>();
  /** The form token of the last page that had one. */
  formToken: string | undefined;

  constructor(private readonly app: AppLike, readonly site = SITE) {}

  async get(path: string, headers: Record<string, string> = {}): Promise<Page> {
    return this.#send(new Request(this.site + path, { headers: { ...this.#cookieHeader(), ...headers } }));
  }

  async post(path: string, form: Record<string, string>, options: PostOptions = {}): Promise<Page> {
    const body = new URLSearchParams(form);
    const csrf = options.csrf === undefined ? this.formToken : options.csrf;
    if (csrf !== null && csrf !== undefined) body.set("_csrf", csrf);
    const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", ...this.#cookieHeader(), ...options.headers };
    const origin = options.origin === undefined ? this.site : options.origin;
    if (origin !== null) headers.origin = origin;
    if (options.referer) headers.referer = options.referer;
    return this.#send(new Request(this.site + path, { method: "POST", headers, body: body.toString() }));
  }

  /** Opens the sign-in page and signs in; returns the answer to the form post. */
  async signIn(email: string, password: string, headers: Record<string, string> = {}): Promise<Page> {
    await this.get("/sign-in", headers);
    return this.post("/sign-in", { email, password, next: "/" }, { headers });
  }

  /** Follows a 303 with a GET, as a browser does. */
  async follow(page: Page): Promise<Page> {
    const location = page.headers.get("location");
    if (page.status !== 303 || !location) throw new Error(`expected a 303 redirect, got ${page.status}`);
    return this.get(location);
  }

  #cookieHeader(): Record<string, string> {
    if (this.cookies.size === 0) return {};
    return { cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ") };
  }

  async #send(request: Request): Promise<Page> {
    const response = await this.app.handle(request);
    const text = await response.text();
    const setCookies = new Map<string, string>();
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair!.indexOf("=");
      const name = pair!.slice(0, at);
      const value = pair!.slice(at + 1);
      setCookies.set(name, line);
      if (/max-age=0(;|$)/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const token = formTokenIn(text);
    if (token) this.formToken = token;
    return { status: response.status, headers: response.headers, text, setCookies };
  }
}

export function formTokenIn(html: string): string | undefined {
  return /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
}

/** The cookie's attributes, lower-cased names: `{ httponly: true, samesite: "Strict", path: "/" }`. */
export function cookieAttributes(line: string): Record<string, string | true> {
  const attributes: Record<string, string | true> = {};
  for (const part of line.split(";").slice(1)) {
    const [name, value] = part.trim().split("=");
    attributes[name!.toLowerCase()] = value ?? true;
  }
  return attributes;
}

/** The app over real HTTP: each request goes out with fetch, redirects unfollowed as WebClient expects. */
function overHttp(): AppLike {
  return { handle: (request) => fetch(request, { redirect: "manual" }) };
}

export interface ListeningApp {
  /** `http://<hostname>:<port>` */
  site: string;
  /** A new browser stand-in that talks to it over HTTP. */
  browser(): WebClient;
  close(): Promise<void>;
}

/**
 * `app` listening on `hostname` (a free port), for tests where the connection's peer matters: on
 * 127.0.0.1 the peer is loopback, as a reverse proxy on the same host is; on another address of this
 * host it is not.
 */
export function listening(app: Elysia, hostname = "127.0.0.1"): ListeningApp {
  app.listen({ hostname, port: 0 });
  const server = app.server!;
  const site = `http://${hostname}:${server.port}`;
  return { site, browser: () => new WebClient(overHttp(), site), close: async () => void (await server.stop(true)) };
}
