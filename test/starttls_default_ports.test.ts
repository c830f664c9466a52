/**
 * CONTRACT §12: without a port, each protocol's own port is the one used. The CLI's `check` shows the
 * port it checked (`--json`); a name that resolves to nothing makes each run quick and connects
 * nowhere. smtp and postgres are held by test/cli_check_exit_codes_and_ports.test.ts; these are the
 * others.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { TEST_DOMAIN } from "./support/harness.ts";
import { runCli, workspacesRemovedAfterAll } from "./support/cli.ts";

setDefaultTimeout(60_000);

const workspace = workspacesRemovedAfterAll();

describe("check: the protocol's own port", () => {
  test("tls 443, imap 143, pop3 110, ftp 21, mysql 3306, ldap 389, xmpp 5222", async () => {
    const ws = workspace();
    const gone = `default-port.${TEST_DOMAIN}`;
    const env = { ...ws.env, CERTKEEPER_RESOLVE: `${gone}=none`, CERTKEEPER_TLS_TIMEOUT: "5s" };
    const expected = { tls: 443, imap: 143, pop3: 110, ftp: 21, mysql: 3306, ldap: 389, xmpp: 5222 };
    const seen: Record<string, number> = {};
    for (const protocol of Object.keys(expected)) {
      const result = await runCli(["check", gone, "--protocol", protocol, "--json"], { env });
      seen[protocol] = JSON.parse(result.stdout).port;
    }
    expect(seen).toEqual(expected);
  });
});
