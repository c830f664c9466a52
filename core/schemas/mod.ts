/**
 * Every request and resource schema, written once with TypeBox: they validate requests (validate.ts),
 * type the code (`Static<…>`) and generate the OpenAPI document.
 */
export * from "./common.ts";
export * from "./certificate.ts";
export * from "./channel.ts";
export * from "./event.ts";
export * from "./watch.ts";
export * from "./channel_filter.ts";
export * from "./tags.ts";
export * from "./imports.ts";
export * from "./ct_log.ts";
export { expectation, fieldName, refuseNul, rejectUnknownFields, validate, validateQuery } from "./validate.ts";
