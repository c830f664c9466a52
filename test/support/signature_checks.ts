/**
 * How many signatures WebCrypto is asked to verify while `run` runs: what bounds the cost of judging a
 * hostile chain, counted rather than timed (time moves with the machine's load).
 */
export async function signatureChecks<T>(run: () => Promise<T>): Promise<{ result: T; checks: number }> {
  const subtle = globalThis.crypto.subtle;
  const verify = subtle.verify;
  let checks = 0;
  subtle.verify = ((...args: Parameters<typeof verify>) => {
    checks++;
    return verify.apply(subtle, args);
  }) as typeof verify;
  try {
    return { result: await run(), checks };
  } finally {
    subtle.verify = verify;
  }
}
