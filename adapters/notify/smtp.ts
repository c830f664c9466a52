/** The email transport to an SMTP server (CERTKEEPER_SMTP_URL), over nodemailer. */
import { isIP } from "node:net";
import type { SendMailOptions, Transporter } from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport";
import { openedOnce } from "./lazy.ts";
import { matchResolveRule, type ResolveRule } from "../../core/config/mod.ts";
import type { EmailMessage, EmailTransport } from "../../core/notify/mod.ts";
import type { TrustStore } from "../../core/tls/mod.ts";
import { isLoopbackAddress } from "../../core/net/mod.ts";

export interface SmtpTransportOptions {
  /** `smtp://user:pass@host:port` (STARTTLS when offered) or `smtps://…` (TLS from the start). */
  url: string;
  /** Roots for the server's certificate: the system's plus CERTKEEPER_EXTRA_CA_FILE. */
  trust: TrustStore;
  /** CERTKEEPER_RESOLVE, which names the SMTP server too. */
  resolve?: ResolveRule[];
  /**
   * CERTKEEPER_DELIVERY_TIMEOUT: how long one message may take, connect to the server's last answer
   * (connecting and its greeting: at most half of it); default 30 s. A server that keeps talking
   * slowly is cut off at this deadline as surely as a silent one.
   */
  timeoutMs?: number;
}

export interface ClosableEmailTransport extends EmailTransport {
  close(): Promise<void>;
}

/**
 * Sends each message over one SMTP session. The server is the operator's own choice, so the
 * private-address guard does not apply to it (a relay on localhost is the common case).
 *
 * @example
 * const email = createSmtpTransport({ url: "smtps://alerts:secret@mail.example.com", trust: TrustStore.system() });
 * await email.send(message);
 */
export function createSmtpTransport(options: SmtpTransportOptions): ClosableEmailTransport {
  const url = new URL(options.url);
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:") throw new Error("The SMTP URL must start with smtp:// or smtps://");
  const secure = url.protocol === "smtps:";
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  const rule = matchResolveRule(options.resolve ?? [], host);
  if (rule && rule.address === null) throw new Error(`The SMTP host ${host} does not resolve (CERTKEEPER_RESOLVE)`);

  const timeoutMs = options.timeoutMs ?? 30_000;
  const settings: SMTPTransport.Options = {
    host: rule?.address ?? host,
    port: Number(url.port) || (secure ? 465 : 587),
    secure,
    auth: user ? { user, pass: password } : undefined,
    // The password crosses the network only encrypted: over smtp:// with credentials the server must
    // offer STARTTLS, unless the URL names this machine (a local relay often has no certificate).
    requireTLS: Boolean(user) && !secure && !namesThisMachine(host),
    connectionTimeout: Math.min(10_000, Math.ceil(timeoutMs / 2)),
    greetingTimeout: Math.min(10_000, Math.ceil(timeoutMs / 2)),
    socketTimeout: timeoutMs,
    disableFileAccess: true,
    disableUrlAccess: true,
    tls: {
      ca: [...options.trust.pems],
      rejectUnauthorized: true,
      // With a resolve rule we connect to an address but must still verify (and SNI) the name.
      servername: isIP(host) ? undefined : host,
    },
  };
  const transport = openedOnce<Transporter>(() => loadNodemailer().then((nodemailer) => nodemailer.createTransport(settings)));

  return {
    async send(message: EmailMessage): Promise<void> {
      try {
        // One deadline over the whole session: the transport closes its socket when it passes.
        await (await transport.get()).sendMail({ ...mailOptions(message), signal: AbortSignal.timeout(timeoutMs) });
      } catch (error) {
        // Tenants read this (the channel test, the events' lastError): what happened and its codes,
        // never the server's reply, which can echo credentials, nor the relay's address.
        throw new Error(`Email to ${message.to} was not sent: ${describeSmtpFailure(error, Boolean(user))}`);
      }
    },
    async close() {
      (await transport.ifOpened()?.catch(() => undefined))?.close();
    },
  };
}

/** `localhost` or a loopback address, as the URL writes it (a CERTKEEPER_RESOLVE rule does not make a name local). */
function namesThisMachine(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return name === "localhost" || name.endsWith(".localhost") || isLoopbackAddress(name);
}

/**
 * nodemailer, loaded when the first message is sent: most processes send none (a CLI command, a
 * server without an email channel), and loading it was a fifth of the wiring's start.
 */
export function loadNodemailer(): Promise<typeof import("nodemailer")> {
  return import("nodemailer");
}

/** nodemailer's fields for one of our messages; shared with the outbox. */
export function mailOptions(message: EmailMessage): SendMailOptions {
  return {
    from: message.from,
    to: message.to,
    subject: message.subject,
    text: message.text,
    html: message.html,
    messageId: message.messageId,
    // RFC 3834: machine-sent, so vacation responders stay quiet.
    headers: { "Auto-Submitted": "auto-generated" },
  };
}


function describeSmtpFailure(error: unknown, withPassword: boolean): string {
  const { code, responseCode } = error as { code?: string; responseCode?: number };
  if (code === "EABORT") return `the mail server did not finish within the delivery timeout (ETIMEDOUT)`;
  const what =
    code === "EAUTH"
      ? "the mail server refused certkeeper's sign-in"
      : code === "EENVELOPE"
        ? "the mail server refused the sender or the recipient"
        : code === "ETLS" && responseCode !== undefined
          ? `the mail server does not offer STARTTLS${withPassword ? ", and certkeeper sends its password only encrypted" : ""}`
        : code === "ECONNECTION" || code === "ESOCKET" || code === "ETIMEDOUT" || code === "EDNS" || code === "ETLS"
          ? "the mail server could not be reached"
          : "the mail server refused the message";
  const codes = [code, responseCode].filter((part) => part !== undefined && part !== "");
  return codes.length > 0 ? `${what} (${codes.join(" ")})` : what;
}

