/** Notifications: the transport ports, the payloads per channel type, and the delivery worker. */
export type { EmailMessage, EmailTransport, HttpResult, HttpTransport, OutgoingHttpRequest, Transports } from "./ports.ts";
export { Deliverer } from "./deliverer.ts";
export { newSigningSecret, signWebhook } from "./webhook_signature.ts";
export { unresolvedByFilter } from "./pagerduty_payload.ts";
export { eventSummary } from "./_describe.ts";
