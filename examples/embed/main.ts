/**
 * An app that embeds certkeeper (no HTTP server): it monitors one certificate, subscribes a webhook
 * channel, lets the background work deliver the notifications, and prints the status and the events.
 *
 *   bun examples/embed/main.ts DOMAIN[:PORT] [WEBHOOK_URL]
 *
 * Settings come from the environment as the server reads them (CERTKEEPER_RESOLVE,
 * CERTKEEPER_ALLOW_PRIVATE_TARGETS, CERTKEEPER_EXTRA_CA_FILE, …). The data lives in memory unless
 * CERTKEEPER_DATABASE_URL names a database.
 */
import { configFromEnv } from "certkeeper";
import { CertkeeperApiError, createCertkeeper, type Certkeeper } from "certkeeper/embed";

const [target, webhookUrl] = process.argv.slice(2);
if (!target) {
  console.error("usage: bun examples/embed/main.ts DOMAIN[:PORT] [WEBHOOK_URL]");
  process.exit(2);
}
const [domain, port] = target.split(":") as [string, string | undefined];

const ck = await createCertkeeper({
  database: process.env.CERTKEEPER_DATABASE_URL || ":memory:",
  config: configFromEnv(process.env),
});

try {
  if (webhookUrl) {
    const channel = await ck.channels.add({ type: "webhook", name: "Example receiver", config: { url: webhookUrl } });
    console.log(`subscribed webhook channel ${channel.id} to ${webhookUrl}`);
    const test = await ck.channels.test(channel.id);
    console.log(`test notification: ${test.status}${test.error ? ` (${test.error})` : ""}`);
  }

  const added = await ck.certificates.add({ domain, ...(port ? { port: Number(port) } : {}) });
  const certificate = await ck.certificates.get(added.id);
  console.log(`certificate ${certificate.domain}:${certificate.port}`);
  console.log(`  status: ${certificate.status}${certificate.statusReason ? ` (${certificate.statusReason})` : ""}`);
  console.log(`  expires: ${certificate.expiresAt}, in ${certificate.daysUntilExpiry} days`);
  console.log(`  issuer: ${certificate.issuer}`);

  // The host decides when certkeeper works in the background: scheduled checks and deliveries.
  await ck.start();
  await settled(ck);

  const { data: events } = await ck.events.list();
  console.log(events.length === 0 ? "events: none" : "events:");
  for (const event of events) {
    const threshold = event.data.threshold === undefined ? "" : ` (threshold ${event.data.threshold} days)`;
    const deliveries = event.deliveries.map((d) => `${d.status}${d.lastError ? `: ${d.lastError}` : ""}`).join(", ");
    console.log(`  ${event.type}${threshold}: ${deliveries || "no channel"}`);
  }
} catch (error) {
  if (!(error instanceof CertkeeperApiError)) throw error;
  // The same code and status the HTTP API would have answered.
  console.error(`certkeeper refused: ${error.code} (${error.status}): ${error.message}`);
  process.exitCode = 1;
} finally {
  await ck.close();
}

/** Waits (up to 10 s) until no delivery is pending: a failing receiver is retried on the configured schedule. */
async function settled(ck: Certkeeper): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const { data } = await ck.events.list();
    if (data.every((event) => event.deliveries.every((d) => d.status !== "pending"))) return;
    await Bun.sleep(100);
  }
}
