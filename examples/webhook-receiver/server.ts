/**
 * A webhook receiver that accepts certkeeper's deliveries only when their Standard Webhooks signature
 * verifies with the channel's signing secret, and refuses forged, altered or replayed ones.
 *
 *   WEBHOOK_SECRET=whsec_… [PORT=8787] [HOST=127.0.0.1] bun examples/webhook-receiver/server.ts
 *
 * It prints one line per request: `accepted <event id> <type> <domain>` or `refused: <reason>`.
 */
import { Webhook, WebhookVerificationError } from "standardwebhooks";

/** The body certkeeper posts (CONTRACT §7). */
interface CertkeeperWebhook {
  id: string;
  type: string;
  createdAt: string;
  data: { certificate?: { domain: string; status: string; daysUntilExpiry: number }; threshold?: number };
}

/** A fetch handler: 204 for a verified delivery, 401 for anything whose signature does not verify. */
export function createReceiver(secret: string, log: (line: string) => void = console.log): (request: Request) => Promise<Response> {
  const webhook = new Webhook(secret);
  return async (request) => {
    if (request.method !== "POST") return new Response("POST webhooks here\n", { status: 405, headers: { allow: "POST" } });
    // Verify the exact bytes received: parsing and re-serialising first would break the signature.
    const body = await request.text();
    let event: CertkeeperWebhook;
    try {
      // Checks the HMAC over "id.timestamp.body" and that the timestamp is within 5 minutes (no replays).
      event = webhook.verify(body, Object.fromEntries(request.headers)) as CertkeeperWebhook;
    } catch (error) {
      const reason = error instanceof WebhookVerificationError ? error.message : "unreadable request";
      log(`refused: ${reason}`);
      return Response.json({ error: reason }, { status: 401 });
    }
    const certificate = event.data.certificate;
    log(`accepted ${event.id} ${event.type}${certificate ? ` ${certificate.domain} ${certificate.status}` : ""}`);
    return new Response(null, { status: 204 });
  };
}

if (import.meta.main) {
  const secret = process.env.WEBHOOK_SECRET;
  if (!secret?.startsWith("whsec_")) {
    console.error("Set WEBHOOK_SECRET to the channel's signing secret (whsec_…), shown once when the webhook channel was created.");
    process.exit(2);
  }
  const server = Bun.serve({
    hostname: process.env.HOST ?? "127.0.0.1",
    port: Number(process.env.PORT ?? 8787),
    fetch: createReceiver(secret),
  });
  console.log(`listening on http://${server.hostname}:${server.port}/`);
  process.on("SIGTERM", () => server.stop().then(() => process.exit(0)));
}
