/**
 * The ground floor: the records certkeeper keeps, its closed table of error codes, ids, the clock,
 * logs and the leased work loop. Imports nothing else of core.
 */
export * from "./records.ts";
export {
  asCertkeeperError,
  CertkeeperError,
  ERROR_STATUS,
  errorBody,
  INTERNAL_ERROR_MESSAGE,
  MAX_BODY_DEPTH,
  nestedDeeperThan,
  quote,
  type ErrorBody,
  type ErrorCode,
  type PublicErrorCode,
} from "./errors.ts";
export { BASE62, isId, newId, randomBase62, type IdPrefix } from "./ids.ts";
export { nameKey } from "./names.ts";
export { DAY, dayCount, daysAgo, daysLeft, daysUntil, HOUR, relativeDays, iso, MINUTE, parseDuration, SECOND, systemClock, type Clock } from "./time.ts";
export { createLogger, nameShown, printable, silentLogger, type LogFields, type LogFormat, type Logger, type LoggerOptions, type LogLevel } from "./log.ts";
export { logEventsRaised } from "./journal.ts";
export { WorkLoop, type LastStep, type WorkLoopOptions, type WorkSource } from "./work_loop.ts";
