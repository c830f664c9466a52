/**
 * STARTTLS (CONTRACT §12): the protocols whose TLS starts after a plain-text upgrade exchange, their
 * default ports, and `upgrade()`, which performs exactly that exchange over a connected socket.
 */
import type net from "node:net";
import { Conversation } from "./_conversation.ts";
import { upgradeSmtp } from "./smtp.ts";
import { upgradeImap } from "./imap.ts";
import { upgradePop3 } from "./pop3.ts";
import { upgradeFtp } from "./ftp.ts";
import { upgradePostgres } from "./postgres.ts";
import { upgradeMysql } from "./mysql.ts";
import { upgradeLdap } from "./ldap.ts";
import { upgradeXmpp } from "./xmpp.ts";

import type { Protocol } from "../base/records.ts";
export { PROTOCOLS, type Protocol } from "../base/records.ts";

/** The port used when an add gives none (CONTRACT §12). */
export const DEFAULT_PORTS: Record<Protocol, number> = {
  tls: 443,
  smtp: 25,
  imap: 143,
  pop3: 110,
  ftp: 21,
  postgres: 5432,
  mysql: 3306,
  ldap: 389,
  xmpp: 5222,
};

const UPGRADES: Record<Exclude<Protocol, "tls">, (c: Conversation, domain: string) => Promise<void>> = {
  smtp: upgradeSmtp,
  imap: upgradeImap,
  pop3: upgradePop3,
  ftp: upgradeFtp,
  postgres: upgradePostgres,
  mysql: upgradeMysql,
  ldap: upgradeLdap,
  xmpp: upgradeXmpp,
};

/**
 * Performs `protocol`'s upgrade exchange on `socket` (connected, plain) for `domain`. Resolves when the
 * server has agreed to start TLS, with the socket paused and ready for the handshake; rejects with a
 * NetFailure (`starttls_refused` when the server does not offer or refuses the upgrade, `tls_error`
 * when it breaks the protocol). It has no deadline of its own: the caller's deadline destroys the
 * socket, which ends the exchange.
 */
export async function upgrade(protocol: Exclude<Protocol, "tls">, socket: net.Socket, options: { domain: string; label: string }): Promise<void> {
  const conversation = new Conversation(socket, options.label);
  await UPGRADES[protocol](conversation, options.domain);
  conversation.release();
}

export { MAX_EXCHANGE, MAX_REPLY } from "./_conversation.ts";
