/**
 * Something opened at its first use (a library loaded, a transport made): one attempt shared by every
 * caller meanwhile, kept once it succeeds; a failure is not kept, so the next use tries again.
 */
export function openedOnce<T>(open: () => Promise<T>): { get(): Promise<T>; ifOpened(): Promise<T> | undefined } {
  let opened: Promise<T> | undefined;
  return {
    get: () =>
      (opened ??= open().catch((error: unknown) => {
        opened = undefined;
        throw error;
      })),
    ifOpened: () => opened,
  };
}
