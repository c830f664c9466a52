/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): a `whsec_` secret, and a
 * `webhook-signature` of `v1,` + base64 HMAC-SHA256 over `id.timestamp.body`.
 */
import { createHmac, randomBytes } from "node:crypto";

const PREFIX = "whsec_";

/** A fresh signing secret: `whsec_` and the base64 of 24 random bytes. */
export function newSigningSecret(): string {
  return PREFIX + randomBytes(24).toString("base64");
}

export interface SignWebhookInput {
  /** `whsec_…` (the prefix is optional, as the specification's libraries accept both). */
  secret: string;
  /** The `webhook-id` header: the event id. */
  id: string;
  /** The `webhook-timestamp` header: Unix seconds. */
  timestamp: number;
  /** The exact body that is sent. */
  body: string;
}

/**
 * The `webhook-signature` header value for one delivery.
 *
 * @example
 * signWebhook({ secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
 *   timestamp: 1614265330, body: '{"test": 2432232314}' });
 * // "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
 */
export function signWebhook(input: SignWebhookInput): string {
  const encoded = input.secret.startsWith(PREFIX) ? input.secret.slice(PREFIX.length) : input.secret;
  const key = Buffer.from(encoded, "base64");
  if (key.length === 0) throw new Error("The webhook signing secret is empty");
  const mac = createHmac("sha256", key).update(`${input.id}.${input.timestamp}.${input.body}`, "utf8");
  return `v1,${mac.digest("base64")}`;
}
