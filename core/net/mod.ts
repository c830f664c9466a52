/** Reaching targets: name resolution with overrides, the private-address guard, guarded connects. */
export { hostPort, isLoopbackAddress, refusedAddressReason } from "./address_policy.ts";
export { ConnectionBudget, type Connections } from "./connection_budget.ts";
export { connectGuarded, type ConnectOptions } from "./connect.ts";
export { deadline, preciseNow, type Deadline, type DeadlineOptions } from "./deadline.ts";
export { NetFailure, resolveVetted, type ResolvedAddress, type ResolverOptions } from "./resolver.ts";
export { retryAfterMs } from "./retry_after.ts";
export { httpHref } from "./http_href.ts";
export { isEmailAddress } from "./email_address.ts";
export { FetchFailure, type FetchLimits, type FetchRequest, type FetchResult, type HttpFetcher } from "./http_fetch.ts";
export { addressBlock } from "./address_block.ts";
