/** Who calls and what they may do: API keys, authentication, rate limits, the permission rule. */
export { generateApiKey, hashApiKey, keyPrefix, parseApiKey, type NewApiKey } from "./api_key.ts";
export { Authenticator, bearerKey, RevokedKeyError, type Principal } from "./authenticate.ts";
export { authorize, mayWrite } from "./permission.ts";
export {
  MemoryRateLimiter,
  RATE_LIMIT_WINDOW_MS,
  rateLimitHeaders,
  StoreRateLimiter,
  type RateLimiter,
  type RateLimitState,
} from "./rate_limit.ts";
