/**
 * certkeeper's core, as the package `certkeeper` exports it: what an adapter needs to build on it.
 * createCore builds the services, the request pipeline and the background work from a config and a
 * store; the operations, schemas and error codes are the API's contract; the store, transport and
 * clock interfaces are the ports adapters fill. Ready-made faces live beside it: `certkeeper/elysia`
 * (the HTTP server) and `certkeeper/embed` (the operations as functions in your app).
 *
 * Nothing here touches the network or a database by itself until an adapter hands it a store and
 * transports.
 *
 * @example
 * import { configFromEnv, createCore, buildOpenApiDocument, OPERATIONS } from "certkeeper";
 * import { startServer } from "certkeeper/elysia";
 *
 * const config = configFromEnv(process.env); // CONTRACT §1's variables
 * const server = await startServer(config);
 * const openApi = buildOpenApiDocument(OPERATIONS, { version: "1.0.0" });
 */

// Building a core
export { createCore, type Core, type CoreOptions } from "./app/mod.ts";
export {
  configFromEnv,
  ConfigError,
  DEFAULT_CONFIG,
  DEFAULT_DELIVERY_RETRY,
  type Config,
  type LogLevel,
} from "./config/mod.ts";
export { parseResolveRules, type ResolveRule } from "./config/mod.ts";
export { TrustStore } from "./tls/mod.ts";
export { createLogger, silentLogger, type Logger, type LogFields } from "./base/mod.ts";
export { systemClock, parseDuration, type Clock } from "./base/mod.ts";
export { Admin, PLANS, ROLES, type PasswordHasher, type ApiKeyView } from "./accounts/mod.ts";

// The API: operations, schemas, errors, the OpenAPI document
export { OPERATIONS, type Operation, type OperationContext, type OperationInput, type OperationResult, type TypedOperation } from "./operations/mod.ts";
export type { Api } from "./http/mod.ts";
export { envelope, runOperation, type Actor, type Call, type Caller, type Outcome } from "./pipeline/mod.ts";
export type { Principal } from "./auth/mod.ts";
export {
  CertkeeperError,
  ERROR_STATUS,
  errorBody,
  type ErrorBody,
  type ErrorCode,
  type PublicErrorCode,
} from "./base/mod.ts";
export {
  AddCertificateBody,
  Certificate,
  CertificateStatus,
  CheckedCertificate,
  CreatedCertificate,
  ListCertificatesQuery,
  PatchCertificateBody,
  type CertificateView,
  type CheckedCertificateView,
  type CreatedCertificateView,
} from "./schemas/mod.ts";
export {
  AddChannelBody,
  Channel,
  ChannelTestResult,
  Delivery,
  Event,
  PatchChannelBody,
  type ChannelView,
} from "./schemas/mod.ts";
export { DeleteResult, Envelope, ErrorEnvelope, ListEnvelope } from "./schemas/mod.ts";
export { buildOpenApiDocument, type OpenApiDocument, type OpenApiOptions } from "./openapi/mod.ts";
export { CERTIFICATE_STATUSES, DEFAULT_ALERT_THRESHOLDS } from "./certificates/mod.ts";

// Ports adapters implement, and the records they hold
export type { Store } from "./store/mod.ts";
export type { Transports, HttpTransport, EmailTransport } from "./notify/mod.ts";
export { PLAN_LIMITS, type Limits, type Mode, type Plan, type Role, type Scope } from "./base/mod.ts";
