/**
 * The one request pipeline every face calls: principal → rate limit → permission → validation of
 * path, query and body → the operation → the envelope.
 *
 * @example
 * const outcome = await runOperation(services, { operation: getCertificate, caller: { kind: "api_key", authorization }, params: { id } });
 * const { status, json } = envelopeJson(outcome, requestId); // or envelope(): the body as a value
 */
export {
  admit,
  callerFields,
  callOperation,
  envelope,
  envelopeJson,
  principalOf,
  runOperation,
  type Actor,
  type Call,
  type Caller,
  type Outcome,
} from "./pipeline.ts";
