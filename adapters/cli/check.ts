/**
 * `check DOMAIN[:PORT]...` (CONTRACT §2, §17): retrieves and judges each target's certificate, stores
 * nothing, prints one line per target (or the GET view with --json), and exits like a monitoring
 * plugin: 0 all valid, 1 the worst is expiring, 2 the worst is expired, revoked, invalid or
 * unreachable, 3 called wrongly. The work is in check_targets.ts, loaded when the command runs.
 */
import type { CommandSpec } from "./command_table.ts";

export const checkCommand: CommandSpec = {
  name: "check",
  flags: ["protocol", "connect-to", "alert-policy"],
  positionals: { synopsis: "DOMAIN[:PORT]...", min: 1, max: 100 },
  synopsis: "check DOMAIN[:PORT]... [--protocol P] [--connect-to ADDRESS] [--alert-policy renewal|days] [--json]",
  usageExitCode: 3,
  help: [
    "Retrieves each target's certificate now and judges it as the server would (stores nothing).",
    "Prints one line per target: status, days left, reason, domain. With --json: the certificate as",
    "GET /v1/certificates/{id} shows it (an array when several targets are given).",
    "",
    "Exit codes (as a monitoring plugin): 0 every target is valid; 1 the worst is expiring;",
    "2 the worst is expired, revoked, invalid or unreachable; 3 called wrongly.",
    "",
    "--alert-policy renewal (default: CERTKEEPER_ALERT_POLICY, else renewal) judges a certificate by its",
    "renewal deadline: expiring (renewal_overdue) once it should have been replaced (the end of its CA's",
    "renewal window, else three quarters of its lifetime); days: expiring within 30 days of expiry.",
    "",
    "Targets on loopback or private addresses are refused unless CERTKEEPER_ALLOW_PRIVATE_TARGETS=true.",
    "Certificates from an internal CA need CERTKEEPER_EXTRA_CA_FILE=ca.pem. To check a server by its",
    "IP address, give the name its certificate is for and where to find it:",
    "  certkeeper check app.internal:8443 --connect-to 10.0.0.5",
    "",
    "--protocol P speaks P's STARTTLS upgrade first: tls (default), smtp, imap, pop3, ftp, postgres, mysql,",
    "ldap or xmpp; without a port, P's own (smtp 25, imap 143, pop3 110, ftp 21, postgres 5432, mysql 3306,",
    "ldap 389, xmpp 5222). --connect-to ADDRESS connects there (a host name or an IP address) instead of",
    "the domain; SNI and host-name verification still use the domain. Every address of a name is checked.",
  ].join("\n"),
  run: async (context) => (await import("./check_targets.ts")).runCheck(context),
};
